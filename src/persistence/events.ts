import type { EventDraft, EventRecord } from '../events/types';
import { storableJson } from '../lib/text';
import type { Executor } from './database';

/** Appends events to the audit log, returning them with their ids. */
export async function insertEvents(db: Executor, drafts: EventDraft[], now: Date): Promise<EventRecord[]> {
  if (drafts.length === 0) return [];
  const rows = await db
    .insertInto('events')
    .values(
      drafts.map((d) => ({
        orgId: d.orgId,
        workspaceId: d.workspace?.id ?? null,
        event: d.event,
        subjectId: d.subjectId ?? null,
        principalId: d.principal?.id ?? null,
        record: JSON.stringify(storableJson(recordOf(d, '0', d.ts ?? now.toISOString()))),
        createdAt: d.ts ? new Date(d.ts) : now,
      })),
    )
    .returning(['seq'])
    .execute();
  return drafts.map((d, i) => recordOf(d, String(rows[i]!.seq), d.ts ?? now.toISOString()));
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
