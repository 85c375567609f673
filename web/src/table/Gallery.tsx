import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { CellDisplay, type PeopleDirectory } from './cells';
import type { ColumnDef, ReadRowData, ShownValue, TableModel } from './table-model';
import { cellText } from './view-items';

/** Cards drawn at once; the rest are counted (a gallery of thousands of rows stays quick to draw). */
const CARDS = 300;

type AttachmentRead = { fileId: string; contentType: string; url: string; thumbnailUrl?: string };

/**
 * A gallery view (docs/TABLES.md "Gallery"): each row a card, its cover the
 * first image of the view's cover column (an attachment cell's first image,
 * or the image a URL cell names), the view's card fields under its title.
 * The document holds an attachment cell as file ids; their images come from
 * the rows REST reads, which present each file with its thumbnail, fetched
 * again whenever a cover cell changes.
 */
export function Gallery(props: {
  model: TableModel;
  workspaceId: string;
  viewId: string;
  coverColumn: ColumnDef | null;
  cardFields: ColumnDef[];
  /** The view's shown columns, in its order: the first one is the card's title. */
  columns: ColumnDef[];
  rowIds: readonly string[];
  version: number;
  people: PeopleDirectory;
  onCardMenu: (rowId: string, anchor: HTMLElement) => void;
}) {
  const { model, coverColumn } = props;
  const shown = props.rowIds.slice(0, CARDS);
  const rows = shown.map((rowId) => [rowId, model.row(rowId)] as const).filter((entry): entry is readonly [string, ReadRowData] => entry[1] !== null);
  const attachmentCover = coverColumn?.type === 'attachment' ? coverColumn : null;
  // What the covers depend on: the file ids in the cover cells, so a file added or removed anywhere fetches again.
  const coverKey = attachmentCover ? JSON.stringify(rows.map(([rowId, data]) => [rowId, data[attachmentCover.key] ?? null])) : '';
  const [images, setImages] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    if (!attachmentCover || rows.length === 0) return setImages(new Map());
    let current = true;
    const query = new URLSearchParams({ view: props.viewId, fields: attachmentCover.key, limit: '1000' });
    api<{ rows: Array<{ id: string; data: Record<string, unknown> }> }>('GET', `/api/workspaces/${encodeURIComponent(props.workspaceId)}/rows?${query}`)
      .then((answer) => {
        if (!current) return;
        const found = new Map<string, string>();
        for (const row of answer.rows) {
          const files = (row.data[attachmentCover.key] ?? []) as AttachmentRead[];
          const image = files.find((file) => file.thumbnailUrl || file.contentType.startsWith('image/'));
          if (image) found.set(row.id, sameOrigin(image.thumbnailUrl ?? image.url));
        }
        setImages(found);
      })
      .catch(() => {
        // No covers this time (offline, say): the cards still show.
      });
    return () => {
      current = false;
    };
  }, [coverKey, props.viewId, props.workspaceId]);

  const titleColumn = props.columns[0];
  return (
    <div class="gallery" role="list" aria-label="Gallery">
      {rows.map(([rowId, data]) => {
        const cover = coverColumn?.type === 'url' ? urlImage(data[coverColumn.key]) : images.get(rowId);
        const title = cellText(titleColumn ? data[titleColumn.key] : undefined);
        return (
          <article
            key={rowId}
            class="gallery-card"
            role="listitem"
            data-row-id={rowId}
            tabIndex={0}
            aria-label={title || 'Untitled'}
            onContextMenu={(event) => {
              event.preventDefault();
              props.onCardMenu(rowId, event.currentTarget as HTMLElement);
            }}
          >
            <div class="gallery-cover">{cover ? <img src={cover} alt="" loading="lazy" /> : <span class="gallery-no-cover" aria-hidden="true" />}</div>
            <div class="gallery-card-title">{title || <span class="muted">Untitled</span>}</div>
            {props.cardFields.length > 0 && (
              <dl class="gallery-card-fields">
                {props.cardFields
                  .filter((column) => column.key !== titleColumn?.key)
                  .map((column) => (
                    <div key={column.key} class="gallery-card-field" data-key={column.key}>
                      <dt>{column.label}</dt>
                      <dd>{column.type === 'checkbox' ? (data[column.key] === true ? 'Yes' : 'No') : <CellDisplay column={column} value={data[column.key]} people={props.people} />}</dd>
                    </div>
                  ))}
              </dl>
            )}
          </article>
        );
      })}
      {props.rowIds.length > CARDS && <p class="muted gallery-more">and {(props.rowIds.length - CARDS).toLocaleString()} more</p>}
    </div>
  );
}

/** A file URL as this page reaches it: the server names its public address, the browser may come through another origin. */
function sameOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

function urlImage(value: ShownValue | undefined): string | undefined {
  return typeof value === 'string' && /^https?:\/\//i.test(value) ? value : undefined;
}

