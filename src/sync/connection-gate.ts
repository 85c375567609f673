import type { Hocuspocus, onAuthenticatePayload } from '@hocuspocus/server';
import type { ConnectionContext } from './origins';

/**
 * Who may open a document and keep it open. Deciding that is an access
 * concern (src/access/connection-auth.ts, the same policy REST asks); the
 * engine only asks, so it is handed one at bootstrap and imports nothing above it.
 */
export interface ConnectionGate {
  /** Hocuspocus `onAuthenticate`: refuses by throwing; a read-only caller gets `payload.connectionConfig.readOnly`. */
  authenticate(payload: onAuthenticatePayload): Promise<ConnectionContext>;
  /** Called before every message: throws once the connection has lost its access. */
  assertStillAllowed(connection: unknown): void;
  /**
   * The run the connection's next update joins (docs/RUNS.md): the run it
   * named, the automatic run of its key, or none. Throws (closing the
   * connection) when the run it named has ended.
   */
  runOf(connection: unknown): Promise<string | null>;
  /** Starts re-deciding the open connections of `hocuspocus` (a revoked key closes them). */
  start(hocuspocus: () => Hocuspocus): void;
  stop(): void;
}
