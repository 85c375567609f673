import type { Author } from '../model/schemas/common';
import type { Tx } from '../persistence/database';
import { insertInboxMessage } from '../persistence/inbox';
import { listWorkspaceMembers } from '../persistence/members';
import { insertSuggestions } from '../persistence/suggestions';
import { newId } from '../lib/ids';
import type { EventDraft } from '../model/event-record';

/**
 * A suggestion the observer saw appear in a document (marks in a doc body,
 * an entry beside the rows of a table), whoever made it: REST, MCP or a sync
 * client in suggesting mode.
 */
export type SeenSuggestion = {
  id: string;
  surfaceId: string;
  target: 'doc' | 'row';
  rowId?: string;
  author: { principalType: 'user' | 'agent'; id: string; name: string };
  at: string;
  summary: string;
};

type Context = { id: string; slug: string; orgId: string; orgSlug: string; surfaces: Map<string, { id: string; slug: string }> };

/**
 * Records suggestions new to the projection, in the transaction that commits
 * the change that made them: a `suggestion.created` event each, and an inbox
 * message to each owner of the workspace (the people who decide). The
 * author is the principal of the change when it has one (a stamp names it,
 * but a stamp is written by the client). Returns the events and who to
 * signal once committed.
 */
export async function recordSeenSuggestions(
  tx: Tx,
  context: Context,
  seen: readonly SeenSuggestion[],
  principal: Author | null,
  now: Date,
): Promise<{ drafts: EventDraft[]; notify: string[] }> {
  if (seen.length === 0) return { drafts: [], notify: [] };
  // A form only adds rows: it never suggests, so its name never stands for a suggestion's author.
  const authorOf = (s: SeenSuggestion) => (principal && principal.principalType !== 'form' ? { principalType: principal.principalType, id: principal.id, name: principal.name } : s.author);
  const fresh = new Set(
    await insertSuggestions(
      tx,
      seen.map((s) => ({
        id: s.id,
        workspaceId: context.id,
        surfaceId: s.surfaceId,
        target: s.target,
        rowId: s.rowId ?? null,
        authorType: authorOf(s).principalType,
        authorId: authorOf(s).id,
        createdAt: new Date(Number.isNaN(Date.parse(s.at)) ? now : s.at),
        summary: s.summary,
      })),
    ),
  );
  const created = seen.filter((s) => fresh.has(s.id));
  if (created.length === 0) return { drafts: [], notify: [] };
  const workspace = { id: context.id, slug: context.slug, org: { slug: context.orgSlug } };
  const drafts: EventDraft[] = created.map((s) => {
    const surface = context.surfaces.get(s.surfaceId);
    return {
      event: 'suggestion.created',
      orgId: context.orgId,
      workspace,
      ...(surface ? { surface: { id: surface.id, slug: surface.slug } } : {}),
      principal,
      subjectId: s.id,
      data: { suggestionId: s.id, surfaceId: s.surfaceId, target: s.target, ...(s.rowId ? { rowId: s.rowId } : {}), summary: s.summary },
    };
  });
  const owners = (await listWorkspaceMembers(tx, context.id)).filter((m) => m.role === 'owner' && m.principalType === 'user');
  const notify: string[] = [];
  for (const owner of owners) {
    const mine = created.filter((s) => authorOf(s).id !== owner.principalId);
    for (const s of mine) {
      await insertInboxMessage(tx, {
        id: newId('msg'),
        recipientId: owner.principalId,
        orgId: context.orgId,
        workspaceId: context.id,
        kind: 'suggestion',
        payload: JSON.stringify({
          workspace,
          suggestion: { id: s.id, surfaceId: s.surfaceId, target: s.target, ...(s.rowId ? { rowId: s.rowId } : {}), summary: s.summary },
          from: principal ?? { ...s.author, avatarUrl: null },
        }),
        createdAt: now,
      });
    }
    if (mine.length > 0) notify.push(owner.principalId);
  }
  return { drafts, notify };
}
