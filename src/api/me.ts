import { z } from 'zod';
import { elevate, ELEVATION_SCOPES } from '../domain/elevation';
import { errors } from '../errors';
import { requireActor } from '../http/authenticate';
import type { Actor } from '../policy/actor';
import type { App } from '../http/types';
import { findOrgById, findOrgRole, findUserById, revokeUserSessions, updateOrg, updatePrincipalProfile } from '../persistence/accounts';
import { authorizeOrg } from '../policy/index';
import type { Services } from '../services';
import { requireHumanSession } from './keys';
import { errorResponses, toIso } from '../model/schemas/common';
import { ElevateResponse, Me, OrgSettings } from '../model/schemas/account';

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
      ? { id: actor.principal.id, name: actor.principal.name, keyId: actor.key.id, role: actor.key.role, scopeWorkspaceId: actor.key.scopeWorkspaceId }
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

export async function meRoutes(app: App, services: Services) {
  app.get(
    '/api/me',
    { schema: { summary: 'The caller and their organisation', tags: ['me'], response: { 200: Me, ...errorResponses } }, config: { metered: false } },
    async (request) => presentMe(services, requireActor(request)),
  );

  app.patch(
    '/api/me',
    { schema: { summary: 'Update name or avatar', tags: ['me'], body: ProfilePatch, response: { 200: Me, ...errorResponses } }, config: { capExempt: true } },
    async (request) => {
      const actor = requireActor(request);
      requireHumanSession(actor);
      await updatePrincipalProfile(services.db, actor.userId, request.body);
      return presentMe(services, { ...actor, principal: { ...actor.principal, ...request.body } });
    },
  );

  app.delete(
    '/api/me/sessions',
    {
      schema: {
        summary: 'Sign out every browser session',
        description: 'Revokes sessions only; API keys stay valid (revoke them with DELETE /api/keys/{id}).',
        tags: ['me'],
        // No options: an empty or absent body. Unknown fields are refused (400) rather than ignored, so a
        // client that believes it is asking for something narrower never signs everyone out by mistake.
        body: z.strictObject({}).nullish(),
        response: { 200: z.object({ revokedSessions: z.number().int() }), ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request) => {
      const actor = requireActor(request);
      requireHumanSession(actor);
      return { revokedSessions: await revokeUserSessions(services.db, actor.userId, services.clock.now()) };
    },
  );

  app.get(
    '/api/me/org',
    { schema: { summary: 'Organisation settings', tags: ['me'], response: { 200: OrgSettings, ...errorResponses } } },
    async (request) => presentOrg(services, requireActor(request)),
  );

  app.patch(
    '/api/me/org',
    { schema: { summary: 'Update organisation settings (owner)', tags: ['me'], body: OrgPatch, response: { 200: OrgSettings, ...errorResponses } }, config: { capExempt: true } },
    async (request) => {
      const actor = requireActor(request);
      requireHumanSession(actor);
      if (!actor.orgId) throw errors.notFound('Organisation');
      authorizeOrg(await findOrgRole(services.db, actor.orgId, actor.userId), 'update_org');
      await updateOrg(services.db, actor.orgId, request.body);
      return presentOrg(services, actor);
    },
  );

  app.post(
    '/api/me/elevate',
    {
      schema: {
        summary: 'Elevate the session for one sensitive scope (sudo mode)',
        description:
          'Grants at once when the session signed in within 15 minutes; otherwise mails a 6-digit code (`{ status: "code_sent" }`) to send back as `code`. A grant lasts 15 minutes after its last use.',
        tags: ['me'],
        body: ElevateRequest,
        response: { 200: ElevateResponse, ...errorResponses },
      },
      config: { capExempt: true },
    },
    async (request) => {
      const result = await elevate(services, requireActor(request), request.body.scope, request.body.code);
      return 'expiresAt' in result ? { scope: result.scope, expiresAt: result.expiresAt.toISOString() } : result;
    },
  );
}
