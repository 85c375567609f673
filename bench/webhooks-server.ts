/**
 * The server for the webhooks benchmark, in its own process so the load and
 * the receiver in the parent do not share its core. Prints one JSON line
 * when ready. Webhook targets on loopback are allowed (the receiver).
 */
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';

await prepareTemplate();
const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
const { cookie, orgSlug } = await signIn(t, 'bench@example.com');
await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
console.log(JSON.stringify({ url: t.url, cookie, orgSlug, database: t.services.database.kind }));
