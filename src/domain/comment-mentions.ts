import { errors, type ErrorDetail } from '../errors';
import { findPrincipals } from '../persistence/workspaces';
import type { Services } from './services';

/** Mentions in comment bodies (SPEC "Comments" 3). */

export type CommentMention = { kind: 'user' | 'agent'; id: string; label: string };

/**
 * The mentions a comment keeps: those whose `@label` still occurs in the
 * body, each principal once (its first label wins). The others are dropped
 * and fire nothing.
 */
export function keptMentions(body: string, mentions: readonly CommentMention[]): Array<CommentMention & { index: number }> {
  const seen = new Set<string>();
  const kept: Array<CommentMention & { index: number }> = [];
  mentions.forEach((mention, index) => {
    const key = `${mention.kind}:${mention.id}`;
    if (seen.has(key) || !body.includes(`@${mention.label}`)) return;
    seen.add(key);
    kept.push({ kind: mention.kind, id: mention.id, label: mention.label, index });
  });
  return kept;
}

/** A kept mention must name an existing principal of its kind: 422 naming the mention otherwise. */
export async function assertMentionedPrincipals(services: Services, mentions: ReadonlyArray<CommentMention & { index: number }>, path: string[]) {
  const principals = await findPrincipals(services.db, mentions.map((m) => m.id));
  const issues: ErrorDetail[] = mentions
    .filter((m) => principals.get(m.id)?.principalType !== m.kind)
    .map((m) => ({ path: [...path, String(m.index), 'id'], code: 'unknown_principal', message: `No ${m.kind} with id "${m.id}".` }));
  if (issues.length > 0) throw errors.validation(`Mentions must name existing users or agents: ${issues.map((i) => i.message).join(' ')}`, issues);
}

/**
 * Legacy mentions are principal ids: each becomes a mention labelled with
 * the principal's name (so it is kept when `@name` is in the body); an
 * unknown id is 422.
 */
export async function mentionsFromIds(services: Services, ids: readonly string[]): Promise<CommentMention[]> {
  const principals = await findPrincipals(services.db, [...ids]);
  const issues: ErrorDetail[] = ids.flatMap((id, i) =>
    principals.has(id) ? [] : [{ path: ['mentions', String(i)], code: 'unknown_principal', message: `No user or agent with id "${id}".` }],
  );
  if (issues.length > 0) throw errors.validation('Mentions must be ids of existing users or agents.', issues);
  return ids.map((id) => {
    const principal = principals.get(id)!;
    return { kind: principal.principalType, id, label: principal.name };
  });
}
