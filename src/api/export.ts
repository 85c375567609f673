/*
 * Not an operation: the export is a streamed attachment (Content-Disposition,
 * no serializer), and its hourly limit buckets by the request's session.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { openExport } from '../domain/export';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { HOUR } from '../limits/rules';
import type { Services } from '../domain/services';
import { errorResponses, IsoDateTime, Role } from '../model/schemas/common';

/** Documents the streamed body; the stream itself is written by domain/export.ts in this order. */
const ExportBundle = z
  .object({
    exportedAt: IsoDateTime,
    profile: z.object({
      id: z.string(),
      email: z.string(),
      name: z.string(),
      avatarUrl: z.string().nullable(),
      primaryOrgId: z.string().nullable(),
      createdAt: IsoDateTime,
      lastSignInAt: IsoDateTime.nullable(),
    }),
    organisations: z.array(
      z.object({
        id: z.string(),
        slug: z.string(),
        name: z.string(),
        plan: z.enum(['free', 'pro', 'scale']),
        defaultWorkspaceVisibility: z.enum(['org', 'private']),
        role: Role,
        joinedAt: IsoDateTime,
      }),
    ),
    workspaces: z
      .array(
        z.object({
          id: z.string(),
          slug: z.string(),
          name: z.string(),
          mode: z.enum(['table', 'doc']),
          visibility: z.enum(['private', 'org', 'unlisted', 'public']),
          orgId: z.string(),
          orgSlug: z.string(),
          createdAt: IsoDateTime,
          archivedAt: IsoDateTime.nullable(),
        }),
      )
      .describe('Workspaces you or your agents hold a membership in'),
    memberships: z.array(
      z.object({
        workspaceId: z.string(),
        principalType: z.enum(['user', 'agent']),
        principalId: z.string(),
        role: Role,
        viaUserId: z.string().nullable(),
        pinnedAt: IsoDateTime.nullable(),
        joinedAt: IsoDateTime,
      }),
    ),
    agents: z.array(
      z.object({
        id: z.string(),
        orgId: z.string(),
        name: z.string(),
        avatarUrl: z.string().nullable(),
        modelHint: z.string().nullable(),
        createdAt: IsoDateTime,
        lastUsedAt: IsoDateTime.nullable(),
      }),
    ),
    keys: z
      .array(
        z.object({
          id: z.string(),
          orgId: z.string(),
          agentId: z.string(),
          name: z.string(),
          prefix: z.string(),
          scopeWorkspaceId: z.string().nullable(),
          role: z.enum(['editor', 'commenter', 'viewer']),
          createdAt: IsoDateTime,
          lastUsedAt: IsoDateTime.nullable(),
          revokedAt: IsoDateTime.nullable(),
        }),
      )
      .describe('Your keys, including revoked ones; never a secret or its hash'),
    sessions: z
      .array(
        z.object({
          id: z.string(),
          createdAt: IsoDateTime,
          lastSeenAt: IsoDateTime,
          expiresAt: IsoDateTime,
          revokedAt: IsoDateTime.nullable(),
          userAgent: z.string().nullable(),
        }),
      )
      .describe('Your browser sessions; never a token or its hash'),
  })
  .meta({
    id: 'DataExport',
    description: 'Everything of yours that exists. Sections are added as features arrive (rows, comments, webhooks, files); clients should ignore unknown ones.',
  });

export async function exportRoutes(app: App, services: Services) {
  app.get(
    '/api/me/export',
    {
      schema: {
        summary: 'Download all your data (GDPR export)',
        description:
          'Streamed `application/json` attachment. One per hour per user (429 rate_limited). Human sessions only; key callers get 403.',
        tags: ['me'],
        response: { 200: ExportBundle, ...errorResponses },
      },
      config: {
        rateLimits: [
          {
            endpoint: 'me_export',
            limit: 1,
            windowMs: HOUR,
            // Only sessions may export: a key's refused call must not use up its owner's hourly export.
            bucket: (request) => (request.actor?.via === 'session' ? request.actor.userId : null),
          },
        ],
      },
    },
    async (request, reply) => {
      const { filename, chunks } = await openExport(services, requireActor(request));
      // Fastify pipes a stream as it is, without the serializer; the 200 schema documents what the stream writes.
      const stream = Readable.from(chunks) as never;
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );
}
