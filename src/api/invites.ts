import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { acceptWorkspaceInvite, findInviteForToken, inviteToWorkspace } from '../domain/invites';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, WorkspaceParams, workspacePaths } from '../operations/workspace-routes';
import { HOUR } from '../limits/rules';
import type { Services } from '../services';
import { Invite, InviteRequest, InviteToken, Member, presentInvite, presentMember, presentPublicInvite, PublicInvite } from './member-schemas';
import { resolvedRateLimit } from './resolved-rate-limit';
import { errorResponses, OverLimitBody } from '../model/schemas/common';

const AcceptedWorkspaceInvite = z.object({ invite: Invite, member: Member }).meta({ id: 'AcceptedWorkspaceInvite' });

/** Share a workspace by e-mail, and the invite link's two endpoints. */
export async function inviteRoutes(app: App, services: Services) {
  const shareLimit = resolvedRateLimit({ endpoint: 'workspace_share_invites', limit: 20, windowMs: HOUR }, async (request: FastifyRequest) => {
    const params = request.params as z.infer<typeof WorkspaceParams>;
    const target = await resolveWorkspace(services, request.actor, addressOf(params), 'share');
    return target.workspace.id;
  });

  for (const path of workspacePaths('/share')) {
    app.post(
      path,
      {
        schema: {
          summary: 'Invite someone to the workspace by e-mail',
          description:
            'Editor (the `share` right). Mails a single-use link (`{PUBLIC_URL}/invites/{token}`) valid for 7 days; the role is at most your own (403). Inviting an address that has an open invite refreshes it (role, new link, new expiry; the old link stops working). An address that is already a member is 409: change roles with PATCH /members/{id}. 402 when the organisation is at its plan\'s humans cap and the address is not counted yet. 20 per hour per workspace.',
          tags: ['members'],
          params: WorkspaceParams,
          body: InviteRequest,
          response: { 200: Invite, 402: OverLimitBody, ...errorResponses },
        },
        config: { rateLimits: [shareLimit.rule] },
        onRequest: shareLimit.onRequest,
      },
      async (request) => {
        const actor = requireActor(request);
        const target = await resolveWorkspace(services, actor, addressOf(request.params), 'share');
        return presentInvite(await inviteToWorkspace(services, actor, target, request.body));
      },
    );
  }

  app.get(
    '/api/invites/:token',
    {
      schema: {
        summary: 'Look at a workspace invite',
        description:
          'Public: the link is the credential. Shows the workspace name and slug, the role, the invited address and the inviter\'s name. A used, revoked, expired or unknown token is 404.',
        tags: ['members'],
        params: InviteToken,
        response: { 200: PublicInvite, ...errorResponses },
      },
      config: { auth: 'none' },
    },
    async (request) => presentPublicInvite(await findInviteForToken(services, 'workspace', request.params.token)),
  );

  app.post(
    '/api/invites/:token',
    {
      schema: {
        summary: 'Accept a workspace invite',
        description:
          'Needs a signed-in session (API keys get 403) whose e-mail is the invited one (403 otherwise; the invite stays open). Makes the user a member with the invited role (an existing member keeps their role) and uses the token up. A used, revoked, expired or unknown token is 404; an archived workspace is 409; 402 at the humans cap.',
        tags: ['members'],
        params: InviteToken,
        response: { 200: AcceptedWorkspaceInvite, 402: OverLimitBody, ...errorResponses },
      },
    },
    async (request) => {
      const { invite, member } = await acceptWorkspaceInvite(services, requireActor(request), request.params.token);
      return { invite: presentInvite(invite), member: presentMember(member) };
    },
  );
}
