import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * Makes the frames sent to one connection in one turn of the event loop
 * leave in one write. A typist's updates arrive many to a read, and each is
 * acknowledged and relayed to every connection of its document, the sender
 * included; ws writes each frame on its own, a `writev` system call a
 * frame, which was a tenth of the serving thread's time under the typing
 * trace (docs/PERFORMANCE.md, issue 38, session 13). The socket is corked at
 * the turn's first frame and uncorked once the turn's callbacks and
 * microtasks have run, so frames keep their order and none waits for a
 * later turn.
 */
export function writeFramesPerTurn(ws: WebSocket, socket: Duplex): void {
  const send = ws.send.bind(ws) as (...args: unknown[]) => void;
  let corked = false;
  // Only what this corked: the turn's tick finds nothing to undo when a terminate already uncorked.
  const uncork = () => {
    if (!corked) return;
    corked = false;
    socket.uncork();
  };
  // Shutdown closes every connection and terminates it in the same turn: what was corked leaves first (the close frame).
  const terminate = ws.terminate.bind(ws);
  ws.terminate = () => {
    uncork();
    terminate();
  };
  ws.send = ((...args: unknown[]) => {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    send(...args);
  }) as WebSocket['send'];
}
