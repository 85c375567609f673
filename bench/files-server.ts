/**
 * A server for the files benchmark, in its own process so its memory is
 * measured alone: the real app on the local blob store, one signed-in user
 * and a workspace with a files surface. Prints one JSON line when ready.
 */
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';

await prepareTemplate();
const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
const { cookie } = await signIn(t, 'bench@example.com');
await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
const headers = { cookie: `svc-session=${cookie}`, 'content-type': 'application/json' };
const surface = await fetch(`${t.url}/api/workspaces/welcome/surfaces`, { method: 'POST', headers, body: JSON.stringify({ kind: 'files', slug: 'files', name: 'Files' }) });
if (!surface.ok) throw new Error(`files surface: ${surface.status} ${await surface.text()}`);
console.log(JSON.stringify({ url: t.url, cookie, pid: process.pid, base: '/api/workspaces/welcome/files' }));
