import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { completeDirectUpload, startDirectUpload } from '../domain/file-uploads';
import { FILE_LIMITS } from '../domain/files';
import { errors, zodIssuesError } from '../errors';
import { ErrorBody } from '../model/schemas/common';
import { ClientPayload, DirectUploadTicket, FileRecord, presentFile, UploadParams } from './file-schemas';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';

/**
 * Direct uploads into files surfaces (SPEC "Files"; API-DECISIONS "Files"):
 * `POST /files { clientPayload }` reserves the storage and answers
 * `{ uploadId, uploadUrl, method: "PUT", headers, expiresAt }`; the client
 * PUTs the bytes to `uploadUrl` (with progress, from a browser) and then
 * calls `POST /files/uploads/{uploadId}/complete`. The PUT to this server's
 * one-shot URL (local store) and the proxy upload (multipart) are
 * hand-written routes in src/api/file-uploads.ts.
 */

const HandshakeBody = z.strictObject({
  clientPayload: z
    .union([z.string().max(10_000).describe('JSON text of a FileClientPayload'), ClientPayload])
    .describe('`{ surfaceSlug, parentFolderId, name, size, contentType }`, as JSON text (what storage client libraries send) or as an object'),
});

function parseClientPayload(value: string | z.infer<typeof ClientPayload>): z.infer<typeof ClientPayload> {
  let candidate: unknown = value;
  if (typeof value === 'string') {
    try {
      candidate = JSON.parse(value);
    } catch {
      throw errors.badRequest('`clientPayload` is not valid JSON.', [{ path: ['clientPayload'], code: 'invalid_json', message: 'expected JSON text' }]);
    }
  }
  const parsed = ClientPayload.safeParse(candidate);
  if (!parsed.success) throw zodIssuesError(parsed.error.issues, ['clientPayload']);
  return parsed.data;
}

export const fileUploadOperations = {
  start: defineOperation(
    {
      params: WorkspaceParams, body: HandshakeBody, response: DirectUploadTicket,
      rest: {
        method: 'POST',
        workspacePath: '/files',
        summary: 'Start a direct upload',
        description:
          'Checks the target, the name and the size, and reserves the size against the organisation’s storage quota (413 `storage_quota` with `details { current, cap }` when it does not fit). PUT exactly `size` bytes to `uploadUrl` with `headers` within an hour, then call `complete` (on the local store the PUT completes by itself and answers the File). Zero bytes is 422.',
        tags: ['files'],
        responses: { 413: ErrorBody },
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      const payload = parseClientPayload(body.clientPayload);
      if (payload.size > FILE_LIMITS.directUploadBytes) {
        throw errors.payloadTooLarge(`A direct upload holds at most ${FILE_LIMITS.directUploadBytes / 1024 ** 3} GiB.`);
      }
      const ticket = await startDirectUpload(services, caller, { workspace, orgSlug }, {
        ...payload,
        parentFolderId: payload.parentFolderId ?? null,
        contentType: payload.contentType ?? '',
      });
      return { ...ticket, expiresAt: ticket.expiresAt.toISOString() };
    },
  ),
  complete: defineOperation(
    {
      params: UploadParams, response: FileRecord,
      rest: {
        method: 'POST',
        workspacePath: '/files/uploads/:uploadId/complete',
        summary: 'Complete a direct upload',
        description:
          'Checks that the object at `uploadUrl` has the declared size (400 otherwise: PUT again), checks and processes the bytes like a proxy upload (422 when they contradict the declared type; the upload is then dropped) and creates the file (`file.uploaded`). Completing again answers the same file. Only whoever started the upload can complete it.',
        tags: ['files'],
        responses: { 413: ErrorBody },
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { workspace, orgSlug } = await resolveWorkspace(services, caller, addressOf(params), 'write_files');
      return presentFile(services, await completeDirectUpload(services, caller, { workspace, orgSlug }, params.uploadId));
    },
  ),
};
