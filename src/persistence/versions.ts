import { sql } from 'kysely';
import { bytea, byteaAsBase64, fromBase64 } from './bytea';
import type { Db, Executor } from './database';
import type { PrincipalKind } from './schema';
import type { AuthorKind } from '../model/roles';
import { principalKey, type PrincipalKey } from '../model/attribution';
import { decodeContent, encodeContent, type EncodedContent } from './version-content';
import { reachingBackTo, readLogPage, rowAuthor, updatesHeldIn, updatesOfLogRows } from './document-log';

/**
 * Stored versions of surfaces, the per-document cursor of the version
 * indexer, and base holds (see migration 0070 and docs/VERSIONS.md).
 * Version content is JSON compressed with gzip: a listed version never
 * needs the update log again. Every read by surface also names the
 * workspace: a sheet id is a key of the table document, which a sync
 * client may set to another workspace's surface id.
 */

export type VersionKind = 'auto' | 'named';

export type EditorCount = { principalType: PrincipalKind | null; id: string | null; edits: number };

export type VersionChanges = { unit: 'rows' | 'blocks' | 'lines'; added: number; removed: number; changed: number; columnsChanged?: boolean };

/** The version a restore brought back, as it was when restored (retention may remove it later). */
export type RestoredFrom = { versionId: string; name: string | null; createdAt: string };

export type StoredVersion = {
  id: string;
  workspaceId: string;
  surfaceId: string;
  document: string;
  kind: VersionKind;
  name: string | null;
  seq: number;
  startPoint: boolean;
  createdAt: Date;
  author: { principalType: PrincipalKind; id: string } | null;
  editors: EditorCount[];
  changes: VersionChanges | null;
  contentBytes: number;
  /** Set when a restore made this version. */
  restoredFrom: RestoredFrom | null;
};

/** `moved`: an existing automatic version (a growing session's end) that moves on to this point under its id. */
export type NewVersion = Omit<StoredVersion, 'contentBytes' | 'restoredFrom'> & { content: unknown; moved?: boolean; restoredFrom?: RestoredFrom };

const META = [
  'id',
  'workspaceId',
  'surfaceId',
  'document',
  'kind',
  'name',
  'seq',
  'startPoint',
  'createdAt',
  'principalType',
  'principalId',
  'editors',
  'changes',
  'contentBytes',
  'restoredFrom',
] as const;

type MetaRow = {
  id: string;
  workspaceId: string;
  surfaceId: string;
  document: string;
  kind: VersionKind;
  name: string | null;
  seq: number | string;
  startPoint: boolean;
  createdAt: Date;
  principalType: PrincipalKind | null;
  principalId: string | null;
  editors: unknown;
  changes: unknown;
  contentBytes: number;
  restoredFrom: unknown;
};

function json<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function toVersion(row: MetaRow): StoredVersion {
  const changes = json<VersionChanges | Record<string, never>>(row.changes, {});
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    surfaceId: row.surfaceId,
    document: row.document,
    kind: row.kind,
    name: row.name,
    seq: Number(row.seq),
    startPoint: row.startPoint,
    createdAt: row.createdAt,
    author: row.principalType && row.principalId ? { principalType: row.principalType, id: row.principalId } : null,
    editors: json<EditorCount[]>(row.editors, []),
    changes: 'unit' in changes ? (changes as VersionChanges) : null,
    contentBytes: row.contentBytes,
    restoredFrom: json<RestoredFrom | null>(row.restoredFrom, null),
  };
}

/** A version ready to write: its content already encoded (by `prepareVersions`, or by the history thread). */
export type PreparedVersion = Omit<NewVersion, 'content'> & { encoded: EncodedContent };

/** Compresses content before a transaction is opened, so no transaction waits on gzip. */
export async function prepareVersions(versions: ReadonlyArray<NewVersion>): Promise<PreparedVersion[]> {
  return Promise.all(versions.map(async (version) => ({ ...version, encoded: await encodeContent(version.content) })));
}

/** Auto versions are unique per surface and log position: writing one again replaces it (an open session's point moved on). */
export async function writeVersions(db: Executor, versions: ReadonlyArray<PreparedVersion>): Promise<void> {
  for (const version of versions) {
    const values = {
      id: version.id,
      workspaceId: version.workspaceId,
      surfaceId: version.surfaceId,
      document: version.document,
      kind: version.kind,
      name: version.name,
      seq: version.seq,
      startPoint: version.startPoint,
      createdAt: version.createdAt,
      principalType: version.author?.principalType ?? null,
      principalId: version.author?.id ?? null,
      editors: JSON.stringify(version.editors),
      changes: JSON.stringify(version.changes ?? {}),
      content: version.encoded.bytes,
      contentBytes: version.encoded.size,
      ...(version.restoredFrom ? { restoredFrom: JSON.stringify(version.restoredFrom) } : {}),
    };
    if (version.kind === 'named') {
      await db.insertInto('surfaceVersions').values(values).execute();
      continue;
    }
    if (version.moved) {
      const { id, workspaceId, surfaceId, document, kind, name, ...moved } = values;
      await db.updateTable('surfaceVersions').set(moved).where('id', '=', id).where('kind', '=', 'auto').execute();
      continue;
    }
    await db
      .insertInto('surfaceVersions')
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(['surfaceId', 'seq'])
          .where('kind', '=', 'auto')
          .doUpdateSet({
            startPoint: sql`surface_versions.start_point or excluded.start_point`,
            createdAt: values.createdAt,
            principalType: values.principalType,
            principalId: values.principalId,
            editors: values.editors,
            changes: values.changes,
            content: values.content,
            contentBytes: values.contentBytes,
            // A pass that reaches a restore's point keeps it marked as the restore; the restore writing its point after a pass marks it.
            restoredFrom: sql`coalesce(excluded.restored_from, surface_versions.restored_from)`,
          }),
      )
      .execute();
  }
}

/**
 * Versions of a surface, newest first: by log position; at one position a
 * named version comes before the automatic one (it was named once that
 * state existed), then by id.
 */
export async function listVersions(
  db: Executor,
  workspaceId: string,
  surfaceId: string,
  options: { limit: number; before?: { seq: number; kind: VersionKind; id: string } },
): Promise<StoredVersion[]> {
  let query = db.selectFrom('surfaceVersions').select(META).where('workspaceId', '=', workspaceId).where('surfaceId', '=', surfaceId);
  if (options.before) {
    const { seq, kind, id } = options.before;
    query = query.where((eb) => eb(eb.refTuple('seq', 'kind', 'id'), '<', eb.tuple(seq, kind, id)));
  }
  const rows = await query.orderBy('seq', 'desc').orderBy('kind', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
  return rows.map((row) => toVersion(row as MetaRow));
}

export async function findVersion(db: Executor, workspaceId: string, surfaceId: string, id: string): Promise<StoredVersion | null> {
  const row = await db
    .selectFrom('surfaceVersions')
    .select(META)
    .where('workspaceId', '=', workspaceId)
    .where('surfaceId', '=', surfaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toVersion(row as MetaRow) : null;
}

/** Any stored version of the surface at exactly this log position (a base that compaction folded). */
export async function findVersionAt(db: Executor, workspaceId: string, surfaceId: string, seq: number): Promise<StoredVersion | null> {
  const row = await db
    .selectFrom('surfaceVersions')
    .select(META)
    .where('workspaceId', '=', workspaceId)
    .where('surfaceId', '=', surfaceId)
    .where('seq', '=', seq)
    .orderBy('kind') // auto before named: its content is the replayed state at exactly `seq`
    .limit(1)
    .executeTakeFirst();
  return row ? toVersion(row as MetaRow) : null;
}

/** Every stored version of a document's surfaces at exactly this log position. */
export async function findDocumentVersionsAt(db: Executor, document: string, seq: number): Promise<StoredVersion[]> {
  const rows = await db.selectFrom('surfaceVersions').select(META).where('document', '=', document).where('seq', '=', seq).execute();
  return rows.map((row) => toVersion(row as MetaRow));
}

/** The surface's newest version before log position `seq` (what a new point's changes are counted against). */
export async function latestVersionBefore(
  db: Executor,
  workspaceId: string,
  surfaceId: string,
  seq: number,
  excludedIds: readonly string[] = [],
): Promise<StoredVersion | null> {
  let query = db.selectFrom('surfaceVersions').select(META).where('workspaceId', '=', workspaceId).where('surfaceId', '=', surfaceId).where('seq', '<', seq);
  if (excludedIds.length > 0) query = query.where('id', 'not in', [...excludedIds]);
  // At one position the auto point (the replayed state) is the reference.
  const row = await query.orderBy('seq', 'desc').orderBy('kind').limit(1).executeTakeFirst();
  return row ? toVersion(row as MetaRow) : null;
}

export async function versionContent<T>(db: Executor, id: string): Promise<T> {
  return decodeContent<T>(await encodedVersionContent(db, id));
}

/** A version's content as stored (`decodeContent` reads it): for the history thread, which decodes it there. */
export async function encodedVersionContent(db: Executor, id: string): Promise<Uint8Array> {
  const row = await db.selectFrom('surfaceVersions').select('content').where('id', '=', id).executeTakeFirstOrThrow();
  return toBytes(row.content);
}

/** Auto versions older than `before` in organisations on `plan`; named versions are never touched. Returns how many went. */
export async function deleteExpiredVersions(db: Executor, plan: string, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('surfaceVersions')
    .where('kind', '=', 'auto')
    .where('createdAt', '<', before)
    .where('workspaceId', 'in', (eb) =>
      eb.selectFrom('workspaces').innerJoin('orgs', 'orgs.id', 'workspaces.orgId').select('workspaces.id').where('orgs.plan', '=', plan as never),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---------------------------------------------------------------------------
// The update log, read for history

export type LogEntry = { seq: number; createdAt: Date; author: { principalType: PrincipalKind; id: string } | null };

/** A logged update as `readLogAfter` returns it, from what its append wrote and returned. */
export function historyUpdateOf(seq: number, createdAt: Date, update: Uint8Array, author: { principalType: AuthorKind; id: string } | null): HistoryUpdate {
  const row = { principalType: author?.principalType ?? null, principalId: author?.id ?? null };
  return { seq, createdAt, update, author: logAuthor(row), attributedTo: principalKey(row.principalType, row.principalId) };
}

/** A log row's author; updates from the system carry none. */
function logAuthor(row: { principalType: AuthorKind | null; principalId: string | null }): LogEntry['author'] {
  // Versions name people and agents; a form's rows are its own (their creator), not an editing session's.
  if (row.principalType === 'form') return null;
  return row.principalType && row.principalId ? { principalType: row.principalType, id: row.principalId } : null;
}

/** The document's newest log position: its last update, or what the snapshot folded when the log is empty. */
export async function logHead(db: Executor, document: string): Promise<number> {
  const row = await sql<{ head: number | string | null }>`
    select greatest(
      (select max(seq) from document_updates where document = ${document}),
      (select upto_seq from document_snapshots where document = ${document})
    ) as head
  `.execute(db);
  return Number(row.rows[0]?.head ?? 0);
}

// ---------------------------------------------------------------------------
// Cursors

export type OpenSession = { startSeq: number; startedAt: string; endSeq: number };

export type VersionCursor = {
  uptoSeq: number;
  /** History begins at this log position (0: with the document). */
  historyFromSeq: number;
  historyFrom: Date | null;
  /** The newest session of each principal (`type:id`, or `system`), while it may still grow. */
  sessions: Record<string, OpenSession>;
};

export async function loadCursor(db: Executor, document: string): Promise<VersionCursor | null> {
  // Not the checkpoint: it is read only when a pass needs it (loadCheckpoint).
  const row = await db.selectFrom('versionCursors').select(['uptoSeq', 'historyFromSeq', 'historyFrom', 'sessions']).where('document', '=', document).executeTakeFirst();
  if (!row) return null;
  return {
    uptoSeq: Number(row.uptoSeq),
    historyFromSeq: Number(row.historyFromSeq),
    historyFrom: row.historyFrom,
    sessions: json<Record<string, OpenSession>>(row.sessions, {}),
  };
}

/**
 * Moves the cursor from `expectedUpto` (null: there was none) to `cursor`.
 * False when another pass moved it first; the caller's transaction is then
 * rolled back, so two instances never record the same stretch twice.
 */
export async function advanceCursor(db: Executor, document: string, cursor: VersionCursor, expectedUpto: number | null, checkpoint?: Uint8Array): Promise<boolean> {
  const values = {
    uptoSeq: cursor.uptoSeq,
    historyFromSeq: cursor.historyFromSeq,
    historyFrom: cursor.historyFrom,
    sessions: JSON.stringify(cursor.sessions),
    ...(checkpoint ? { state: bytea(checkpoint) } : {}),
  };
  if (expectedUpto === null) {
    const inserted = await db
      .insertInto('versionCursors')
      .values({ document, ...values })
      .onConflict((oc) => oc.column('document').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
  }
  const updated = await db.updateTable('versionCursors').set(values).where('document', '=', document).where('uptoSeq', '=', expectedUpto).executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** The checkpoint stored with the cursor: the document's state at `seq` (null when none was written yet). */
export async function loadCheckpoint(db: Executor, document: string): Promise<{ seq: number; state: Uint8Array } | null> {
  const row = await db
    .selectFrom('versionCursors')
    .select(['uptoSeq', byteaAsBase64('state').as('state')])
    .where('document', '=', document)
    .where('state', 'is not', null)
    .executeTakeFirst();
  return row?.state ? { seq: Number(row.uptoSeq), state: fromBase64(row.state) } : null;
}

// ---------------------------------------------------------------------------
// Base holds

/** Keeps `seq` reconstructible for this document for the bucket's lifetime (the lowest seq handed out in the bucket wins). */
export async function holdBase(db: Executor, document: string, bucket: Date, seq: number): Promise<void> {
  await db
    .insertInto('documentHolds')
    .values({ document, bucket, seq })
    .onConflict((oc) => oc.columns(['document', 'bucket']).doUpdateSet({ seq: sql`least(document_holds.seq, excluded.seq)` }))
    .execute();
}

/** The lowest held log position of buckets that started at or after `since`, or null. */
export async function lowestHold(db: Executor, document: string, since: Date): Promise<number | null> {
  const row = await db
    .selectFrom('documentHolds')
    .select((eb) => eb.fn.min('seq').as('seq'))
    .where('document', '=', document)
    .where('bucket', '>=', since)
    .executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? null : Number(row.seq);
}

export async function pruneHolds(db: Executor, before: Date): Promise<void> {
  await db.deleteFrom('documentHolds').where('bucket', '<', before).execute();
}

function toBytes(value: Uint8Array): Uint8Array {
  return value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike);
}

// ---------------------------------------------------------------------------
// The stored document, read for history

/** A logged update as history reads it; `attributedTo` names its principal as attribution does (a form's rows too, which versions leave unnamed). */
export type HistoryUpdate = LogEntry & { update: Uint8Array; attributedTo: PrincipalKey };

export type HistorySource = {
  snapshot: { state: Uint8Array; uptoSeq: number; storedAt: Date } | null;
  /** Updates after the snapshot, in log order, up to `uptoSeq` when given. */
  updates: HistoryUpdate[];
};

/**
 * The snapshot and the log after it (up to `uptoSeq`), read in one
 * repeatable-read transaction so a compaction committing in between cannot
 * make the two disagree.
 */
export async function loadHistorySource(db: Db, document: string, uptoSeq?: number): Promise<HistorySource> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const snapshot = await tx
        .selectFrom('documentSnapshots')
        .select([byteaAsBase64('state').as('state'), 'uptoSeq', 'updatedAt'])
        .where('document', '=', document)
        .executeTakeFirst();
      const afterSeq = Number(snapshot?.uptoSeq ?? 0);
      let query = tx
        .selectFrom('documentUpdates')
        .select(['seq', 'firstSeq', byteaAsBase64('update').as('update'), 'createdAt', 'principalType', 'principalId'])
        .where('document', '=', document)
        .where('seq', '>', afterSeq);
      if (uptoSeq !== undefined) query = query.where(reachingBackTo(uptoSeq));
      const rows = await query.orderBy('seq').execute();
      return {
        snapshot: snapshot ? { state: fromBase64(snapshot.state), uptoSeq: Number(snapshot.uptoSeq), storedAt: snapshot.updatedAt } : null,
        updates: updatesOfLogRows(rows, (r) => fromBase64(r.update), afterSeq, uptoSeq).map(({ row, seq, update }) => historyUpdateOf(seq, row.createdAt, update, rowAuthor(row))),
      };
    });
}

/** What the snapshot folded (no state bytes): where history and the log start. */
export async function snapshotInfo(db: Executor, document: string): Promise<{ uptoSeq: number; storedAt: Date } | null> {
  const row = await db.selectFrom('documentSnapshots').select(['uptoSeq', 'updatedAt']).where('document', '=', document).executeTakeFirst();
  return row ? { uptoSeq: Number(row.uptoSeq), storedAt: row.updatedAt } : null;
}

export async function snapshotState(db: Executor, document: string): Promise<{ uptoSeq: number; state: Uint8Array } | null> {
  const row = await db
    .selectFrom('documentSnapshots')
    .select(['uptoSeq', byteaAsBase64('state').as('state')])
    .where('document', '=', document)
    .executeTakeFirst();
  return row ? { uptoSeq: Number(row.uptoSeq), state: fromBase64(row.state) } : null;
}

/**
 * At most `limit` logged updates after `afterSeq` (and up to `uptoSeq`), in
 * log order: a pass or a fold reads what is new since its cursor, a page at
 * a time, never the whole log.
 */
export async function readLogAfter(db: Executor, document: string, afterSeq: number, limit: number, uptoSeq?: number): Promise<HistoryUpdate[]> {
  const page = await readLogPage(db, document, afterSeq, limit, uptoSeq);
  readsOfTheLog.history++;
  return page.slice(0, limit).map(({ row, seq, update }) => historyUpdateOf(seq, row.createdAt, update, rowAuthor(row)));
}


/**
 * Statements that read logged updates back for history (`readLogAfter`)
 * and for attribution (attribution.ts), counted in this process: the
 * history pass takes what this process just appended from memory instead
 * (src/sync/logged-tail.ts), and tests count what is still read.
 */
export const readsOfTheLog = { history: 0, attribution: 0 };

/**
 * The log after `afterSeq` (up to `uptoSeq`) as it stands, in one statement: how many rows,
 * the newest, and how far the snapshot folded (rows after that are never
 * deleted), and their earliest and latest times. Whoever holds some of
 * those rows in memory knows from the count whether it holds all of them,
 * and from the times whether they were re-dated since (the server never
 * does; tests and benchmarks age a log to make its sessions old).
 */
export async function logTailAfter(
  db: Executor,
  document: string,
  afterSeq: number,
  uptoSeq = Number.MAX_SAFE_INTEGER,
): Promise<{ rows: number; head: number; foldedUpTo: number; earliest: Date | null; latest: Date | null }> {
  const row = await sql<{ rows: number | string; head: number | string | null; folded: number | string | null; earliest: Date | null; latest: Date | null }>`
    select coalesce(sum(${updatesHeldIn(afterSeq, uptoSeq)}), 0) as rows, max(least(seq, ${uptoSeq})) as head,
      min(created_at) as earliest, max(created_at) as latest,
      (select upto_seq from document_snapshots where document = ${document}) as folded
    from document_updates
    where document = ${document} and seq > ${afterSeq} and ${reachingBackTo(uptoSeq)}
  `.execute(db);
  const found = row.rows[0];
  return { rows: Number(found?.rows ?? 0), head: Number(found?.head ?? afterSeq), foldedUpTo: Number(found?.folded ?? 0), earliest: found?.earliest ?? null, latest: found?.latest ?? null };
}

/** Who made the update at `seq`, and when (null: not in the log). */
export async function logEntryAt(db: Executor, document: string, seq: number): Promise<LogEntry | null> {
  const row = await db
    .selectFrom('documentUpdates')
    .select(['createdAt', 'principalType', 'principalId'])
    .where('document', '=', document)
    // The row that holds it: itself, or the run that reaches back to it.
    .where('seq', '>=', seq)
    .where(reachingBackTo(seq))
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  return row ? { seq, createdAt: row.createdAt, author: logAuthor(row) } : null;
}

/** The first logged update after `afterSeq` whose events are not derived yet (compaction folds only up to it), or null. */
export async function firstUnderived(db: Executor, document: string, afterSeq: number): Promise<number | null> {
  const row = await sql<{ seq: number | string | null }>`
    select min(seq) as seq from underived_updates, unnest(seqs) as seq where document = ${document} and seq > ${afterSeq}`.execute(db);
  const seq = row.rows[0]?.seq;
  return seq === null || seq === undefined ? null : Number(seq);
}

/** Marks the auto versions of a document at these positions as start points (never moved away by a growing session). */
export async function markStartPoints(db: Executor, document: string, seqs: readonly number[]): Promise<void> {
  if (seqs.length === 0) return;
  await db.updateTable('surfaceVersions').set({ startPoint: true }).where('document', '=', document).where('kind', '=', 'auto').where('seq', 'in', [...seqs]).execute();
}

/**
 * The auto versions at these positions that an extended session may move
 * on (under the same id): not start points, and the newest version of their
 * surface (a version after one means someone else's point was counted
 * against it, so it stays where it is).
 */
export async function movablePoints(db: Executor, document: string, seqs: readonly number[]): Promise<StoredVersion[]> {
  if (seqs.length === 0) return [];
  const rows = await db
    .selectFrom('surfaceVersions as v')
    .select(META.map((column) => `v.${column}` as const))
    .where('v.document', '=', document)
    .where('v.kind', '=', 'auto')
    .where('v.startPoint', '=', false)
    .where('v.seq', 'in', [...seqs])
    .where((eb) => eb.not(eb.exists(eb.selectFrom('surfaceVersions as later').select('later.id').whereRef('later.workspaceId', '=', 'v.workspaceId').whereRef('later.surfaceId', '=', 'v.surfaceId').whereRef('later.seq', '>', 'v.seq'))))
    .execute();
  return rows.map((row) => toVersion(row as MetaRow));
}
