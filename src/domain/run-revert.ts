import { tablesDocumentName } from '../model/document-names';
import { applyTextRevert, planTextRevert, type TextRevertPlan } from '../model/runs/text';
import type { RevertResult } from '../model/schemas/runs';
import { applyTableRevert, planTableRevert, type TableRevertPlan } from '../model/table/runs';
import { listRunChanges } from '../persistence/runs';
import type { Actor } from '../policy/actor';
import { authorizeRunRevert } from '../policy/runs';
import { callerOrigin } from '../sync/origins';
import { cachedLiveSurfaces } from './live-surfaces';
import type { ResolvedWorkspace } from './resolved-workspace';
import { findWorkspaceRun, foldRun, slugOf, textRoot, touchedSurfaces } from './runs';
import type { Services } from './services';
import { transactWithinRowCap } from './tables';

/**
 * Reverting a run (docs/RUNS.md): its own changes are undone and
 * everyone else's later changes kept, as one attributed transaction per
 * document by a new run of the caller (`revertRun`), so a revert has the
 * usual row and doc events, shows in version history, and can itself be
 * reverted, which applies the run again. `dryRun` computes the same answer
 * and writes nothing. Works from the run's own record (run_changes), so
 * compaction and restarts do not matter.
 */
export async function revertRun(services: Services, actor: Actor, resolved: ResolvedWorkspace, runId: string, options: { dryRun: boolean }): Promise<RevertResult> {
  const run = await findWorkspaceRun(services, resolved.workspace.id, runId);
  await services.sync.settleWorkspace(resolved.workspace.id);
  const folded = foldRun(await listRunChanges(services.db, run.id));
  const surfaces = await cachedLiveSurfaces(services, resolved.workspace.id);
  const touched = touchedSurfaces(folded).map(({ surfaceId, kind }) => ({ surface: slugOf(surfaces, surfaceId), kind }));
  authorizeRunRevert(resolved.caller, resolved.workspace, resolved.access, run.principalId === actor.principal.id, touched);
  const result: RevertResult = {
    reverted: { rowsRemoved: 0, rowsRestored: 0, rowsMoved: 0, cellsRestored: 0, columnsRestored: 0, docsChanged: 0, filesRestored: 0, commentsRemoved: 0 },
    conflicts: [],
    revertRun: null,
  };
  const noteTable = (plan: TableRevertPlan) => {
    result.reverted.rowsRemoved += plan.removeRows.length;
    result.reverted.rowsRestored += plan.place.filter((row) => row.data).length;
    result.reverted.rowsMoved += plan.place.filter((row) => !row.data).length;
    result.reverted.cellsRestored += plan.cells.length;
    result.reverted.columnsRestored += plan.columnsRestored;
    for (const { surfaceId, ...conflict } of plan.conflicts) result.conflicts.push({ surface: slugOf(surfaces, surfaceId), ...conflict });
  };
  const noteText = (surfaceId: string, plan: TextRevertPlan) => {
    if (plan.remove.length + plan.restore.length + plan.attributes.length > 0) result.reverted.docsChanged++;
    for (const conflict of plan.conflicts) result.conflicts.push({ surface: slugOf(surfaces, surfaceId), ...conflict });
  };

  if (options.dryRun) {
    if (folded.table) noteTable(await services.sync.read(folded.table.document, (doc) => planTableRevert(doc, folded.table!.folded)));
    for (const text of folded.texts) {
      const plan = await services.sync.read(text.document, (doc) => {
        const root = textRoot(doc, text.kind);
        return root ? planTextRevert(root, text.folded) : null;
      });
      if (plan) noteText(text.surfaceId, plan);
    }
    return result;
  }

  const revert = await services.runs.start(actor, resolved.workspace.id, `Revert of ${run.name}`, run.id);
  const joined = { id: revert.id, principalId: actor.principal.id };
  // The answer names the revert's run (Trellis-Run), as any write's names the run it joined.
  if (actor.request) actor.request.run.joined = joined;
  // The revert's own changes join its run, whatever the request named.
  const reverting: Actor = { ...actor, request: { id: actor.request?.id, run: { requested: null, joined } } };
  try {
    if (folded.table) {
      const document = folded.table.document;
      let plan: TableRevertPlan | null = null;
      const planNow = (doc: Parameters<typeof planTableRevert>[0]) => (plan = planTableRevert(doc, folded.table!.folded));
      if (document === tablesDocumentName(resolved.workspace.id)) {
        await transactWithinRowCap(
          services,
          reverting,
          resolved,
          (doc) => planNow(doc).place.filter((row) => row.data).length,
          (doc) => applyTableRevert(doc, plan ?? planNow(doc)),
        );
        if (plan) noteTable(plan);
      }
    }
    for (const text of folded.texts) {
      const plan = await services.sync
        .transact(text.document, callerOrigin(reverting), (doc) => {
          const root = textRoot(doc, text.kind);
          if (!root) return null;
          const planned = planTextRevert(root, text.folded);
          applyTextRevert(root, planned);
          return planned;
        });
      if (plan) noteText(text.surfaceId, plan);
    }
  } finally {
    await services.runs.end(revert, services.clock.now(), actor.principal);
  }
  result.revertRun = revert.id;
  await services.runs.announce('run.reverted', run, actor.principal, { revertRun: revert.id, reverted: result.reverted, conflicts: result.conflicts.length });
  return result;
}
