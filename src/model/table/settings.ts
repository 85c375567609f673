/**
 * Settings of the workspace that computed cells depend on, kept in the
 * table document so that every reader of it computes the same cells: the
 * server (REST, MCP, row events), the web app offline and the typed client.
 *
 *   settings: Y.Map{ timeZone: IANA zone name }
 *
 * The workspace's settings (`PATCH /api/workspaces/{slug}`) are the record
 * of it; the server writes the zone here when it changes. A zone the
 * runtime does not know (a sync peer may write anything) reads as UTC.
 */
import * as Y from 'yjs';
import { isTimeZone } from './formulas/dates.js';

export const SETTINGS_ROOT = 'settings';
export const TIME_ZONE_FIELD = 'timeZone';
export const DEFAULT_TIME_ZONE = 'UTC';

/** The zone's canonical name (`utc` → `UTC`, `europe/paris` → `Europe/Paris`), or null when it is not a zone the runtime knows. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length === 0 || name.length > 100 || !isTimeZone(name)) return null;
  return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
}

/** The time zone TODAY(), NOW() and dates are read in: the workspace's, UTC unless set. */
export function tableTimeZone(doc: Y.Doc): string {
  const value = storedTimeZone(doc);
  return typeof value === 'string' && isTimeZone(value) ? value : DEFAULT_TIME_ZONE;
}

/** Writes the zone (a canonical name: `canonicalTimeZone`); nothing when the document already holds it. */
export function setTableTimeZone(doc: Y.Doc, timeZone: string): void {
  const stored = storedTimeZone(doc);
  if (stored === timeZone || (stored === undefined && timeZone === DEFAULT_TIME_ZONE)) return;
  doc.getMap(SETTINGS_ROOT).set(TIME_ZONE_FIELD, timeZone);
}

/** Read without creating the root: a document that never had the setting stays as it is. */
function storedTimeZone(doc: Y.Doc): unknown {
  const root = doc.share.get(SETTINGS_ROOT);
  if (root === undefined) return undefined;
  return (root instanceof Y.Map ? root : doc.getMap(SETTINGS_ROOT)).get(TIME_ZONE_FIELD);
}
