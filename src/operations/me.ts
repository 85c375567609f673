import { z } from 'zod';
import { elevate, ELEVATION_SCOPES } from '../domain/elevation';
import { errors } from '../errors';
import { requireCaller, requireHumanSession } from '../access/callers';
import type { Actor } from '../policy/actor';
import { findOrgById, findOrgRole, findUserById, revokeUserSessions, updateOrg, updatePrincipalProfile } from '../persistence/accounts';
import { authorizeOrg } from '../policy/index';
import { loadOrgCaller } from '../domain/org-caller';
import { Principal, toIso } from '../model/schemas/common';
import { CallerOrgList, ElevateResponse, Me, OrgSettings, RevokedSessions } from '../model/schemas/account';
import { listCallerOrgs } from '../domain/members';
import type { Services } from '../domain/services';
import { defineOperation } from './operation';



const ProfilePatch = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  // http(s) only: the web app renders it as an image source and link, so `javascript:` or `data:` URLs are refused (422).
  avatarUrl: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2000).nullable().optional(),
});

const OrgPatch = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  defaultWorkspaceVisibility: z.enum(['org', 'private']).optional(),
});

const ElevateRequest = z.strictObject({ scope: z.enum(ELEVATION_SCOPES), code: z.string().regex(/^\d{6}$/, 'must be the 6-digit code').optional() });

async function presentMe(services: Services, actor: Actor): Promise<z.infer<typeof Me>> {
  const [user, org] = await Promise.all([
    findUserById(services.db, actor.userId),
    actor.orgId ? findOrgById(services.db, actor.orgId) : undefined,
  ]);
  if (!user) throw errors.unauthorized();
  return {
    principal: actor.principal,
    user: { id: user.id, email: user.email, name: user.name, avatarUrl: user.avatarUrl, createdAt: toIso(user.createdAt)! },
    agent: actor.key
      ? { id: actor.principal.id, name: actor.principal.name, keyId: actor.key.id, role: actor.key.role, scopeWorkspaceId: actor.key.scopeWorkspaceId, suggestOnly: actor.key.suggestOnly }
      : null,
    org: org ? { id: org.id, slug: org.slug, name: org.name, plan: org.plan } : null,
  };
}

async function presentOrg(services: Services, actor: Actor): Promise<z.infer<typeof OrgSettings>> {
  if (!actor.orgId) throw errors.notFound('Organisation');
  const [org, role] = await Promise.all([findOrgById(services.db, actor.orgId), findOrgRole(services.db, actor.orgId, actor.userId)]);
  if (!org || !role) throw errors.notFound('Organisation');
  return { id: org.id, slug: org.slug, name: org.name, defaultWorkspaceVisibility: org.defaultWorkspaceVisibility, plan: org.plan, role };
}

/** The caller's own account, organisation settings and elevation. */
export const meOperations = {
  get: defineOperation(
    { response: Me, rest: { method: 'GET', path: '/api/me', summary: 'The caller and their organisation', tags: ['me'], config: { metered: false } } },
    async (services, actor) => presentMe(services, requireCaller(actor)),
  ),
  update: defineOperation(
    { body: ProfilePatch, response: Me, rest: { method: 'PATCH', path: '/api/me', summary: 'Update name or avatar', tags: ['me'], config: { capExempt: true } } },
    async (services, actor, { body }) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      await updatePrincipalProfile(services.db, caller.userId, body);
      return presentMe(services, { ...caller, principal: { ...caller.principal, ...body } });
    },
  ),
  signOutEverywhere: defineOperation(
    {
      response: RevokedSessions,
      rest: {
        method: 'DELETE',
        path: '/api/me/sessions',
        summary: 'Sign out every browser session',
        description: 'Revokes sessions only; API keys stay valid (revoke them with DELETE /api/keys/{id}).',
        tags: ['me'],
        // No options: an empty or absent body. Unknown fields are refused (400) rather than ignored, so a
        // client that believes it is asking for something narrower never signs everyone out by mistake.
        body: z.strictObject({}).nullish(),
        config: { capExempt: true },
      },
    },
    async (services, actor) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      return { revokedSessions: await revokeUserSessions(services.db, caller.userId, services.clock.now()) };
    },
  ),
  orgs: defineOperation(
    {
      response: CallerOrgList,
      rest: {
        method: 'GET',
        path: '/api/me/orgs',
        summary: 'Your organisations',
        description:
          'The organisations you belong to, your own (`primary`) first, then by name; then, with `role: null`, the organisations of workspaces shared with you that you do not belong to. A key scoped to one workspace belongs to none.',
        tags: ['me'],
      },
    },
    async (services, actor) => ({ orgs: await listCallerOrgs(services, requireCaller(actor)) }),
  ),
  org: defineOperation(
    { response: OrgSettings, rest: { method: 'GET', path: '/api/me/org', summary: 'Organisation settings', tags: ['me'] } },
    async (services, actor) => presentOrg(services, requireCaller(actor)),
  ),
  updateOrg: defineOperation(
    { body: OrgPatch, response: OrgSettings, rest: { method: 'PATCH', path: '/api/me/org', summary: 'Update organisation settings (owner)', tags: ['me'], config: { capExempt: true } } },
    async (services, actor, { body }) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      if (!caller.orgId) throw errors.notFound('Organisation');
      authorizeOrg(await loadOrgCaller(services, caller, caller.orgId), 'update_org');
      await updateOrg(services.db, caller.orgId, body);
      return presentOrg(services, caller);
    },
  ),
  elevate: defineOperation(
    {
      body: ElevateRequest, response: ElevateResponse,
      rest: {
        method: 'POST',
        path: '/api/me/elevate',
        summary: 'Elevate the session for one sensitive scope (sudo mode)',
        description:
          'Grants at once when the session signed in within 15 minutes; otherwise mails a 6-digit code (`{ status: "code_sent" }`) to send back as `code`. A grant lasts 15 minutes after its last use.',
        tags: ['me'],
        config: { capExempt: true },
      },
    },
    async (services, actor, { body }) => {
      const result = await elevate(services, requireCaller(actor), body.scope, body.code);
      return 'expiresAt' in result ? { scope: result.scope, expiresAt: result.expiresAt.toISOString() } : result;
    },
  ),
};
