import type { EventDraft, EventRecord } from '../model/event-record';
import { storableJson } from '../lib/text';
import type { Executor } from './database';

/**
 * Appends events to the audit log, returning them with their ids. An event
 * whose `dedupeKey` is already recorded is skipped (and not returned): events
 * derived twice from one logged update are recorded once.
 */
export async function insertEvents(db: Executor, drafts: EventDraft[], now: Date): Promise<EventRecord[]> {
  if (drafts.length === 0) return [];
  const keyed = drafts.some((d) => d.dedupeKey);
  let query = db.insertInto('events').values(
    drafts.map((d) => ({
      orgId: d.orgId,
      workspaceId: d.workspace?.id ?? null,
      event: d.event,
      subjectId: d.subjectId ?? null,
      principalId: d.principal?.id ?? null,
      record: JSON.stringify(storableJson(recordOf(d, '0', d.ts ?? now.toISOString()))),
      createdAt: d.ts ? new Date(d.ts) : now,
      dedupeKey: d.dedupeKey ?? null,
    })),
  );
  if (!keyed) {
    const rows = await query.returning(['seq']).execute();
    return drafts.map((d, i) => recordOf(d, String(rows[i]!.seq), d.ts ?? now.toISOString()));
  }
  query = query.onConflict((oc) => oc.column('dedupeKey').where('dedupeKey', 'is not', null).doNothing());
  const rows = await query.returning(['seq', 'dedupeKey']).execute();
  // Rows come back in insertion order, without the skipped ones: match keyed drafts by key, the others in order.
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
