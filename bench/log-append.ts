/**
 * The durable log's append alone, on PGlite (or Postgres with --database-url):
 * the server CPU of appending a typist's commit groups as Trellis does
 * (src/persistence/document-log.ts, through the group commit's path) and as
 * the durable floor does (bench/durable-floor.ts), per update.
 *
 *   npx tsx bench/log-append.ts [--groups 30] [--group 1667] [--database-url URL] [--only trellis,floor,...]
 *
 * Variants (--only, in the order given; default trellis,floor,trellis,floor):
 * `trellis` (a sync client's updates, to derive), `derived` (a server
 * change's), `floor`, and `main`: appendStampedUpdates of another copy of
 * document-log.ts named by MAIN_LOG (a path from bench/, e.g. main's file
 * from `git show main:src/persistence/document-log.ts`), for a before and
 * after in one process.
 *
 * Updates are real one-character Y text inserts, one per keystroke.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import * as Y from 'yjs';
import { openDatabase } from '../src/persistence/database';
import { appendStampedUpdates, type LoggedUpdate } from '../src/persistence/document-log';
import { GroupCommitLog } from './durable-floor';

const { values } = parseArgs({ options: { groups: { type: 'string', default: '30' }, group: { type: 'string', default: '1667' }, 'database-url': { type: 'string' }, only: { type: 'string' } } });
const groups = Number(values.groups);
const groupSize = Number(values.group);

function keystrokes(count: number): Uint8Array[] {
  const doc = new Y.Doc();
  const text = doc.getText('content');
  const updates: Uint8Array[] = [];
  doc.on('update', (update: Uint8Array) => updates.push(update));
  for (let i = 0; i < count; i++) text.insert(text.length, String.fromCharCode(97 + (i % 26)));
  return updates;
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-append-'));
  const handle = await openDatabase({ dataDir, databaseUrl: values['database-url'], pgliteTemplate: path.resolve('dist/pglite-template') });
  const db = handle.db;
  const updates = keystrokes(groups * groupSize);
  const bytes = updates.reduce((sum, u) => sum + u.byteLength, 0);
  console.log(`${handle.kind}: ${groups} groups of ${groupSize} updates, ${(bytes / updates.length).toFixed(1)} bytes an update; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  async function measure(name: string, appendGroup: (group: Uint8Array[], document: string) => Promise<unknown>) {
    const document = `bench-log-append-${process.pid}-${name}-${Date.now()}`;
    // One group first, out of the figure (plans, caches).
    await appendGroup(updates.slice(0, groupSize), document);
    const start = process.cpuUsage();
    const wallStart = performance.now();
    for (let g = 1; g < groups; g++) await appendGroup(updates.slice(g * groupSize, (g + 1) * groupSize), document);
    const cpu = process.cpuUsage(start);
    const wall = performance.now() - wallStart;
    const n = (groups - 1) * groupSize;
    console.log(`${name.padEnd(12)} ${(((cpu.user + cpu.system) / n)).toFixed(1).padStart(6)} µs CPU an update (user ${(cpu.user / n).toFixed(1)}, system ${(cpu.system / n).toFixed(1)}), ${((wall * 1000) / n).toFixed(1)} µs wall`);
  }

  const which = values.only ? values.only.split(',') : ['trellis', 'floor', 'trellis', 'floor'];
  const floor = new GroupCommitLog(db);
  for (const name of which) {
    if (name === 'trellis') {
      await measure('trellis', (group, document) =>
        appendStampedUpdates(
          db,
          group.map((update): LoggedUpdate => ({ document, update, author: { principalType: 'user', id: 'usr_0123456789abcdef' }, runId: null, derived: false, writer: 1 })),
        ),
      );
    } else if (name === 'main') {
      const { appendStampedUpdates: mainAppend } = await import(process.env.MAIN_LOG ?? '/tmp/h16a/document-log-main.ts');
      await measure('main', (group, document) =>
        mainAppend(
          db,
          group.map((update): LoggedUpdate => ({ document, update, author: { principalType: 'user', id: 'usr_0123456789abcdef' }, runId: null, derived: false, writer: 1 })),
        ),
      );
    } else if (name === 'derived') {
      await measure('derived', (group, document) =>
        appendStampedUpdates(
          db,
          group.map((update): LoggedUpdate => ({ document, update, author: { principalType: 'user', id: 'usr_0123456789abcdef' }, runId: null, derived: true, writer: 1 })),
        ),
      );
    } else if (name === 'floor') {
      await measure('floor', (group, document) => Promise.all(group.map((update) => floor.append(document, update))));
    }
  }
  // A shared Postgres keeps nothing of the run.
  const prefix = `bench-log-append-${process.pid}-%`;
  for (const table of ['document_updates', 'underived_updates', 'document_log_heads']) await sql`delete from ${sql.table(table)} where document like ${prefix}`.execute(db);
  await handle.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

void main();
