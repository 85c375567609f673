import type { EventDraft, EventRecord } from '../model/event-record';
import { storableJson } from '../lib/text';
import type { Executor } from './database';
import { runStatement, valueTuples, type StatementHead } from './raw-statements';

/**
 * Appends events to the audit log, returning them with their ids. An event
 * whose `dedupeKey` is already recorded is skipped (and not returned): events
 * derived twice from one logged update are recorded once.
 */
export async function insertEvents(db: Executor, drafts: EventDraft[], now: Date): Promise<EventRecord[]> {
  if (drafts.length === 0) return [];
  // Written out (raw-statements.ts): every commit of a write records its events here.
  const { text, parameters } = insertStatement(drafts, now, 1);
  const rows = await runStatement<LoggedEvent>(db, text, parameters);
  return recordsOf(drafts, rows, now);
}

/**
 * `insertEvents` as the head of another statement of the same commit (the
 * row projection's upsert carries it: table-rows.ts), its parameters
 * numbered from `first`. The statement returns the `LOGGED_EVENTS` column,
 * which `recordsOfLogged` turns into the records `insertEvents` returns.
 */
export function eventsHead(drafts: readonly EventDraft[], now: Date, first: number): StatementHead {
  const { text, parameters } = insertStatement(drafts, now, first);
  return { text: `logged as (${text})`, parameters };
}

/** What a statement headed by `eventsHead` returns, on every row alike: the inserted events' `[seq, dedupe_key]` in insertion order. */
export const LOGGED_EVENTS = `(select coalesce(json_agg(json_build_array(seq, dedupe_key) order by seq), '[]'::json) from logged) as logged_events`;

/** The records of `drafts` from the `LOGGED_EVENTS` column of a statement headed by `eventsHead` (JSON text on drivers that leave it unparsed). */
export function recordsOfLogged(drafts: readonly EventDraft[], logged: unknown, now: Date): EventRecord[] {
  const pairs = (typeof logged === 'string' ? JSON.parse(logged) : (logged ?? [])) as Array<[number | string, string | null]>;
  return recordsOf(
    drafts,
    pairs.map(([seq, dedupeKey]) => ({ seq: Number(seq), dedupeKey })),
    now,
  );
}

type LoggedEvent = { seq: number; dedupeKey: string | null };

function insertStatement(drafts: readonly EventDraft[], now: Date, first: number): StatementHead {
  const parameters: unknown[] = [];
  for (const d of drafts) {
    parameters.push(
      d.orgId,
      d.workspace?.id ?? null,
      d.event,
      d.subjectId ?? null,
      d.principal?.id ?? null,
      JSON.stringify(storableJson(recordOf(d, '0', d.ts ?? now.toISOString()))),
      d.ts ? new Date(d.ts) : now,
      d.dedupeKey ?? null,
    );
  }
  const values = `${INSERT_HEAD}${valueTuples(drafts.length, INSERT_COLUMNS, first)}`;
  const keyed = drafts.some((d) => d.dedupeKey);
  return { text: keyed ? `${values} on conflict (dedupe_key) where dedupe_key is not null do nothing returning seq, dedupe_key` : `${values} returning seq, dedupe_key`, parameters };
}

/** Rows come back in insertion order, without the skipped ones: keyed drafts are matched by key, the others in order. */
function recordsOf(drafts: readonly EventDraft[], rows: readonly LoggedEvent[], now: Date): EventRecord[] {
  const byKey = new Map(rows.filter((r) => r.dedupeKey).map((r) => [r.dedupeKey!, r.seq]));
  const unkeyed = rows.filter((r) => !r.dedupeKey);
  const records: EventRecord[] = [];
  let next = 0;
  for (const draft of drafts) {
    const seq = draft.dedupeKey ? byKey.get(draft.dedupeKey) : unkeyed[next++]?.seq;
    if (seq !== undefined) records.push(recordOf(draft, String(seq), draft.ts ?? now.toISOString()));
  }
  return records;
}

const INSERT_COLUMNS = 8;
const INSERT_HEAD = 'insert into events (org_id, workspace_id, event, subject_id, principal_id, record, created_at, dedupe_key) values ';

function recordOf(draft: EventDraft, eventId: string, ts: string): EventRecord {
  const record: EventRecord = { eventId, event: draft.event, ts, workspace: draft.workspace, principal: draft.principal, data: draft.data };
  if (draft.surface) record.surface = draft.surface;
  return record;
}

function toRecord(row: { seq: number; record: unknown }): EventRecord {
  const record = (typeof row.record === 'string' ? JSON.parse(row.record) : row.record) as EventRecord;
  return { ...record, eventId: String(row.seq) };
}

/** Audit log page, newest first; `before` is an eventId cursor. */
export async function listWorkspaceEvents(
  db: Executor,
  workspaceId: string,
  options: { limit: number; action?: string; before?: number; subjectId?: string },
): Promise<EventRecord[]> {
  let query = db.selectFrom('events').select(['seq', 'record']).where('workspaceId', '=', workspaceId);
  if (options.action) query = query.where('event', '=', options.action);
  if (options.before !== undefined) query = query.where('seq', '<', options.before);
  if (options.subjectId) query = query.where('subjectId', '=', options.subjectId);
  const rows = await query.orderBy('seq', 'desc').limit(options.limit).execute();
  return rows.map(toRecord);
}

/** Every row id the row cap refused in a workspace (its `row.refused` events). */
export async function findRefusedRowIds(db: Executor, workspaceId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('events').select(['seq', 'record']).where('workspaceId', '=', workspaceId).where('event', '=', 'row.refused').execute();
  const ids = new Set<string>();
  for (const row of rows) {
    const rowIds = toRecord(row).data?.rowIds;
    if (Array.isArray(rowIds)) for (const id of rowIds) if (typeof id === 'string') ids.add(id);
  }
  return ids;
}

/** Events after a given id, oldest first: what an SSE client missed. */
export async function listWorkspaceEventsAfter(db: Executor, workspaceId: string, afterSeq: number, limit: number): Promise<EventRecord[]> {
  const rows = await db
    .selectFrom('events')
    .select(['seq', 'record'])
    .where('workspaceId', '=', workspaceId)
    .where('seq', '>', afterSeq)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** A subject's events oldest first (row history). */
export async function listSubjectEvents(db: Executor, workspaceId: string, subjectId: string): Promise<EventRecord[]> {
  const rows = await db
    .selectFrom('events')
    .select(['seq', 'record'])
    .where('workspaceId', '=', workspaceId)
    .where('subjectId', '=', subjectId)
    .orderBy('seq', 'asc')
    .execute();
  return rows.map(toRecord);
}

/** Events of every workspace after a given id, oldest first: what an instance missed while it could not hear the others. */
export async function listEventsAfter(db: Executor, afterSeq: number, limit: number): Promise<EventRecord[]> {
  const rows = await db.selectFrom('events').select(['seq', 'record']).where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute();
  return rows.map(toRecord);
}

/** The ids of the events after `afterSeq`, oldest first (at most `limit`): cheap to compare with what was delivered. */
export async function listEventSeqsAfter(db: Executor, afterSeq: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('events').select('seq').where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute();
  return rows.map((row) => Number(row.seq));
}

/** These events, oldest first. */
export async function listEventsBySeq(db: Executor, seqs: readonly number[]): Promise<EventRecord[]> {
  if (seqs.length === 0) return [];
  const rows = await db.selectFrom('events').select(['seq', 'record']).where('seq', 'in', [...seqs]).orderBy('seq', 'asc').execute();
  return rows.map(toRecord);
}

/** The newest event's id (0 for an empty log). */
export async function latestEventSeq(db: Executor): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
  return Number(row?.seq ?? 0);
}
