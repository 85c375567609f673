/**
 * The caller's inbox, live. Not an operation: a Server-Sent Events stream
 * holds the connection and writes frames as messages arrive. The inbox's
 * JSON route is in src/operations/messages.ts.
 */
import { z } from 'zod';
import { inboxTail, readInbox, requireInboxCaller, type InboxMessage as InboxMessageRecord } from '../domain/inbox';
import { resolveActor, requireActor } from '../http/authenticate';
import { lastEventIdOf, openEventStream, SSE_PING_MS } from '../http/sse';
import type { App } from '../http/types';
import type { Services } from '../domain/services';
import { errorResponses } from '../model/schemas/common';
import { InboxCursor as Cursor } from '../operations/messages';

const STREAM_BATCH = 100;

function frame(message: InboxMessageRecord): string {
  return `id: ${message.id}\nevent: ${message.kind}\ndata: ${JSON.stringify(message)}\n\n`;
}

export async function messageRoutes(app: App, services: Services) {
  app.get(
    '/api/me/messages/stream',
    {
      schema: {
        summary: 'Your inbox, live (Server-Sent Events)',
        description:
          'A `text/event-stream` of new messages: `id: <message id>`, `event: mention`, `data: <InboxMessage>`. Without a cursor it starts with the next ' +
          'message; reconnect with `Last-Event-ID` (or `after`) to receive what was missed first. `: ping` every 15 s; a revoked credential ends the stream.',
        tags: ['messages'],
        querystring: z.strictObject({ after: Cursor.optional() }),
        response: { 200: z.string().describe('text/event-stream'), ...errorResponses },
      },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      requireInboxCaller(actor);
      let cursor = lastEventIdOf(request, request.query.after, /^[A-Za-z0-9_-]{1,100}$/) ?? (await inboxTail(services, actor));
      // An unknown cursor is answered (404) before the stream starts.
      const first = await readInbox(services, actor, { after: cursor, limit: STREAM_BATCH });

      const raw = openEventStream(request, reply);
      let closed = false;
      let chain = Promise.resolve();
      const send = (page: Awaited<ReturnType<typeof readInbox>>) => {
        for (const message of page.messages) raw.write(frame(message));
        cursor = page.lastId ?? cursor;
        return page.nextCursor !== null;
      };
      // Drains run one after another, so no message is sent twice or out of order.
      const drain = () => {
        chain = chain.then(async () => {
          try {
            while (!closed && send(await readInbox(services, actor, { after: cursor, limit: STREAM_BATCH })));
          } catch {
            close();
          }
        });
        return chain;
      };
      const unsubscribe = services.inbox.subscribe(actor.principal.id, () => void drain());
      const ping = setInterval(() => void keepAlive(), SSE_PING_MS);
      function close() {
        if (closed) return;
        closed = true;
        clearInterval(ping);
        unsubscribe();
        if (!raw.writableEnded) raw.end();
      }
      request.raw.on('close', close);

      // The credential is checked again at every ping, and the inbox re-read: a signal from another instance lost while Redis was away is made up for here.
      async function keepAlive() {
        const { actor: current } = await resolveActor(services, request).catch(() => ({ actor: null }));
        if (!current) return close();
        await drain();
        if (!closed) raw.write(': ping\n\n');
      }

      // Subscribed after the first read: a message delivered in between is picked up here.
      send(first);
      await drain();
    },
  );
}
