import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock';
import { ReadCache } from '../../src/persistence/read-cache';
import { WriteEpochs, writesAccessTables } from '../../src/persistence/write-epochs';

/** A read that counts how often it really ran. */
function counter() {
  let reads = 0;
  let value = 'first';
  return {
    load: async () => {
      reads++;
      return value;
    },
    set: (next: string) => (value = next),
    get reads() {
      return reads;
    },
  };
}

describe('the request-context cache (src/persistence/read-cache.ts)', () => {
  it('answers from memory within a second, and reads again once a second has passed (what other instances wrote shows)', async () => {
    const clock = new ManualClock();
    const cache = new ReadCache(new WriteEpochs(), clock);
    const source = counter();
    expect(await cache.get('k', source.load)).toBe('first');
    source.set('second');
    expect(await cache.get('k', source.load)).toBe('first');
    expect(source.reads).toBe(1);
    clock.advance(1_000);
    expect(await cache.get('k', source.load)).toBe('second');
    expect(source.reads).toBe(2);
  });

  it('forgets everything at once when this process writes to a table a cached read may depend on', async () => {
    const epochs = new WriteEpochs();
    const cache = new ReadCache(epochs, new ManualClock());
    const source = counter();
    await cache.get('k', source.load);
    source.set('revoked');
    epochs.bump();
    expect(await cache.get('k', source.load)).toBe('revoked');
  });

  it('does not keep what was read while such a write was under way', async () => {
    const epochs = new WriteEpochs();
    const cache = new ReadCache(epochs, new ManualClock());
    const source = counter();
    const read = cache.get('k', async () => {
      const value = await source.load();
      epochs.bump(); // a write committed while this read was in flight
      return value;
    });
    expect(await read).toBe('first');
    source.set('after');
    expect(await cache.get('k', source.load)).toBe('after');
  });

  it('shares one read among concurrent misses of a key', async () => {
    const cache = new ReadCache(new WriteEpochs(), new ManualClock());
    const source = counter();
    await Promise.all([cache.get('k', source.load), cache.get('k', source.load), cache.get('k', source.load)]);
    expect(source.reads).toBe(1);
  });

  it('treats every write as retiring except writes to content tables', () => {
    expect(writesAccessTables('update "api_keys" set "revoked_at" = $1 where "id" = $2')).toBe(true);
    expect(writesAccessTables('delete from "memberships" where "workspace_id" = $1')).toBe(true);
    expect(writesAccessTables('insert into "some_future_table" ("id") values ($1)')).toBe(true);
    expect(writesAccessTables('alter table surfaces add column x text')).toBe(true);
    expect(writesAccessTables('insert into "table_rows" ("id") values ($1) on conflict ("id") do update set "data" = excluded.data')).toBe(false);
    expect(writesAccessTables('insert into "events" ("org_id") values ($1)')).toBe(false);
    expect(writesAccessTables('select * from "workspaces" for update')).toBe(false);
  });
});
