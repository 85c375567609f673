import { afterAll, beforeAll, expect, it } from 'vitest';
import { publishEvents, recordEvents } from '../../src/events/emit';
import type { EventDraft } from '../../src/model/event-record';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { openSse } from '../helpers/sse';
import { eventually } from '../helpers/sync';

/**
 * Event ids are drawn when an event is inserted and events are published
 * when they commit: with concurrent writers (Postgres, several instances, a
 * bus catching up after an outage) an event can reach a stream after one with
 * a higher id. The stream must still send it, once, without moving its
 * resume point back.
 */
let t: Awaited<ReturnType<typeof startTestApp>>;
let cookie: string;
let orgId: string;
let workspace: EventDraft['workspace'];

beforeAll(async () => {
  t = await startTestApp();
  ({ cookie } = await signIn(t, 'late@example.com'));
  const row = await t.services.db
    .selectFrom('workspaces')
    .innerJoin('orgs', 'orgs.id', 'workspaces.orgId')
    .select(['workspaces.id', 'workspaces.slug', 'orgs.id as orgId', 'orgs.slug as orgSlug'])
    .where('workspaces.slug', '=', 'welcome')
    .executeTakeFirstOrThrow();
  orgId = row.orgId;
  workspace = { id: row.id, slug: row.slug, org: { slug: row.orgSlug } };
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const draft = (note: string): EventDraft => ({ event: 'workspace.updated', orgId, workspace, principal: null, data: { note } });

it('sends an event that commits after a higher id, once, and its id line never goes back', async () => {
  const subscribe = `${t.url}/api/workspaces/welcome/subscribe`;
  const stream = openSse(subscribe, { cookie: `svc-session=${cookie}` });
  expect(await stream.ready).toBe(200);
  const [earlier] = await recordEvents(t.services, t.services.db, [draft('drawn first')]);
  const [later] = await recordEvents(t.services, t.services.db, [draft('drawn second')]);
  expect(Number(earlier!.eventId)).toBeLessThan(Number(later!.eventId));

  // The higher id commits (and is heard) first; the lower one after it, and once more (a catch-up overlapping live delivery).
  publishEvents(t.services, [later!]);
  publishEvents(t.services, [earlier!]);
  publishEvents(t.services, [earlier!, later!]);
  const ours = () => stream.frames.filter((f) => f.event === 'workspace.updated');
  await eventually(() => ours().length >= 2);
  // Something after them, so a duplicate would have been written before it.
  const [marker] = await recordEvents(t.services, t.services.db, [draft('marker')]);
  publishEvents(t.services, [marker!]);
  await eventually(() => ours().some((f) => f.data.data.note === 'marker'));
  expect(ours().map((f) => [f.data.eventId, f.id])).toEqual([
    [later!.eventId, later!.eventId],
    [earlier!.eventId, later!.eventId],
    [marker!.eventId, marker!.eventId],
  ]);
  stream.close();

  // Resuming from the last id line sends nothing of these again.
  const resumed = openSse(subscribe, { cookie: `svc-session=${cookie}`, 'last-event-id': later!.eventId });
  expect(await resumed.ready).toBe(200);
  await eventually(() => resumed.frames.some((f) => f.data.eventId === marker!.eventId));
  expect(resumed.frames.filter((f) => f.event === 'workspace.updated').map((f) => f.data.data.note)).toEqual(['marker']);
  resumed.close();
});
