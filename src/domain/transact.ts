import { publishEvents, recordEvents } from '../events/emit';
import type { Author } from '../model/schemas/common';
import type { EventName } from '../model/event-names';
import type { EventDraft } from '../model/event-record';
import type { Actor } from '../policy/actor';
import type { Tx } from '../persistence/database';
import type { Surface, Workspace } from '../persistence/schema';
import type { Services } from './services';

/**
 * Runs a change in one transaction together with the events it causes: the
 * work pushes drafts, they are recorded in the audit log inside the same
 * transaction, and published (SSE, webhooks) only after commit, so nobody
 * hears of a change that was rolled back.
 */
export async function transactWithEvents<T>(services: Services, work: (tx: Tx, events: EventDraft[]) => Promise<T>): Promise<T> {
  const { result, records } = await services.db.transaction().execute(async (tx) => {
    const drafts: EventDraft[] = [];
    const result = await work(tx, drafts);
    return { result, records: await recordEvents(services, tx, drafts) };
  });
  publishEvents(services, records);
  return result;
}

/** An event about a workspace (and optionally one of its surfaces), attributed to the caller. */
export function workspaceEvent(
  event: EventName,
  target: { workspace: Workspace; orgSlug: string; surface?: Surface },
  actor: { principal: Author },
  data: Record<string, unknown>,
): EventDraft {
  const { workspace, orgSlug, surface } = target;
  return {
    event,
    orgId: workspace.orgId,
    workspace: { id: workspace.id, slug: workspace.slug, org: { slug: orgSlug } },
    ...(surface ? { surface: { id: surface.id, slug: surface.slug }, subjectId: surface.id } : {}),
    principal: actor.principal,
    data,
  };
}
