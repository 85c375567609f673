/**
 * The access rules as SPEC.md, API-DECISIONS.md, docs/ACCESS.md and
 * docs/WORKSPACES.md state them, written independently of src/policy so the
 * matrix tests compare the implementation against the rules rather than
 * against itself. Nothing here imports the policy module: roles are ranked
 * by a threshold per action instead of the implementation's lists, and
 * reach is computed as "the best of every way in" instead of an if-chain.
 *
 * Where the documents leave something open, the choice is written next to
 * the rule with its source.
 */

export type SpecRole = 'owner' | 'editor' | 'commenter' | 'viewer';
export type SpecKeyRole = Exclude<SpecRole, 'owner'>;
export type SpecVisibility = 'private' | 'org' | 'unlisted' | 'public';

/** Every workspace action the service knows (src/model/permissions.ts names them; the unit test checks the lists agree). */
export const SPEC_WORKSPACE_ACTIONS = [
  'read',
  'read_comments',
  'read_files',
  'comment',
  'suggest',
  'write_rows',
  'edit_columns',
  'write_views',
  'edit_doc',
  'write_files',
  'manage_surfaces',
  'update_settings',
  'share',
  'manage_members',
  'archive',
  'pin',
  'manage_webhooks',
  'read_versions',
  'write_versions',
  'decide_suggestions',
  'start_runs',
  'revert_runs',
] as const;
export type SpecAction = (typeof SPEC_WORKSPACE_ACTIONS)[number];

export const SPEC_ORG_ACTIONS = [
  'read_org',
  'update_org',
  'invite_members',
  'remove_members',
  'mint_keys',
  'manage_webhooks',
  'manage_billing',
  'create_workspaces',
  'contact_support',
] as const;
export type SpecOrgAction = (typeof SPEC_ORG_ACTIONS)[number];

const RANK: Record<SpecRole, number> = { viewer: 1, commenter: 2, editor: 3, owner: 4 };
const atLeast = (role: SpecRole, minimum: SpecRole) => RANK[role] >= RANK[minimum];
const lower = (a: SpecRole, b: SpecRole): SpecRole => (RANK[a] <= RANK[b] ? a : b);

/**
 * The least role each action needs.
 * - SPEC "Authentication" 5: editor or above changes columns and archives or
 *   unarchives; a read-only role cannot modify columns; writes need membership.
 * - Commenters comment (the role's name; SPEC "Comments").
 * - Pins: "caller has a real membership row" (SPEC state table), any role.
 * - Editing settings, sharing (visibility, e-mail invites), surfaces, docs,
 *   files and webhooks are editing (docs/WORKSPACES.md "PATCH", docs/ACCESS.md
 *   "Invites": `share` is editor).
 * - Changing roles and removing members is the owner's (docs/ACCESS.md
 *   "Role changes and removals").
 * - Version history is for editors: seeing it (it holds what was deleted)
 *   and naming or restoring versions (issue 17: "Editor role";
 *   docs/VERSIONS.md "Access").
 */
export const LEAST_ROLE: Record<SpecAction, SpecRole> = {
  read: 'viewer',
  read_comments: 'viewer',
  read_files: 'viewer',
  pin: 'viewer',
  comment: 'commenter',
  // Issue 25: a suggester is below an editor; like Google Docs, a commenter may suggest, and an editor decides.
  suggest: 'commenter',
  write_rows: 'editor',
  edit_columns: 'editor',
  // Saved views are shared by everyone on the sheet: changing them is editing (issue 24: "Editors create and change views; viewers read them").
  write_views: 'editor',
  edit_doc: 'editor',
  write_files: 'editor',
  manage_surfaces: 'editor',
  update_settings: 'editor',
  share: 'editor',
  archive: 'editor',
  manage_webhooks: 'editor',
  read_versions: 'editor',
  write_versions: 'editor',
  decide_suggestions: 'editor',
  // Issue 35 (docs/RUNS.md): a run is a unit of one's own writes, so whoever may write anything (a commenter comments) may start one;
  // reverting someone else's run undoes their writes, which is editing.
  start_runs: 'commenter',
  revert_runs: 'editor',
  manage_members: 'owner',
};

/** Reads (history too) stay open on an archived workspace; archive itself is how it is unarchived (docs/WORKSPACES.md). */
const ALLOWED_WHILE_ARCHIVED: ReadonlySet<SpecAction> = new Set(['read', 'read_comments', 'read_files', 'read_versions', 'archive']);

/**
 * A suggest-only key "reads, comments and suggests, and nothing else"
 * (docs/SUGGESTIONS.md, "Suggest-only keys"; issue 33): within its role, the
 * reads (the workspace, comments, files, version history), comments and
 * suggestions. Everything else, pins included, is refused.
 */
// start_runs: its suggestions may join a run of its own (docs/RUNS.md, issue 35); it never reverts one.
const SUGGEST_ONLY_MAY: ReadonlySet<SpecAction> = new Set(['read', 'read_comments', 'read_files', 'read_versions', 'comment', 'suggest', 'start_runs']);

/** What the caller is, relative to one workspace. */
export type SpecPerson = {
  /** The person's own membership row in this workspace. */
  row: SpecRole | null;
  /** Member of the workspace's organisation, whatever the org role. */
  orgMember: boolean;
};

export type SpecCaller =
  | { kind: 'anonymous' }
  | ({ kind: 'user' } & SpecPerson)
  | {
      kind: 'agent';
      keyRole: SpecKeyRole;
      /** `none`: unscoped key; `this`: scoped to this workspace; `other`: scoped to another one. */
      scope: 'none' | 'this' | 'other';
      /** The agent's own membership row here (auto-enrolment by a scoped key, or an owner's PATCH). */
      row: SpecRole | null;
      owner: SpecPerson;
      /** A suggest-only key (absent: no). */
      suggestOnly?: boolean;
    };

export type SpecWorkspace = { visibility: SpecVisibility; archived: boolean; commentsOnPublicShare: boolean };

export type SpecOutcome = 'allow' | 'forbidden' | 'not_found' | 'conflict';

/** A way in with a role: `row` says whether the caller itself holds a membership row (pins live there). */
type Standing = { role: SpecRole; row: boolean };

/**
 * A person's membership standing:
 * - private: "explicit members only" (SPEC Visibility);
 * - org: "every organisation member is a virtual editor", where a virtual
 *   member is "one with access only through org visibility" (SPEC). Someone
 *   with a row is therefore not virtual: the row's role is theirs. This is
 *   the reading we test; SPEC does not say whether an org member whose row
 *   is below editor is lifted to editor.
 */
function personStanding(person: SpecPerson, ws: SpecWorkspace): Standing | null {
  if (person.row) return { role: person.row, row: true };
  if (ws.visibility === 'org' && person.orgMember) return { role: 'editor', row: false };
  return null;
}

/**
 * An agent's standing, capped by its key (API-DECISIONS "Authentication"):
 * - "A scoped key reaches only its workspace, where the agent is
 *   auto-enrolled with the key's role": its own row, capped by the key;
 * - "An unscoped key reaches what its owning user reaches, capped by the
 *   key's role": the owner's standing, capped by the key. The agent's own
 *   row (if any) also counts, and the better of the two wins: the row is a
 *   membership, and docs/ACCESS.md rules that an enrolment must not demote
 *   the agent's other keys (and that removing the row leaves an unscoped key
 *   its owner's reach, so the row cannot be what limits it).
 */
function agentStanding(caller: Extract<SpecCaller, { kind: 'agent' }>, ws: SpecWorkspace): Standing | null {
  const ways: Standing[] = [];
  if (caller.row) ways.push({ role: lower(caller.row, caller.keyRole), row: true });
  if (caller.scope === 'none') {
    const owner = personStanding(caller.owner, ws);
    if (owner) ways.push({ role: lower(owner.role, caller.keyRole), row: false });
  }
  if (ways.length === 0) return null;
  const best = ways.reduce((a, b) => (RANK[b.role] > RANK[a.role] ? b : a));
  return { role: best.role, row: ways.some((w) => w.row) };
}

/**
 * The outcome of one cell:
 * - "A non-member's lookup of a workspace slug returns 404, not 403"
 *   (SPEC rule 5): invisible is `not_found`. A key scoped elsewhere sees
 *   nothing else (SPEC/Done-when: "a key scoped to one workspace gets 404 on
 *   another"), public or not.
 * - Unlisted and public: "anyone with the URL can read"; "writes always
 *   require explicit membership" (SPEC rule 4), so a reader without
 *   membership may read, and read comments only with `commentsOnPublicShare`
 *   (SPEC Workspace table). Archiving stops public reads (docs/WORKSPACES.md).
 *   Files are not among what readers read: "All routes [of Files] ...
 *   require membership" (SPEC "Files"); a file is made public by a share link.
 * - Visible but not permitted: `forbidden` (SPEC "Authentication" 4).
 * - A permitted write to an archived workspace: `conflict` until unarchived
 *   (docs/WORKSPACES.md). A refused action stays `forbidden`.
 */
export function expectedOutcome(caller: SpecCaller, ws: SpecWorkspace, action: SpecAction): SpecOutcome {
  if (caller.kind === 'agent' && caller.scope === 'other') return 'not_found';
  const standing =
    caller.kind === 'anonymous' ? null : caller.kind === 'user' ? personStanding(caller, ws) : agentStanding(caller, ws);
  const openToReaders = (ws.visibility === 'public' || ws.visibility === 'unlisted') && !ws.archived;

  let permitted: boolean;
  if (standing) {
    permitted = atLeast(standing.role, LEAST_ROLE[action]) && (action !== 'pin' || standing.row);
  } else if (openToReaders) {
    permitted = action === 'read' || (action === 'read_comments' && ws.commentsOnPublicShare);
  } else {
    return 'not_found';
  }
  if (caller.kind === 'agent' && caller.suggestOnly && !SUGGEST_ONLY_MAY.has(action)) permitted = false;
  if (!permitted) return 'forbidden';
  if (ws.archived && !ALLOWED_WHILE_ARCHIVED.has(action)) return 'conflict';
  return 'allow';
}

/**
 * Organisation actions by org role. SPEC: owner or editor create org invites;
 * owner removes org members. docs/ACCESS.md and docs/WORKSPACES.md: any org
 * member reads the org, creates workspaces and mints keys (capped at their
 * role); settings and billing are the owner's; webhooks are an editor's.
 * A non-member is 404 (as for workspaces).
 */
const ORG_LEAST_ROLE: Record<SpecOrgAction, SpecRole> = {
  read_org: 'viewer',
  mint_keys: 'viewer',
  create_workspaces: 'viewer',
  invite_members: 'editor',
  manage_webhooks: 'editor',
  update_org: 'owner',
  remove_members: 'owner',
  manage_billing: 'owner',
  // Asking support or the operator (a ticket, a limit request) changes nothing in the organisation: any member (docs/BILLING.md).
  contact_support: 'viewer',
};

export function expectedOrgOutcome(orgRole: SpecRole | null, action: SpecOrgAction): SpecOutcome {
  if (!orgRole) return 'not_found';
  return atLeast(orgRole, ORG_LEAST_ROLE[action]) ? 'allow' : 'forbidden';
}

/**
 * Organisation actions of an API key (docs/ACCESS.md, "Org access for
 * keys"): a key scoped to one workspace reaches no organisation (404); an
 * unscoped key acts with its owner's org role capped by its own, and
 * - never mints keys (people do, in a session);
 * - below editor it only reads the organisation and asks support (creating
 *   a workspace needs an editor key: docs/WORKSPACES.md);
 * - suggest-only, it only reads the organisation (docs/SUGGESTIONS.md).
 */
export function expectedKeyOrgOutcome(
  key: { keyRole: SpecKeyRole; scoped: boolean; suggestOnly: boolean },
  ownerOrgRole: SpecRole | null,
  action: SpecOrgAction,
): SpecOutcome {
  if (key.scoped || !ownerOrgRole) return 'not_found';
  if (!atLeast(lower(ownerOrgRole, key.keyRole), ORG_LEAST_ROLE[action])) return 'forbidden';
  if (action === 'mint_keys') return 'forbidden';
  if (key.keyRole !== 'editor' && action !== 'read_org' && action !== 'contact_support') return 'forbidden';
  if (key.suggestOnly && action !== 'read_org') return 'forbidden';
  return 'allow';
}

export const STATUS_OF: Record<SpecOutcome, number> = { allow: 200, forbidden: 403, not_found: 404, conflict: 409 };
