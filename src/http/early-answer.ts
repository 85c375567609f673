import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { App } from './types';

/**
 * A request answered while its body is still arriving (a body past its
 * limit, or a refusal that did not need the body: 401, 404, 429, ...) is
 * not read any further, and its connection closes after the answer. Left to
 * itself, Node reads such a body to its end after the answer, however large,
 * only to throw it away (issue 33 item 8).
 *
 * The close goes in stages (RFC 9112 §9.6): the answer, then our end of the
 * connection, and the whole connection only after a grace period. Closing
 * at once, with the client's bytes unread, makes the kernel answer them with
 * a reset, and a client that is still sending then loses the answer before
 * it has read it. During the grace nothing more is read: the client's bytes
 * wait in the buffers until the connection goes.
 */

/** How long a client that is still sending has to read the answer (Go's net/http waits 500 ms). */
const CLOSE_GRACE_MS = 1000;

export function closeAfterEarlyAnswers(app: App) {
  // A callback, not an async hook: every answer passes here, nearly all with their body read.
  app.addHook('onSend', (request, reply, payload, done) => {
    const body = request.raw;
    // A connection already gone has nothing left to close.
    if (!body.complete && body.socket && !body.socket.destroyed) {
      reply.header('connection', 'close');
      stopReading(body);
      closeInStages(body.socket);
    }
    done(null, payload);
  });
}

function stopReading(body: IncomingMessage) {
  body.unpipe();
  body.pause();
  // Node reads a body nobody consumed to its end once the answer is sent; taking what is buffered
  // counts as consuming it. Paused, the body fills its buffer once more and Node stops reading the socket.
  body.read();
}

/** Node ends a `Connection: close` socket with `destroySoon()`, which destroys it as soon as the answer is written. */
function closeInStages(socket: Socket) {
  socket.destroySoon = () => {
    socket.end();
    const grace = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    grace.unref();
    socket.once('close', () => clearTimeout(grace));
  };
}
