/**
 * A workspace's live events. Not an operation: a Server-Sent Events stream
 * holds the connection, replays what a reconnecting client missed and ends
 * when its credential does. The audit log (JSON) is in src/operations/events.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { EventRecord } from '../model/event-record';
import { resolveActor, SESSION_COOKIE } from '../http/authenticate';
import { lastEventIdOf, openEventStream, SSE_PING_MS } from '../http/sse';
import { RecentIds } from '../lib/recent-ids';
import { StreamAccessMonitor } from '../http/stream-access';
import type { App } from '../http/types';
import { resolveWorkspace, type ResolvedWorkspace } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import { listWorkspaceEventsAfter } from '../persistence/events';
import { visibleTo } from '../operations/events';
import type { Services } from '../domain/services';
import { errorResponses } from '../model/schemas/common';

const RESUME_BATCH = 500;

const SubscribeQuery = z.strictObject({
  lastEventId: z.string().regex(/^\d+$/).optional().describe('For clients that cannot send the Last-Event-ID header'),
});

/** A frame; its `id:` is the stream's resume cursor, the highest event id sent so far (see streamEvents). */
function frame(record: EventRecord, cursor: number): string {
  return `id: ${cursor}\nevent: ${record.event}\ndata: ${JSON.stringify(record)}\n\n`;
}

/** Event ids a stream remembers having sent, to send each once. */
const SENT_IDS_KEPT = 10_000;

export async function eventRoutes(app: App, services: Services) {
  const streams = new StreamAccessMonitor();
  streams.start();
  app.addHook('onClose', async () => streams.stop());

  for (const url of workspacePaths('/subscribe')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Live events (Server-Sent Events)',
          description:
            'A `text/event-stream` of every change: `id: <eventId>`, `event: <name>`, `data: <event record>`. Reconnect with `Last-Event-ID` to receive what was missed first. Each event is sent once; one that commits after an event with a higher id (concurrent writers) is sent when it commits, and its `id:` line then repeats the highest id sent so far, so the resume point never moves back. `: ping` every 15 s.',
          tags: ['events'],
          params: WorkspaceParams,
          querystring: SubscribeQuery,
          response: { 200: z.string().describe('text/event-stream'), ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const lastEventId = lastEventIdOf(request, request.query.lastEventId, /^\d+$/);
        await streamEvents(services, streams, request, reply, resolved, lastEventId === null ? null : Number(lastEventId));
      },
    );
  }
}

async function streamEvents(
  services: Services,
  streams: StreamAccessMonitor,
  request: FastifyRequest,
  reply: FastifyReply,
  resolved: ResolvedWorkspace,
  lastEventId: number | null,
) {
  const raw = openEventStream(request, reply);

  // Subscribe before reading the log, so nothing committed in between is lost; duplicates are skipped by id.
  // Ids are drawn when an event is inserted and events are published when they commit, so on Postgres (and
  // across instances) an event can arrive after one with a higher id: it is sent all the same, each id once,
  // and the frame's `id:` (what a reconnecting client resumes after) stays the highest id sent, never going back.
  let cursor = lastEventId ?? 0;
  let replaying = lastEventId !== null;
  const buffered: EventRecord[] = [];
  const sent = new RecentIds(SENT_IDS_KEPT);
  const send = (record: EventRecord) => {
    const id = Number(record.eventId);
    if ((lastEventId !== null && id <= lastEventId) || sent.has(record.eventId) || !visibleTo(resolved, record)) return;
    sent.add(record.eventId);
    cursor = Math.max(cursor, id);
    raw.write(frame(record, cursor));
  };
  const unsubscribe = services.events.subscribeWorkspace(resolved.workspace.id, (record) => (replaying ? buffered.push(record) : send(record)));

  const ping = setInterval(() => void keepAlive(), SSE_PING_MS);
  // The stream ends within a second of its credential, or its access to the workspace, going away.
  const unwatch = streams.watch(`${credentialKey(request)}\u0000${resolved.workspace.id}`, () => stillAllowed(services, request, resolved.workspace.id), () => close());
  const close = () => {
    clearInterval(ping);
    unwatch();
    unsubscribe();
    if (!raw.writableEnded) raw.end();
  };
  request.raw.on('close', close);

  // The monitor above ends the stream; each ping also refreshes what it may see, so a changed
  // `commentsOnPublicShare` decides which comment events public readers get from then on.
  async function keepAlive() {
    try {
      const { actor } = await resolveActor(services, request);
      resolved = await resolveWorkspace(services, actor, { slug: resolved.workspace.id }, 'read');
      raw.write(': ping\n\n');
    } catch {
      close();
    }
  }

  if (lastEventId !== null) {
    try {
      for (;;) {
        const missed = await listWorkspaceEventsAfter(services.db, resolved.workspace.id, cursor, RESUME_BATCH);
        missed.forEach(send);
        if (missed.length < RESUME_BATCH) break;
      }
    } finally {
      replaying = false;
      buffered.forEach(send);
      buffered.length = 0;
    }
  }
}

/**
 * Asked as the request was: a bearer credential that no longer resolves ends
 * the stream (it must not fall back to reading as anonymous); an ended
 * session reads on as anonymous, as a stale cookie does on public routes.
 */
async function stillAllowed(services: Services, request: FastifyRequest, workspaceId: string): Promise<boolean> {
  const { actor, invalid } = await resolveActor(services, request);
  if (invalid && request.headers.authorization) return false;
  await resolveWorkspace(services, actor, { slug: workspaceId }, 'read');
  return true;
}

function credentialKey(request: FastifyRequest): string {
  return request.headers.authorization ?? `cookie:${request.cookies?.[SESSION_COOKIE] ?? ''}`;
}
