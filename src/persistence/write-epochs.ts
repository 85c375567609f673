import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';

/**
 * A counter that moves whenever this process writes to a table that a
 * cached read may depend on (callers, keys, sessions, workspaces, orgs,
 * memberships, surfaces, and any table added later), so read caches
 * (src/persistence/read-cache.ts) can tell a cached answer from a stale one
 * without asking the database.
 *
 * It is a deny list on purpose: every write moves the epoch except writes
 * to the tables listed in CONTENT_TABLES, which no cached read looks at and
 * which the hot write path fills. A table added by a later feature is
 * covered without anyone remembering to register it. A feature that adds a
 * table written on every request (an outbox, say) adds it there, or every
 * such write empties the caches.
 *
 * The epoch moves twice per write: when the statement is sent, and when it
 * is durable (right after it, or after the COMMIT of its transaction). A
 * read that began before the second move can only be cached under an epoch
 * that the second move retires, so nothing read before a commit outlives it.
 */

const CONTENT_TABLES = new Set([
  'document_updates',
  // What of the log is still to derive: written by every client append and every commit of its events.
  'underived_updates',
  'document_snapshots',
  // Locked (an upsert) by every append: one writer at a time per document log (document-log-heads.ts).
  'document_log_heads',
  'table_rows',
  // Beside the row projection, written with it (row-indexes.ts); a form's public token (form-links.ts).
  'row_dates',
  'row_files',
  'form_links',
  'doc_sections',
  'doc_section_parts',
  'events',
  'api_usage',
  'idempotency_keys',
  'waitlist',
  'magic_links',
  'elevation_codes',
  'elevation_grants',
  'invites',
  // The webhooks outbox (recordEvents) and its drain; file contents and upload bookkeeping.
  'webhook_deliveries',
  'webhook_usage',
  'files',
  'file_folders',
  'file_uploads',
  'file_share_tokens',
  'stored_blobs',
  'org_storage',
  'storage_reservations',
  // Comments and what they wake; MCP confirmations and OAuth codes (a token's issue or revocation is not content).
  'comments',
  'comment_reactions',
  'inbox_messages',
  'inbox_wake_dedup',
  'message_usage',
  'mcp_confirmations',
  'oauth_authorization_codes',
  // Version history (written by history passes and by reads that hand out a base); support and limit requests.
  'surface_versions',
  'version_cursors',
  'document_holds',
  'support_tickets',
  'local_tracker_issues',
  'local_tracker_counters',
  'limit_increase_requests',
  'referral_clicks',
  // What a run did and when it last wrote (runs.ts): every write of an agent joins a run, and no cached read looks at runs.
  'run_changes',
  'runs',
]);

/** The tables a statement writes, read from its SQL (covers Kysely builders and raw `sql` alike). */
const WRITE_TARGET = /\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;
const DDL = /^\s*(?:create|alter|drop)\b/i;

export function writesAccessTables(sqlText: string): boolean {
  if (DDL.test(sqlText)) return true;
  for (const match of sqlText.matchAll(WRITE_TARGET)) {
    const table = match[1]!.toLowerCase();
    // `on conflict ... do update set`, `for update`: not targets.
    if (table === 'set' || table === 'of' || table === 'nowait' || table === 'skip') continue;
    if (!CONTENT_TABLES.has(table)) return true;
  }
  return false;
}

export class WriteEpochs {
  private value = 0;

  /** The current epoch; a cached read is valid while it is unchanged. */
  get current(): number {
    return this.value;
  }

  bump() {
    this.value++;
  }

  private readonly durableListeners: Array<() => void> = [];

  /** `listener` runs each time a write that may change a cached read is durable (to retire other instances' caches). */
  onDurableWrite(listener: () => void) {
    this.durableListeners.push(listener);
  }

  /** The second move of a write: it is durable (or rolled back). */
  bumpDurable() {
    this.bump();
    for (const listener of this.durableListeners) listener();
  }

  /** Wraps a dialect so every statement and commit through it is watched. */
  watch(dialect: Dialect): Dialect {
    const epochs = this;
    return {
      createAdapter: () => dialect.createAdapter(),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createDriver: () => new WatchedDriver(dialect.createDriver(), epochs),
    };
  }
}

class WatchedDriver implements Driver {
  private readonly connections = new WeakMap<DatabaseConnection, WatchedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly epochs: WriteEpochs,
  ) {}

  init() {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let watched = this.connections.get(connection);
    if (!watched) this.connections.set(connection, (watched = new WatchedConnection(connection, this.epochs)));
    return watched;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const watched = connection as WatchedConnection;
    await this.inner.beginTransaction(watched.inner, settings);
    watched.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection) {
    await this.end(connection as WatchedConnection, () => this.inner.commitTransaction((connection as WatchedConnection).inner));
  }

  async rollbackTransaction(connection: DatabaseConnection) {
    await this.end(connection as WatchedConnection, () => this.inner.rollbackTransaction((connection as WatchedConnection).inner));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]) {
    await this.inner.savepoint?.((connection as WatchedConnection).inner, name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]) {
    await this.inner.rollbackToSavepoint?.((connection as WatchedConnection).inner, name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2]) {
    await this.inner.releaseSavepoint?.((connection as WatchedConnection).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection) {
    return this.inner.releaseConnection((connection as WatchedConnection).inner);
  }

  destroy() {
    return this.inner.destroy();
  }

  private async end(connection: WatchedConnection, finish: () => Promise<void>) {
    try {
      await finish();
    } finally {
      connection.inTransaction = false;
      if (connection.wroteAccess) {
        connection.wroteAccess = false;
        this.epochs.bumpDurable();
      }
    }
  }
}

class WatchedConnection implements DatabaseConnection {
  inTransaction = false;
  wroteAccess = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly epochs: WriteEpochs,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!writesAccessTables(query.sql)) return this.inner.executeQuery<R>(query);
    this.epochs.bump();
    try {
      return await this.inner.executeQuery<R>(query);
    } finally {
      if (this.inTransaction) this.wroteAccess = true;
      else this.epochs.bumpDurable();
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (writesAccessTables(query.sql)) this.epochs.bump();
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
