/**
 * The floors of `npm run bench -- write-path` (bench/write-path.ts): what a
 * competent server with Trellis's guarantee (acknowledged means on stable
 * storage) needs, and nothing more.
 *
 * `GroupCommitLog`: appends Y updates to `document_updates`, one multi-row
 * INSERT in flight at a time while the next batch collects, and resolves
 * each append once the statement holding it has committed. The bare durable
 * Hocuspocus (bench/doc-trace-server.ts `bare-durable`) hands it every
 * update as its bytes arrive and applies (and so acknowledges) a message
 * only after its append resolved, in arrival order.
 */
import { sql } from 'kysely';
import type { Db } from '../src/persistence/database';

/** As many rows as Trellis's own appends put in one statement (src/persistence/document-log.ts). */
const ROWS_PER_STATEMENT = 10_000;

export class GroupCommitLog {
  private collecting: Array<{ document: string; update: string; done: (error?: unknown) => void }> = [];
  private inFlight = false;
  /** Commits and the updates they held, for the figures. */
  readonly stats = { commits: 0, updates: 0 };

  constructor(private readonly db: Db) {}

  append(document: string, update: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      // Base64 as Trellis sends it (src/persistence/bytea.ts): PGlite hex-encodes a bytea parameter byte by byte.
      this.collecting.push({ document, update: Buffer.from(update.buffer, update.byteOffset, update.byteLength).toString('base64'), done: (error) => (error ? reject(error) : resolve()) });
      if (!this.inFlight) void this.commitNext();
    });
  }

  private async commitNext(): Promise<void> {
    this.inFlight = true;
    while (this.collecting.length > 0) {
      // A statement takes at most 65,535 parameters: a batch that collected more (a client far ahead of the commits) goes in several.
      const batch = this.collecting.splice(0, ROWS_PER_STATEMENT);
      try {
        const values = batch.map((entry) => sql`(${entry.document}, decode(${entry.update}, 'base64'))`);
        await sql`insert into document_updates (document, update) values ${sql.join(values)}`.execute(this.db);
        this.stats.commits++;
        this.stats.updates += batch.length;
        for (const entry of batch) entry.done();
      } catch (error) {
        for (const entry of batch) entry.done(error);
      }
    }
    this.inFlight = false;
  }
}
