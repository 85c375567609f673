import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { formatDate } from '../lib/format';
import { confirmDialog } from '../ui/dialogs';
import { Button, Dialog, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import { CellDisplay, type PeopleDirectory } from '../table/cells';
import type { ShownVersion, Version, VersionDiff } from '../../../src/model/schemas/versions';
import type { ColumnDef } from '../../../src/model/table/types';
import type { Surface } from '../workspace-context/types';
import type { WorkspaceContext } from '../workspace-context/context';
import type { ShownDoc } from '../doc/version-view';
import { compareDocBlocks, compareSheetRows, type ComparedCell } from './version-compare';

/** How the list and the dialog name a version: its name, else when it was made. */
export function versionLabel(version: Version): string {
  return version.name ?? formatDate(version.createdAt);
}

/** The sheet side of a shown version. */
type ShownSheet = Extract<ShownVersion, { rows: unknown }>;
type Row = ShownSheet['rows'][number];

const SHOWN_ROWS = 200;
/** The older side of a sheet comparison: enough rows for the unchanged cells of changed rows (the API's page limit). */
const COMPARED_ROWS = 10_000;

/** `current` or a version id, as the compare menu holds it; '' shows the version alone. */
type Other = '' | 'current' | string;

type Loaded =
  | { mode: 'doc'; content: unknown }
  | { mode: 'html'; html: string }
  | { mode: 'sheet'; columns: ColumnDef[]; rows: Row[]; more: boolean }
  | { mode: 'compare'; from: string; to: string; diff: VersionDiff; older: ShownVersion | null };

/**
 * One version of the open surface in a dialog: shown as the surface is
 * shown (a doc rendered, a table as a grid, a page in a sandboxed frame),
 * or compared with any other version or the current state (docs by blocks,
 * tables by rows and cells), and restored after the app's own confirmation.
 */
export function VersionDialog(props: { context: WorkspaceContext; surface: Surface; base: string; versions: Version[]; version: Version; onClose: () => void; onRestored: () => void }) {
  const { version, versions, base, surface } = props;
  const [other, setOther] = useState<Other>('');
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    setLoaded(null);
    let closed = false;
    load(base, surface, version, versions, other).then((answer) => !closed && setLoaded(answer), showError);
    return () => {
      closed = true;
    };
  }, [version.id, other]);

  const what = surface.kind === 'table' ? 'table' : surface.kind === 'html' ? 'page' : 'doc';
  const restore = async () => {
    const confirmed = await confirmDialog({
      title: 'Restore this version?',
      message: `The ${what} goes back to how it was (${versionLabel(version)}), for everyone at once. Nothing is lost: the current state stays in the history, and restoring it undoes this.`,
      confirmLabel: 'Restore',
    });
    if (!confirmed) return;
    setBusy(true);
    try {
      await api('POST', `${base}/${encodeURIComponent(version.id)}/restore`);
      showToast('Version restored');
      props.onRestored();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      title={`${version.name ? `“${version.name}”` : 'Version'} · ${formatDate(version.createdAt)}`}
      large
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Close
          </Button>
          {props.context.abilities.edit && (
            <Button variant="primary" icon="undo" busy={busy} onClick={restore}>
              Restore this version
            </Button>
          )}
        </>
      }
    >
      <div class="version-view">
        <div class="version-toolbar">
          <label class="version-compare">
            <span>Compare with</span>
            <select value={other} onChange={(event) => setOther((event.target as HTMLSelectElement).value)}>
              <option value="">Nothing: show this version</option>
              <option value="current">The current {what}</option>
              {versions
                .filter((candidate) => candidate.id !== version.id)
                .map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>
                    {versionLabel(candidate)} · {candidate.createdBy.name}
                  </option>
                ))}
            </select>
          </label>
          {loaded?.mode === 'compare' && <ComparisonLegend from={loaded.from} to={loaded.to} versions={versions} what={what} />}
        </div>
        <div class="version-body">{!loaded ? <Spinner /> : <LoadedView loaded={loaded} context={props.context} />}</div>
      </div>
    </Dialog>
  );
}

/** What the dialog shows: the version, or the comparison from the older of the two sides to the newer. */
async function load(base: string, surface: Surface, version: Version, versions: Version[], other: Other): Promise<Loaded> {
  const path = (id: string, query = '') => `${base}/${encodeURIComponent(id)}${query}`;
  if (!other) {
    const shown = await api<ShownVersion>('GET', path(version.id, surface.kind === 'table' ? `?limit=${SHOWN_ROWS}` : ''));
    if ('rows' in shown) return { mode: 'sheet', columns: shown.columns as ColumnDef[], rows: shown.rows, more: shown.nextCursor !== null };
    if ('html' in shown) return { mode: 'html', html: shown.html };
    return { mode: 'doc', content: 'content' in shown ? shown.content : null };
  }
  // Newest first in the list: the one further down is the older side; the current state is newer than any.
  const rank = (id: string) => (id === 'current' ? -1 : versions.findIndex((candidate) => candidate.id === id));
  const [from, to] = rank(other) > rank(version.id) ? [other, version.id] : [version.id, other];
  const diff = await api<VersionDiff>('GET', path(from, `/diff?to=${encodeURIComponent(to)}`));
  const older = surface.kind === 'html' ? null : await api<ShownVersion>('GET', path(from, surface.kind === 'table' ? `?limit=${COMPARED_ROWS}` : ''));
  return { mode: 'compare', from, to, diff, older };
}

function ComparisonLegend(props: { from: string; to: string; versions: Version[]; what: string }) {
  const name = (id: string) => {
    if (id === 'current') return `the current ${props.what}`;
    const found = props.versions.find((candidate) => candidate.id === id);
    return found ? versionLabel(found) : 'another version';
  };
  return (
    <p class="version-legend">
      From {name(props.from)} to {name(props.to)}: <span class="diff-key diff-key-removed">removed</span> <span class="diff-key diff-key-added">added</span>
    </p>
  );
}

function LoadedView(props: { loaded: Loaded; context: WorkspaceContext }) {
  const { loaded } = props;
  const people = useMemo(() => peopleOf(props.context), [props.context.members]);
  switch (loaded.mode) {
    case 'doc':
      return <DocView source={loaded} show={(mount, module) => module.showDocVersion(mount, loaded.content)} />;
    case 'html':
      // Sanitised by the server; shown without scripts.
      return <iframe class="history-html" sandbox="" srcdoc={loaded.html} title="Page as it was" />;
    case 'sheet':
      return <SheetView columns={loaded.columns.map((column) => ({ ...column, change: 'same' as const }))} rows={loaded.rows.map((row) => ({ id: row.id, change: 'same' as const, cells: sameCells(row.data) }))} people={people} note={loaded.more ? `The first ${SHOWN_ROWS} rows` : null} />;
    case 'compare':
      return <ComparisonView loaded={loaded} people={people} />;
  }
}

function ComparisonView(props: { loaded: Extract<Loaded, { mode: 'compare' }>; people: PeopleDirectory }) {
  const { diff, older } = props.loaded;
  const body = diff.diff;
  if (diff.changes.added + diff.changes.removed + diff.changes.changed === 0 && !diff.changes.columnsChanged) return <p class="version-same">No differences: both are the same.</p>;
  if (body.kind === 'doc') {
    const blocks = compareDocBlocks(older && 'content' in older ? older.content : null, body);
    return <DocView source={props.loaded} show={(mount, module) => module.showComparedDoc(mount, blocks)} />;
  }
  if (body.kind === 'html') {
    return (
      <ol class="version-lines">
        {body.lines.flatMap((line, i) => [
          ...(line.before !== undefined ? [<li key={`${i}-`} class="diff-removed">{line.before}</li>] : []),
          ...(line.after !== undefined ? [<li key={`${i}+`} class="diff-added">{line.after}</li>] : []),
        ])}
      </ol>
    );
  }
  const sheet = older && 'rows' in older ? older : { columns: [], rows: [] };
  const compared = compareSheetRows(sheet.columns as ColumnDef[], sheet.rows, body);
  const note = [compared.unchanged > 0 && `${compared.unchanged} unchanged row${compared.unchanged === 1 ? '' : 's'} not shown`, body.reordered && 'rows were reordered'].filter(Boolean).join('; ');
  return <SheetView columns={compared.columns} rows={compared.rows} people={props.people} note={note || null} />;
}

type DocModule = typeof import('../doc/version-view');

/** A doc drawn by the doc module, loaded when a doc is first shown (the history panel does not carry the editor's code). */
function DocView(props: { source: unknown; show: (mount: HTMLElement, module: DocModule) => ShownDoc }) {
  const mount = useRef<HTMLDivElement>(null);
  const [module, setModule] = useState<DocModule | null>(null);
  useEffect(() => {
    void import('../doc/version-view').then(setModule, showError);
  }, []);
  useLayoutEffect(() => {
    if (!module || !mount.current) return;
    const shown = props.show(mount.current, module);
    return () => shown.destroy();
  }, [module, props.source]);
  return (
    <div class="version-doc" ref={mount}>
      {!module && <Spinner />}
    </div>
  );
}

function sameCells(data: Record<string, unknown>): Record<string, ComparedCell> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, { value, change: 'same' as const }]));
}

function SheetView(props: {
  columns: Array<ColumnDef & { change: 'same' | 'added' | 'removed' }>;
  rows: Array<{ id: string; change: 'same' | 'added' | 'removed' | 'changed'; cells: Record<string, ComparedCell> }>;
  people: PeopleDirectory;
  note: string | null;
}) {
  const shown = (column: ColumnDef, value: unknown) =>
    column.type === 'checkbox' ? (value === true ? '✓' : '') : <CellDisplay column={column} value={value as never} people={props.people} />;
  return (
    <div class="version-sheet">
      <table>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th key={column.id} class={column.change === 'same' ? '' : `diff-column-${column.change}`}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.id} data-row-id={row.id} class={row.change === 'same' ? '' : `diff-row diff-row-${row.change}`}>
              {props.columns.map((column) => {
                const cell = row.cells[column.key];
                if (!cell) return <td key={column.id} />;
                if (cell.change === 'same') return <td key={column.id}>{shown(column, cell.value)}</td>;
                return (
                  <td key={column.id} class="diff-cell" data-key={column.key}>
                    {cell.before !== undefined && <del class="diff-cell-before">{shown(column, cell.before)}</del>}
                    {cell.after !== undefined && <ins class="diff-cell-after">{shown(column, cell.after)}</ins>}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      {props.note && <p class="history-meta">{props.note}</p>}
    </div>
  );
}

/** Names for person cells: the workspace's members and the agents acting for them. */
function peopleOf(context: WorkspaceContext): PeopleDirectory {
  const people: PeopleDirectory = new Map();
  for (const { principal, principalType, inheritedAgents } of context.members) {
    people.set(principal.id, { id: principal.id, name: principal.name, avatarUrl: principal.avatarUrl, kind: principalType });
    for (const agent of inheritedAgents ?? []) people.set(agent.id, { id: agent.id, name: agent.name, avatarUrl: agent.avatarUrl, kind: 'agent' });
  }
  return people;
}
