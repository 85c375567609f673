/**
 * Who can be mentioned with `@` and how a typed query ranks them: shared by
 * the doc editor's list (doc/mentions.ts) and the comment box, and free of
 * the editor, so the comments panel does not load ProseMirror.
 */
export interface MentionCandidate {
  kind: 'user' | 'agent';
  id: string;
  label: string;
  detail?: string;
}

const TRIGGER = /(?:^|[\s(])@([^\s@]{0,40})$/;
const MAX_SHOWN = 8;

/** The query of an `@` mention being typed at the end of `before` (the text up to the caret), or null. */
export function mentionQueryAt(before: string): string | null {
  return TRIGGER.exec(before)?.[1] ?? null;
}

/** The candidates whose name contains the query, names starting with it first, at most eight. */
export function rankCandidates(candidates: MentionCandidate[], query: string): MentionCandidate[] {
  const needle = query.toLowerCase();
  return candidates
    .filter((candidate) => !needle || candidate.label.toLowerCase().includes(needle))
    .sort((a, b) => Number(!a.label.toLowerCase().startsWith(needle)) - Number(!b.label.toLowerCase().startsWith(needle)))
    .slice(0, MAX_SHOWN);
}

/** Who can be mentioned in a workspace: its members, and the agents that act for them. */
export function mentionCandidatesOf(members: Array<{ principalType: 'user' | 'agent'; principal: { id: string; name: string }; email?: string | null; inheritedAgents?: Array<{ id: string; name: string }> }>): MentionCandidate[] {
  return members.flatMap((member): MentionCandidate[] => [
    { kind: member.principalType, id: member.principal.id, label: member.principal.name, detail: member.email ?? undefined },
    ...(member.inheritedAgents ?? []).map((agent) => ({ kind: 'agent' as const, id: agent.id, label: agent.name })),
  ]);
}
