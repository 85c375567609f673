/**
 * A server for the fan-out benchmark, in its own process so the clients in
 * the parent do not share its core. `trellis` runs the real app (auth,
 * logging, durability, events); `bare` runs an in-memory Hocuspocus with the
 * same websocket wiring and nothing else. Prints one JSON line when ready.
 */
import http from 'node:http';
import { Hocuspocus } from '@hocuspocus/server';
import { tablesDocumentName } from '../src/model/document-names';
import { ensureSheet, insertRow } from '../src/model/table/document';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { listenBare } from './bare-hocuspocus';

const mode = process.argv[2];

async function trellis() {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  const { cookie } = await signIn(t, 'bench@example.com');
  await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
  const ws = await t.services.db.selectFrom('workspaces').select('id').where('slug', '=', 'welcome').executeTakeFirstOrThrow();
  console.log(JSON.stringify({ url: t.url, cookie, documentName: tablesDocumentName(ws.id), rowsPath: '/api/workspaces/welcome/rows' }));
}

async function bare() {
  const hocuspocus = new Hocuspocus({ quiet: true, flushDelay: false });
  const documentName = 'bench/tables';
  const server = http.createServer(async (request, response) => {
    // One server-side write, as the REST route would make it.
    const body = await new Promise<string>((resolve) => {
      let text = '';
      request.on('data', (c) => (text += c));
      request.on('end', () => resolve(text));
    });
    const { id } = JSON.parse(body);
    const connection = await hocuspocus.openDirectConnection(documentName, {});
    await connection.transact((doc) => {
      ensureSheet(doc, 'sheet', null);
      insertRow(doc, { id, surfaceId: 'sheet', data: { title: id } }, null);
    });
    await connection.disconnect({ unloadImmediately: false });
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  const url = await listenBare(hocuspocus, server);
  console.log(JSON.stringify({ url, documentName, rowsPath: '/write' }));
}

await (mode === 'bare' ? bare() : trellis());
