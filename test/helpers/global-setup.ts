import { buildWeb } from '../../web/build';
import { prepareTemplate, removeTemplate } from './database';

export default async function setup() {
  // The browser tests (test/web) need the built app; a fresh build is reused.
  await buildWeb({ ifStale: true, quiet: true });
  await prepareTemplate();
  return async () => removeTemplate();
}
