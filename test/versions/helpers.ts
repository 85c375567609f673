import { sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { startTestApp } from '../helpers/app';
import { connectClient, type SyncClient } from '../helpers/sync';
import { signInUser, type TestUser } from '../workspaces/helpers';

export type VersionsContext = {
  t: Awaited<ReturnType<typeof startTestApp>>;
  ada: TestUser;
  bob: TestUser;
  /** A sync client, destroyed with the app. */
  connect(documentName: string, credential: { token?: string; cookie?: string }): SyncClient;
  /** Makes the document's logged updates look older (sessions are grouped by the log's own timestamps). */
  ageLog(documentName: string, minutes: number): Promise<void>;
};

/** One app per file with two signed-in users, ada (who makes the workspaces) and bob. */
export function useVersionsApp(): VersionsContext {
  const clients: SyncClient[] = [];
  const context = {
    connect(documentName, credential) {
      const client = connectClient(context.t.url, documentName, credential);
      clients.push(client);
      return client;
    },
    async ageLog(documentName, minutes) {
      await sql`update document_updates set created_at = created_at - make_interval(mins => ${minutes}) where document = ${documentName}`.execute(context.t.services.db);
    },
  } as VersionsContext;
  beforeAll(async () => {
    context.t = await startTestApp();
    context.ada = await signInUser(context.t, 'ada@example.com');
    context.bob = await signInUser(context.t, 'bob@example.com');
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    await context.t.close();
    await context.t.store.dispose();
  });
  return context;
}
