import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { timeAgo } from '../lib/format';
import { useStore } from '../lib/store';
import { Icon } from '../ui/icons';
import { Avatar, Button, Dialog, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { WorkspaceContext } from '../workspace-context/context';
import { highlightOf, runHighlight } from '../workspace-context/run-highlight';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import type { RevertResult as Revert, RunChanges, RunList, RunRecord } from '../../../src/model/schemas/runs';

const RUN_EVENTS = new Set(['run.started', 'run.ended', 'run.reverted']);

/**
 * The runs of the workspace (docs/RUNS.md, "In the web app"), at the top of
 * the Activity panel: whose, what, when and what each changed. Choosing one
 * marks its changes in the grid and the doc (run-highlight.ts); "Revert run"
 * asks the server for the preview (a dry run: counts and conflicts) and
 * shows it in the app's dialog before anything changes.
 */
export function RunsList(props: { context: WorkspaceContext }) {
  const { workspace, abilities } = props.context;
  const base = workspacePath(workspace.org.slug, workspace.slug, '/runs');
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const highlight = useStore(runHighlight);
  const [preview, setPreview] = useState<{ run: RunRecord; revert: Revert } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = () =>
    api<RunList>('GET', `${base}?limit=20`).then(
      (page) => setRuns(page.runs),
      (failure) => setError(failure.message),
    );
  useEffect(() => {
    setRuns(null);
    void load();
  }, [base]);
  // New runs and reverts arrive live, and a run's summary grows with its writes: the list is read again once they pause.
  useReloadOnEvents(workspace, (name) => RUN_EVENTS.has(name) || name.startsWith('row.') || name.startsWith('column.') || name === 'doc.updated', load, { quietMs: 500 });
  // Leaving the workspace (or the panel) stops marking a run.
  useEffect(() => () => runHighlight.set(null), [workspace.id]);

  const choose = async (run: RunRecord) => {
    if (highlight?.runId === run.id) return runHighlight.set(null);
    try {
      const { changes } = await api<RunChanges>('GET', `${base}/${encodeURIComponent(run.id)}/changes`);
      runHighlight.set(highlightOf(run.id, changes));
    } catch (failure) {
      showError(failure);
    }
  };

  const askRevert = async (run: RunRecord) => {
    setBusy(run.id);
    try {
      setPreview({ run, revert: await api<Revert>('POST', `${base}/${encodeURIComponent(run.id)}/revert?dryRun=true`) });
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(null);
    }
  };

  const revert = async (run: RunRecord) => {
    setBusy(run.id);
    try {
      const done = await api<Revert>('POST', `${base}/${encodeURIComponent(run.id)}/revert`);
      setPreview(null);
      runHighlight.set(null);
      showToast(done.conflicts.length > 0 ? `Run reverted; ${plural(done.conflicts.length, 'place')} someone changed since kept their value` : 'Run reverted');
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(null);
    }
  };

  if (error) return <p class="form-error">{error}</p>;
  if (!runs) return <Spinner />;
  if (runs.length === 0) return null;
  return (
    <section class="runs" aria-label="Runs">
      <h3 class="runs-title">Runs</h3>
      <ol class="runs-list">
        {runs.map((run) => (
          <li key={run.id} class={highlight?.runId === run.id ? 'selected' : ''}>
            <button type="button" class="run-item" aria-pressed={highlight?.runId === run.id} onClick={() => choose(run)} title="Mark what this run changed">
              <Avatar id={run.principal.id} name={run.principal.name} size={22} />
              <span>
                <span class="run-who">
                  {run.principal.name}
                  {run.principal.principalType === 'agent' && (
                    <span class="badge badge-agent">
                      <Icon name="agent" size={11} /> agent
                    </span>
                  )}
                </span>
                <strong class="run-name">{run.name}</strong>
                <span class="history-meta">
                  <time dateTime={run.startedAt} title={new Date(run.startedAt).toLocaleString()}>
                    {timeAgo(run.startedAt)}
                  </time>
                  {run.status === 'open' ? ' · open' : ''} · <span class="run-summary">{summaryOf(run)}</span>
                  {run.revertedBy ? ' · reverted' : ''}
                </span>
              </span>
            </button>
            {highlight?.runId === run.id && abilities.edit && (
              <div class="run-actions">
                <Button icon="undo" busy={busy === run.id} onClick={() => askRevert(run)}>
                  Revert run
                </Button>
              </div>
            )}
          </li>
        ))}
      </ol>
      {preview && <RevertDialog run={preview.run} revert={preview.revert} busy={busy === preview.run.id} onCancel={() => setPreview(null)} onConfirm={() => revert(preview.run)} />}
    </section>
  );
}

function RevertDialog(props: { run: RunRecord; revert: Revert; busy: boolean; onCancel: () => void; onConfirm: () => void }) {
  const { reverted, conflicts } = props.revert;
  const counts = [
    [reverted.rowsRemoved, 'row', 'removed'],
    [reverted.rowsRestored, 'row', 'brought back'],
    [reverted.rowsMoved, 'row', 'moved back'],
    [reverted.cellsRestored, 'cell', 'restored'],
    [reverted.columnsRestored, 'column', 'restored'],
    [reverted.docsChanged, 'doc', 'changed'],
    [reverted.filesRestored, 'file', 'restored'],
    [reverted.commentsRemoved, 'comment', 'removed'],
  ] as const;
  const listed = counts.filter(([n]) => n > 0);
  return (
    <Dialog
      title={`Revert “${props.run.name}”?`}
      onClose={props.onCancel}
      wide
      footer={
        <>
          <Button variant="ghost" onClick={props.onCancel}>
            Cancel
          </Button>
          <Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
            Revert run
          </Button>
        </>
      }
    >
      <div class="run-preview">
        <p>Undoes what {props.run.principal.name} did in this run and keeps everyone’s later work. The revert is a run of yours, so it can be reverted in turn.</p>
        {listed.length === 0 ? (
          <p class="run-preview-nothing">Nothing left to undo.</p>
        ) : (
          <ul class="run-preview-counts">
            {listed.map(([n, noun, verb]) => (
              <li key={`${noun}-${verb}`}>
                {plural(n, noun)} {verb}
              </li>
            ))}
          </ul>
        )}
        {conflicts.length > 0 && (
          <>
            <p>
              <strong>{plural(conflicts.length, 'conflict')}</strong>: someone changed these since the run; their value stays.
            </p>
            <table class="run-conflicts">
              <thead>
                <tr>
                  <th>Where</th>
                  <th>Before the run</th>
                  <th>The run’s</th>
                  <th>Now (kept)</th>
                </tr>
              </thead>
              <tbody>
                {conflicts.map((conflict, i) => (
                  <tr key={i}>
                    <td>{[conflict.surface, conflict.column].filter(Boolean).join(' · ')}</td>
                    <td>{shown(conflict.before)}</td>
                    <td>{shown(conflict.run)}</td>
                    <td>{shown(conflict.now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </div>
    </Dialog>
  );
}

function summaryOf(run: RunRecord): string {
  const { rowsCreated, rowsUpdated, rowsDeleted, cellsChanged, columnsChanged, docsChanged } = run.summary;
  const parts = [
    rowsCreated && `${plural(rowsCreated, 'row')} added`,
    rowsUpdated && `${plural(rowsUpdated, 'row')} edited`,
    rowsDeleted && `${plural(rowsDeleted, 'row')} deleted`,
    cellsChanged && plural(cellsChanged, 'cell'),
    columnsChanged && plural(columnsChanged, 'column'),
    docsChanged && `${plural(docsChanged, 'doc')} edited`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'no changes';
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function shown(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
