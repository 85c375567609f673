import { errors } from '../errors';
import { authorize, type CallerFacts, type WorkspaceAccess, type WorkspaceAction, type WorkspaceFacts } from './index';

/**
 * Run rules that are about whose run it is rather than a role alone
 * (docs/RUNS.md). Pure, like the rest of the policy; callers load the run
 * and the surfaces it touched.
 */

/** Ending a run is its own principal's. */
export function canEndRun(callerPrincipalId: string, run: { principalId: string }): boolean {
  return callerPrincipalId === run.principalId;
}

export type RunSurfaceKind = 'table' | 'doc' | 'html' | 'files' | 'comments';

/** What writing a surface of each kind a run touched takes. */
const WRITES: Record<RunSurfaceKind, WorkspaceAction[]> = {
  table: ['write_rows', 'edit_columns'],
  doc: ['edit_doc'],
  html: ['edit_doc'],
  files: ['write_files'],
  comments: ['comment'],
};

/**
 * Who may revert a run: its own principal (with any write action; a
 * suggest-only key never), or a caller who may revert runs and write every
 * surface the run touched (`touched`, named as the caller sees them).
 * Archived workspaces take no revert.
 */
export function authorizeRunRevert(
  caller: CallerFacts,
  workspace: WorkspaceFacts,
  access: WorkspaceAccess,
  own: boolean,
  touched: ReadonlyArray<{ surface: string; kind: RunSurfaceKind }>,
): void {
  if (access.suggestOnly) throw errors.forbidden('This key may only suggest changes (suggestOnly); it may not revert runs.');
  if (own) {
    authorize(caller, workspace, 'start_runs');
    return;
  }
  authorize(caller, workspace, 'revert_runs');
  for (const { surface, kind } of touched) {
    for (const action of WRITES[kind]) {
      try {
        authorize(caller, workspace, action);
      } catch {
        throw errors.forbidden(`Reverting this run needs \`${action}\` on ${surface}, which your role (${access.role}) does not allow.`);
      }
    }
  }
}
