/*
 * Not an operation: the answer is a streamed zip attachment, and the caller
 * is the operator holding ADMIN_TOKEN, not a user or an agent.
 */
import fs from 'node:fs/promises';
import { z } from 'zod';
import { backupFileName, streamAndRemove } from '../domain/backup';
import { BackupBusyError } from '../domain/backup-job';
import type { Services } from '../domain/services';
import { errors } from '../errors';
import type { App } from '../http/types';
import { safeEqual } from '../lib/secrets';
import { errorResponses } from '../model/schemas/common';

/** The bearer token of the admin routes; a missing ADMIN_TOKEN refuses everyone. */
export function requireAdminToken(services: Services, authorization: string | undefined) {
  const token = services.config.adminToken;
  if (!token) throw errors.unauthorized('Admin routes are off: set ADMIN_TOKEN on the server and send Authorization: Bearer <ADMIN_TOKEN>.');
  if (!safeEqual(authorization ?? '', `Bearer ${token}`)) throw errors.unauthorized('Send Authorization: Bearer <ADMIN_TOKEN>.');
}

export async function backupRoutes(app: App, services: Services) {
  app.post(
    '/api/admin/backup',
    {
      schema: {
        summary: 'Take a backup (admin)',
        description:
          'Writes a consistent backup of the whole store (database, file blobs, webhook key file) and streams it as an `application/zip` attachment ' +
          '(docs/OPERATIONS.md). Needs `Authorization: Bearer <ADMIN_TOKEN>`; 409 while another backup is written. `npm run admin -- backup` calls it ' +
          'when the server runs on the embedded database.',
        tags: ['platform'],
        response: {
          200: { description: 'The backup archive', content: { 'application/zip': { schema: z.string().describe('zip archive') } } },
          ...errorResponses,
        },
      },
      config: { auth: 'none', metered: false },
    },
    async (request, reply) => {
      requireAdminToken(services, request.headers.authorization);
      let taken;
      try {
        taken = await app.backups.takeTemporary();
      } catch (error) {
        if (error instanceof BackupBusyError) throw errors.conflict(error.message);
        throw error;
      }
      const { size } = await fs.stat(taken.file);

      return reply
        .type('application/zip')
        .header('content-length', String(size))
        .header('content-disposition', `attachment; filename="${backupFileName(new Date(taken.manifest.createdAt))}"`)
        .header('cache-control', 'no-store')
        .send(streamAndRemove(taken.file) as never);
    },
  );
}
