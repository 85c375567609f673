import { startTestApp, ManualClock, type Credential, type TestApp, type TestResponse } from '../helpers/app';
import { enrolAgent, seedAgent, seedKey } from '../members/fixtures';
import { addMembership, addOrgMember, createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import type { SpecCaller, SpecKeyRole, SpecPerson, SpecRole, SpecVisibility } from './spec-rules';

/**
 * One organisation's worth of people, agents and workspaces for the matrix
 * tests, built once per file:
 *
 * - org A, owned by alice, holds a workspace of each visibility, live and
 *   archived (8). alice owns them all (she created them).
 * - bob (editor), carol (commenter) and dave (viewer) have membership rows
 *   on all eight. bob and dave are also org members, carol is an outside
 *   collaborator; erin is an org member with no row anywhere; frank is a
 *   stranger in his own organisation.
 * - Agents: on each workspace a key of each key role scoped to it (minted
 *   by alice, so the agent is enrolled with the key's role); unscoped keys
 *   inheriting through bob (editor and viewer keys), dave (an editor key
 *   capped by dave's viewer role), erin (org visibility only) and frank
 *   (nothing but public reads); and one agent of alice's holding both a
 *   viewer key scoped to the private workspace and an unscoped editor key.
 *
 * Rows, keys and memberships are written straight to the database (the
 * member and key flows have their own tests); people sign in through the
 * real magic-link flow and workspaces are created and archived over HTTP.
 */

export type MatrixWorkspace = {
  slug: string;
  id: string;
  name: string;
  visibility: SpecVisibility;
  archived: boolean;
  /** The primary table surface (the table document's sheet). */
  tableSurfaceId: string;
  /** A folder in the files surface `files` (file routes need a files surface). */
  filesFolderId: string;
};

export type MatrixPrincipal = {
  name: string;
  /** The principal kind, in the words. */
  kind: string;
  /** Absent for anonymous. */
  as?: Credential;
  /** What the sync provider sends: a cookie for people, a token for keys. */
  sync: { cookie?: string; token?: string };
  /** A signed-in person (sessions can be elevated; keys cannot). */
  user?: TestUser;
  /** The caller in the rules' terms, on one workspace. */
  spec(ws: MatrixWorkspace): SpecCaller;
  /**
   * Where to probe it. A scoped key is probed on its own workspace and on
   * one other that anyone may read (m-public, or m-unlisted for keys scoped
   * to m-public): 404 there shows it sees nothing else. Every other
   * principal is probed everywhere.
   */
  probeOn(all: MatrixWorkspace[]): MatrixWorkspace[];
};

export type Matrix = {
  t: TestApp & { store: { dispose(): Promise<void> } };
  clock: ManualClock;
  alice: TestUser;
  carol: TestUser;
  workspaces: MatrixWorkspace[];
  principals: MatrixPrincipal[];
  close(): Promise<void>;
};

const VISIBILITIES: SpecVisibility[] = ['private', 'org', 'unlisted', 'public'];
const everywhere = (all: MatrixWorkspace[]) => all;
const KEY_ROLES: SpecKeyRole[] = ['viewer', 'commenter', 'editor'];

export async function buildMatrix(): Promise<Matrix> {
  const clock = new ManualClock();
  // Hundreds of writes by one principal within a frozen minute: lift the burst limit (not what this test is about).
  // Webhook probes target a loopback port (see matrix.http.test.ts).
  const t = await startTestApp({ clock, env: { API_WRITES_PER_MINUTE: '1000000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const db = t.services.db;

  const alice = await signInUser(t, 'alice@example.com');
  const bob = await signInUser(t, 'bob@example.com');
  const carol = await signInUser(t, 'carol@example.com');
  const dave = await signInUser(t, 'dave@example.com');
  const erin = await signInUser(t, 'erin@example.com');
  const frank = await signInUser(t, 'frank@example.com');
  const orgA = alice.orgId;
  await addOrgMember(t, orgA, bob.userId, 'editor');
  await addOrgMember(t, orgA, dave.userId, 'viewer');
  // An org viewer is still a virtual editor of org-visibility workspaces.
  await addOrgMember(t, orgA, erin.userId, 'viewer');
  // More people and agents than the free plan holds; caps are not under test here.
  await db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', orgA).execute();

  const workspaces: MatrixWorkspace[] = [];
  for (const archived of [false, true]) {
    for (const visibility of VISIBILITIES) {
      const slug = `m-${visibility}${archived ? '-archived' : ''}`;
      const created = await createWorkspace(t, alice, { name: `Matrix ${slug}`, slug, visibility });
      const surface = await db
        .selectFrom('surfaces')
        .select('id')
        .where('workspaceId', '=', created.id)
        .where('kind', '=', 'table')
        .executeTakeFirstOrThrow();
      await expectOk(await t.request('POST', `/api/workspaces/${slug}/surfaces`, { as: alice.as, body: { kind: 'files', slug: 'files', name: 'Files' } }));
      const folder = await t.request('POST', `/api/workspaces/${slug}/files/folders`, { as: alice.as, body: { surfaceSlug: 'files', name: 'Matrix folder' } });
      await expectOk(folder);
      workspaces.push({ slug, id: created.id, name: created.name, visibility, archived, tableSurfaceId: surface.id, filesFolderId: folder.body.id });
    }
  }

  const rows: Record<string, SpecRole> = { [bob.userId]: 'editor', [carol.userId]: 'commenter', [dave.userId]: 'viewer' };
  for (const ws of workspaces) {
    for (const [userId, role] of Object.entries(rows)) await addMembership(t, ws.id, userId, role);
  }

  const person = (row: SpecRole | null, orgMember: boolean): SpecPerson => ({ row, orgMember });
  const facts = {
    alice: person('owner', true),
    bob: person('editor', true),
    carol: person('commenter', false),
    dave: person('viewer', true),
    erin: person(null, true),
    frank: person(null, false),
  };

  const principals: MatrixPrincipal[] = [
    { name: 'anonymous', kind: 'anonymous', sync: {}, spec: () => ({ kind: 'anonymous' }), probeOn: everywhere },
    ...(
      [
        ['alice (owner)', 'user member', alice, facts.alice],
        ['bob (editor)', 'user member', bob, facts.bob],
        ['carol (commenter, outside the org)', 'user member', carol, facts.carol],
        ['dave (viewer)', 'user member', dave, facts.dave],
        ['erin (org member, no row)', 'user org-member-only', erin, facts.erin],
        ['frank (stranger)', 'user stranger', frank, facts.frank],
      ] as const
    ).map(([name, kind, user, f]): MatrixPrincipal => ({
      name,
      kind,
      as: user.as,
      user,
      sync: { cookie: user.cookie },
      spec: () => ({ kind: 'user', ...f }),
      probeOn: everywhere,
    })),
  ];

  // Scoped keys: alice's agents, enrolled with the key's role, as minting does.
  for (const ws of workspaces) {
    for (const keyRole of KEY_ROLES) {
      const agentId = await seedAgent(t, alice, `${keyRole}@${ws.slug}`);
      await enrolAgent(t, ws.id, agentId, alice.userId, keyRole);
      const { secret } = await seedKey(t, { agentId, orgId: orgA, ownerUserId: alice.userId, scopeWorkspaceId: ws.id, role: keyRole });
      principals.push({
        name: `${keyRole} key scoped to ${ws.slug}`,
        kind: `agent with ${keyRole} key scoped to one workspace`,
        as: { bearer: secret },
        sync: { token: secret },
        spec: (target) => ({
          kind: 'agent',
          keyRole,
          scope: target.id === ws.id ? 'this' : 'other',
          row: target.id === ws.id ? keyRole : null,
          owner: facts.alice,
        }),
        probeOn: (all) => {
          const elsewhere = ws.slug === 'm-public' ? 'm-unlisted' : 'm-public';
          return all.filter((w) => w.id === ws.id || w.slug === elsewhere);
        },
      });
    }
  }

  // Unscoped keys: they reach what their owner reaches, capped by the key.
  const unscoped = async (name: string, owner: TestUser, ownerFacts: SpecPerson, keyRole: SpecKeyRole, orgId: string) => {
    const agentId = await seedAgent(t, { userId: owner.userId, orgId }, name);
    const { secret } = await seedKey(t, { agentId, orgId, ownerUserId: owner.userId, role: keyRole });
    principals.push({
      name: `unscoped ${keyRole} key of ${name}`,
      kind: 'agent with unscoped key inheriting via owner',
      as: { bearer: secret },
      sync: { token: secret },
      spec: () => ({ kind: 'agent', keyRole, scope: 'none', row: null, owner: ownerFacts }),
      probeOn: everywhere,
    });
  };
  await unscoped('bob (editor)', bob, facts.bob, 'editor', orgA);
  await unscoped('bob (editor)', bob, facts.bob, 'viewer', orgA);
  await unscoped('dave (viewer)', dave, facts.dave, 'editor', orgA);
  await unscoped('erin (org member, no row)', erin, facts.erin, 'editor', orgA);
  await unscoped('frank (stranger)', frank, facts.frank, 'editor', frank.orgId);

  // One agent, two keys: a viewer key scoped to the private workspace enrolled
  // it there as viewer; its unscoped editor key still reaches what alice does.
  const privateWs = workspaces.find((w) => w.slug === 'm-private')!;
  const mixedAgent = await seedAgent(t, alice, 'two keys');
  await enrolAgent(t, privateWs.id, mixedAgent, alice.userId, 'viewer');
  await seedKey(t, { agentId: mixedAgent, orgId: orgA, ownerUserId: alice.userId, scopeWorkspaceId: privateWs.id, role: 'viewer' });
  const mixed = await seedKey(t, { agentId: mixedAgent, orgId: orgA, ownerUserId: alice.userId, role: 'editor' });
  principals.push({
    name: "unscoped editor key of alice's agent enrolled as viewer on m-private",
    kind: 'agent with unscoped key inheriting via owner (and an own lower enrolment)',
    as: { bearer: mixed.secret },
    sync: { token: mixed.secret },
    spec: (target) => ({ kind: 'agent', keyRole: 'editor', scope: 'none', row: target.id === privateWs.id ? 'viewer' : null, owner: facts.alice }),
    probeOn: everywhere,
  });

  // Archive the second half over HTTP (alice signed in moments ago, so the elevation is granted at once).
  await expectOk(await t.request('POST', '/api/me/elevate', { as: alice.as, body: { scope: 'workspace_delete' } }));
  for (const ws of workspaces.filter((w) => w.archived)) {
    await expectOk(await t.request('DELETE', `/api/workspaces/${ws.slug}`, { as: alice.as }));
  }

  return {
    t,
    clock,
    alice,
    carol,
    workspaces,
    principals,
    close: async () => {
      await t.close();
      await t.store.dispose();
    },
  };
}

export async function expectOk(res: TestResponse): Promise<TestResponse> {
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${res.text}`);
  return res;
}
