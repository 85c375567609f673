/**
 * Every event name the service emits, in one list. `EventDraft.event` is
 * typed from it, so a producer cannot emit a name that is missing here, and
 * webhook subscriptions (`events`) are checked against it. Adding an event
 * is one line in this list (keep each area together).
 */
export const EVENT_NAMES = [
  // rows and columns (the observer, src/events/observer.ts)
  'row.created',
  'row.updated',
  'row.deleted',
  'row.moved_surface',
  'row.refused',
  'columns.updated',
  // saved views of a sheet (the observer, like rows: REST, MCP and sync clients alike)
  'view.created',
  'view.updated',
  'view.deleted',
  // doc and html bodies (src/events/doc-changes.ts)
  'doc.updated',
  'doc.mention_added',
  // workspaces and surfaces
  'workspace.created',
  'workspace.updated',
  'workspace.archived',
  'workspace.unarchived',
  'surface.created',
  'surface.updated',
  'surface.deleted',
  // workspace members and invites
  'member.invited',
  'member.added',
  'member.role_changed',
  'member.removed',
  // organisation members and invites
  'org.member_invited',
  'org.member_added',
  'org.member_removed',
  'org.invite_revoked',
  // API keys
  'key.created',
  'key.revoked',
  // files and folders (src/domain/files.ts, the trash job)
  'file.uploaded',
  'file.renamed',
  'file.moved',
  'file.archived',
  'file.restored',
  'file.purged',
  'file.version_replaced',
  'file.starred',
  'file.tagged',
  'file.described',
  'file.shared',
  'file.share_revoked',
  'folder.created',
  'folder.renamed',
  'folder.moved',
  'folder.archived',
  // comments and reactions (src/domain/comments.ts)
  'comment.added',
  'comment.deleted',
  'comment.resolved',
  'comment.unresolved',
  'comment.reaction_added',
  'comment.reaction_removed',
  // suggestions (created: the observer, whoever made it; decided: src/domain/suggestions.ts)
  'suggestion.created',
  'suggestion.accepted',
  'suggestion.rejected',
  // OAuth grants (src/domain/oauth.ts): in the audit log of the user's organisation
  'oauth.grant_created',
  'oauth.grant_revoked',
  // webhook subscriptions (src/domain/webhooks.ts, the drain's deactivation)
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.deactivated',
  // runs (src/domain/runs.ts, docs/RUNS.md)
  'run.started',
  'run.ended',
  'run.reverted',
  // version history (src/domain/versions.ts)
  'version.created',
  'version.restored',
  // plans and billing (src/domain/billing.ts, the period-end downgrade job)
  'billing.plan_changed',
  'billing.downgrade_scheduled',
  'billing.downgrade_canceled',
  'billing.payment_method_updated',
  'billing.limit_increase_requested',
  // support tickets (src/domain/support.ts)
  'support.ticket_created',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

const KNOWN: ReadonlySet<string> = new Set(EVENT_NAMES);

export function isEventName(name: string): name is EventName {
  return KNOWN.has(name);
}

/** The part before the dot: `row` for `row.created`. */
export function eventArea(name: string): string {
  const dot = name.indexOf('.');
  return dot === -1 ? name : name.slice(0, dot);
}

/** Areas that have at least one event, for `area.*` filters. */
export const EVENT_AREAS: ReadonlySet<string> = new Set(EVENT_NAMES.map(eventArea));
