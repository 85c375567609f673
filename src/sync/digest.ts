import type { onStatelessPayload } from '@hocuspocus/server';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/index';
import { DIGEST_MESSAGE, documentDigest, judgeDigest, parseDigestMessage, type DigestReply } from '../model/sync-digest';

type OpenDivergence = { documentName: string; side: 'server' | 'client'; since: number };

/**
 * Answers the digest questions of sync clients (src/model/sync-digest.ts,
 * docs/SYNC-DOCUMENTS.md "Digests"). Hocuspocus calls `onStateless` in the
 * connection's message order, after every earlier message of the client was
 * logged and applied; the answer waits for the document's server changes
 * still being committed, so the state it describes is durable and has been
 * broadcast to the client before the answer goes out.
 */
export class DigestResponder {
  /** Per connection: the divergence a check found and no later check has found healed. */
  private readonly open = new WeakMap<object, OpenDivergence>();

  constructor(
    private readonly deps: {
      log: Logger;
      metrics?: Metrics;
      /** Resolves once no server change of the document is being committed. */
      committed(documentName: string): Promise<void>;
    },
  ) {}

  /** True when the payload was a digest question (answered or refused), false for other stateless messages. */
  answer({ connection, documentName, document, payload }: onStatelessPayload): boolean {
    if (!payload.includes(DIGEST_MESSAGE)) return false;
    const request = parseDigestMessage(payload);
    if (!request || request.serverMissing !== undefined) return true;
    void this.deps
      .committed(documentName)
      .then(() => {
        const server = documentDigest(document);
        const { serverMissing, diverged } = judgeDigest(server, request);
        const reply: DigestReply = { type: DIGEST_MESSAGE, id: request.id, ...server, serverMissing };
        if (!connection.readOnly) this.record(connection, documentName, diverged ? (serverMissing ? 'server' : 'client') : null, request.diverged === 'client');
        connection.sendStateless(JSON.stringify(reply));
      })
      .catch((error) => this.deps.log.warn({ err: error, documentName }, 'could not answer a sync digest question'));
    return true;
  }

  /**
   * `side` is what this check found (null: the states agree); `clientFound`
   * says the client found, at its previous check, that it lacked server
   * state, and has since asked for it.
   */
  private record(connection: object, documentName: string, side: 'server' | 'client' | null, clientFound: boolean) {
    if (clientFound && !this.open.has(connection)) this.detected(connection, documentName, 'client');
    const open = this.open.get(connection);
    if (side === null) {
      if (!open) return;
      this.open.delete(connection);
      this.deps.metrics?.syncDivergencesHealed.inc();
      this.deps.log.info({ documentName, side: open.side, ms: Date.now() - open.since }, 'sync divergence healed');
      return;
    }
    if (!open) this.detected(connection, documentName, side);
  }

  private detected(connection: object, documentName: string, side: 'server' | 'client') {
    this.open.set(connection, { documentName, side, since: Date.now() });
    this.deps.metrics?.syncDivergences.inc({ side });
    this.deps.log.warn({ documentName, side }, side === 'server' ? 'sync divergence: the server lacks part of a client\'s state (a lost update); the client is sending it again' : 'sync divergence: a client lacks part of the server\'s state; it is asking for it again');
  }
}
