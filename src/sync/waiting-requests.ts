import type { Server as HttpServer, ServerResponse } from 'node:http';

/**
 * The HTTP requests of the server the engine is attached to that wait for
 * their answer. While one does, the engine (on Postgres) hands the event loop back more
 * often as it works through a sync client's queued messages
 * (engine.ts, MESSAGE_TURN_BUDGET_WITH_REQUESTS_MS): a REST request's every
 * step (its body read, each database round trip, its answer) waits behind at
 * most one such slice, and a typist sending hundreds of updates ahead keeps
 * slices coming back to back. A response whose headers have left (an event
 * stream) no longer counts: it waits for nothing.
 */
export class WaitingRequests {
  private readonly open = new Set<ServerResponse>();

  watch(server: HttpServer) {
    server.on('request', (_request, response: ServerResponse) => {
      this.open.add(response);
      response.once('close', () => this.open.delete(response));
    });
  }

  /** Whether some request still waits for its answer. */
  any(): boolean {
    for (const response of this.open) {
      if (!response.headersSent) return true;
      this.open.delete(response);
    }
    return false;
  }
}
