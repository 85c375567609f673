/**
 * CSV in and out of the sheet on screen: a "CSV" toolbar menu (import a
 * file, export what is on screen), and a file dropped anywhere on the table. Before
 * anything is written, a preview shows where each header goes (an existing
 * column, or a new one with the type the server will infer: the same
 * src/model/table/csv.ts decides both) and the first rows; the import itself
 * is the server's `POST /rows/import`, and the rows arrive over sync.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { addToColumnStats, emptyColumnStats, inferColumnType, mapCsvHeaders, type HeaderTarget } from '../../../src/model/table/csv';
import { api, ApiError, messageOf } from '../lib/api';
import { downloadFrom } from '../lib/download';
import { Button, Dialog, Menu } from '../ui/primitives';
import { showToast } from '../ui/toast';
import { TYPE_LABELS } from './cells';
import type { ColumnDef, ColumnType } from './table-model';

/** Rows the preview shows. */
const PREVIEW_ROWS = 5;
/** The server's upload limit for an import. */
const MAX_BYTES = 25 * 1024 * 1024;

type Preview = {
  file: File;
  headers: string[];
  targets: Array<HeaderTarget & { type: ColumnType | string }>;
  rows: string[][];
  total: number;
  problems: string[];
};

type Report = { imported: number; refused: number; columnsCreated: string[]; errors: Array<{ line: number; message: string }> };

/**
 * What an export holds: the view on show (the server reads its filter, sort
 * and visible columns), or the plain grid's visible columns in their order.
 */
export type ExportScope = { viewId: string } | { columns: readonly string[] };

export function CsvTools(props: { workspaceId: string; surface: { id: string; slug: string }; columns: ColumnDef[]; shown: ExportScope; editable: boolean }) {
  const { workspaceId, surface, columns, editable } = props;
  const anchor = useRef<HTMLSpanElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [dropping, setDropping] = useState(false);
  const columnsRef = useRef(columns);
  columnsRef.current = columns;

  const open = async (file: File) => {
    try {
      setPreview(await previewOf(file, columnsRef.current));
    } catch (error) {
      showToast(`That file cannot be read as CSV: ${messageOf(error)}`, 'error');
    }
  };

  // Files dropped on the table (the surface this toolbar belongs to) open the preview.
  useEffect(() => {
    const surfaceElement = anchor.current?.closest<HTMLElement>('.table-surface');
    if (!surfaceElement || !editable) return;
    const carriesFile = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes('Files');
    const over = (event: DragEvent) => {
      if (!carriesFile(event)) return;
      event.preventDefault();
      setDropping(true);
    };
    const leave = (event: DragEvent) => {
      if (!surfaceElement.contains(event.relatedTarget as Node | null)) setDropping(false);
    };
    const drop = (event: DragEvent) => {
      if (!carriesFile(event)) return;
      event.preventDefault();
      setDropping(false);
      const file = event.dataTransfer?.files[0];
      if (file) void open(file);
    };
    surfaceElement.addEventListener('dragover', over);
    surfaceElement.addEventListener('dragleave', leave);
    surfaceElement.addEventListener('drop', drop);
    return () => {
      surfaceElement.removeEventListener('dragover', over);
      surfaceElement.removeEventListener('dragleave', leave);
      surfaceElement.removeEventListener('drop', drop);
    };
  }, [editable]);

  useEffect(() => {
    anchor.current?.closest('.table-surface')?.classList.toggle('is-dropping-csv', dropping);
  }, [dropping]);

  // The file people open in a spreadsheet (docs/TABLES.md "Export"): labels, a BOM, formulas neutralized, what is on screen.
  // An empty name lets the server's Content-Disposition name it after the view or the table.
  const exportCsv = () => {
    const query = new URLSearchParams({ surface: surface.slug, headers: 'labels', bom: 'true', neutralize: 'formulas' });
    if ('viewId' in props.shown) query.set('view', props.shown.viewId);
    else query.set('fields', props.shown.columns.join(','));
    downloadFrom(`/api/workspaces/${encodeURIComponent(workspaceId)}/rows.csv?${query}`, '');
  };

  return (
    <span ref={anchor} class="csv-tools">
      <Button variant="ghost" icon="download" data-testid="csv-menu" onClick={() => setMenuOpen(true)}>
        CSV
      </Button>
      <input
        ref={input}
        type="file"
        accept=".csv,text/csv"
        hidden
        data-testid="csv-file"
        onChange={(event) => {
          const file = (event.target as HTMLInputElement).files?.[0];
          (event.target as HTMLInputElement).value = '';
          if (file) void open(file);
        }}
      />
      {menuOpen && anchor.current && (
        <Menu
          anchor={anchor.current}
          align="right"
          onClose={() => setMenuOpen(false)}
          items={[
            { label: 'Import CSV…', icon: 'upload', disabled: !editable, hint: editable ? 'or drop a file on the table' : 'read only', onSelect: () => input.current?.click() },
            { label: 'Export CSV', icon: 'download', onSelect: exportCsv },
          ]}
        />
      )}
      {preview && <ImportDialog preview={preview} workspaceId={workspaceId} surfaceSlug={surface.slug} onClose={() => setPreview(null)} />}
    </span>
  );
}

/** The whole file is read for the types (as the server reads it); the preview shows its first rows. */
async function previewOf(file: File, columns: ColumnDef[]): Promise<Preview> {
  if (file.size > MAX_BYTES) throw new Error('it is over 25 MB; split it');
  // The parser (about 20 KB gzipped) comes with the first file, not with every table page.
  const [text, { parse }] = await Promise.all([file.text(), import('csv-parse/browser/esm/sync')]);
  // Lenient here: the server reports each bad line by number, the preview only has to show the shape.
  const records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, relax_quotes: true }) as string[][];
  const headers = records[0] ?? [];
  if (headers.length === 0) throw new Error('it has no header row');
  const { targets, problems } = mapCsvHeaders(headers, columns);
  const stats = headers.map(() => emptyColumnStats());
  for (const record of records.slice(1)) record.forEach((field, i) => stats[i] && addToColumnStats(stats[i], field));
  const byKey = new Map(columns.map((column) => [column.key, column]));
  return {
    file,
    headers,
    targets: targets.map((target, i) => ({ ...target, type: target.kind === 'column' ? (byKey.get(target.key)?.type ?? 'text') : target.kind === 'new' ? inferColumnType(stats[i]!).type : 'id' })),
    rows: records.slice(1, 1 + PREVIEW_ROWS),
    total: records.length - 1,
    problems: problems.map((p) => p.message),
  };
}

function ImportDialog(props: { preview: Preview; workspaceId: string; surfaceSlug: string; onClose: () => void }) {
  const { preview } = props;
  const [busy, setBusy] = useState(false);
  // `overCap`: the file has more rows than the plan's row cap leaves room for (402); partial=true imports those that fit.
  const [failed, setFailed] = useState<{ message: string; lines: Array<{ line: number; message: string }>; overCap: boolean } | null>(null);
  const [report, setReport] = useState<Report | null>(null);

  const submit = async (partial: boolean) => {
    setBusy(true);
    const form = new FormData();
    form.append('file', preview.file, preview.file.name || 'import.csv');
    try {
      const result = await api<Report>('POST', `/api/workspaces/${encodeURIComponent(props.workspaceId)}/rows/import?surface=${encodeURIComponent(props.surfaceSlug)}${partial ? '&partial=true' : ''}`, form);
      setFailed(null);
      setReport(result);
      if (result.errors.length === 0) {
        showToast(`Imported ${result.imported.toLocaleString()} ${result.imported === 1 ? 'row' : 'rows'}.`, 'success');
        props.onClose();
      }
    } catch (error) {
      const details = error instanceof ApiError && Array.isArray(error.details) ? (error.details as Array<{ path?: string[]; message: string }>) : [];
      const lines = details.flatMap((d) => (d.path?.[0] === 'line' ? [{ line: Number(d.path[1]), message: d.message }] : []));
      setFailed({ message: messageOf(error), lines, overCap: error instanceof ApiError && error.status === 402 });
    } finally {
      setBusy(false);
    }
  };

  const columnLabel = (target: Preview['targets'][number]) => {
    const type = TYPE_LABELS[target.type as ColumnType]?.label ?? target.type;
    if (target.kind === 'id') return 'Row id';
    if (target.kind === 'column') return `${target.key} (${type})`;
    return `New column “${target.label}” · ${type}`;
  };

  return (
    <Dialog
      title={`Import ${preview.file.name || 'CSV'}`}
      wide
      onClose={props.onClose}
      footer={
        report ? (
          <Button variant="primary" onClick={props.onClose}>
            Done
          </Button>
        ) : (
          <>
            <Button variant="ghost" onClick={props.onClose}>
              Cancel
            </Button>
            {failed && (failed.lines.length > 0 || failed.overCap) && (
              <Button onClick={() => void submit(true)} busy={busy} data-testid="csv-import-partial">
                {failed.overCap ? 'Import the rows that fit' : 'Import the good lines'}
              </Button>
            )}
            <Button variant="primary" busy={busy} disabled={preview.problems.length > 0} onClick={() => void submit(false)} data-testid="csv-import-confirm">
              Import {preview.total.toLocaleString()} {preview.total === 1 ? 'row' : 'rows'}
            </Button>
          </>
        )
      }
    >
      <div class="csv-import" data-testid="csv-preview">
        {preview.problems.map((problem) => (
          <p class="form-error" role="alert" key={problem}>
            {problem}
          </p>
        ))}
        <h3>Columns</h3>
        <table class="csv-mapping">
          <tbody>
            {preview.headers.map((header, i) => (
              <tr key={i} data-testid="csv-mapping-row">
                <td>{header}</td>
                <td aria-hidden="true">→</td>
                <td class={preview.targets[i]?.kind === 'new' ? 'csv-new' : ''}>{columnLabel(preview.targets[i]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <h3>First rows</h3>
        <div class="csv-sample">
          <table>
            <thead>
              <tr>
                {preview.headers.map((header, i) => (
                  <th key={i}>{header}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {preview.rows.map((row, r) => (
                <tr key={r}>
                  {preview.headers.map((_, i) => (
                    <td key={i}>{row[i] ?? ''}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {failed && (
          <div class="form-error" role="alert" data-testid="csv-import-errors">
            <p>{failed.message}</p>
            <ul>
              {failed.lines.slice(0, 20).map((line) => (
                <li key={line.line}>
                  Line {line.line}: {line.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        {report && (
          <div data-testid="csv-import-report">
            <p>
              Imported {report.imported.toLocaleString()} rows{report.refused > 0 ? '; the rest were not imported: the workspace reached its plan’s row cap' : ''}.
            </p>
            <ul>
              {report.errors.slice(0, 20).map((line) => (
                <li key={line.line}>
                  Line {line.line}: {line.message}
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </Dialog>
  );
}
