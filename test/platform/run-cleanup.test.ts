import { promises as fs } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { removeRun, testDatabaseUrl } from '../helpers/database';

/**
 * What a test or bench run made goes with it (test/helpers/database.ts
 * `removeRun`, called by the suite's teardown, by each bench server's exit
 * and at the end of `npm run bench`): its embedded template directory and,
 * on Postgres, its template and databases. Another run's are left alone.
 */
describe('a run removed', () => {
  const templateDir = (runId: string) => path.resolve(`.test-data/template-${runId}`);
  const databasesOf = async (url: string, runIds: string[]) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const names = runIds.flatMap((id) => [`trellis_test_template_${id}`, `trellis_test_${id}_one`]);
      const found = await client.query<{ datname: string }>('select datname from pg_database where datname = any($1) order by datname', [names]);
      return found.rows.map((row) => row.datname);
    } finally {
      await client.end();
    }
  };

  it("removes its embedded template and, on Postgres, its template and databases; another run's stay", async () => {
    const run = `cleanup_${process.pid}_${Date.now()}`;
    const other = `cleanupother_${process.pid}_${Date.now()}`;
    for (const id of [run, other]) {
      await fs.mkdir(templateDir(id), { recursive: true });
      await fs.writeFile(path.join(templateDir(id), 'PG_VERSION'), '17\n');
    }
    const url = testDatabaseUrl();
    if (url) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        for (const id of [run, other]) {
          await client.query(`create database trellis_test_template_${id}`);
          await client.query(`create database trellis_test_${id}_one`);
        }
      } finally {
        await client.end();
      }
      expect(await databasesOf(url, [run, other])).toHaveLength(4);
    }

    await removeRun(run);

    await expect(fs.stat(templateDir(run))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await fs.readdir(templateDir(other)))).toEqual(['PG_VERSION']);
    if (url) expect(await databasesOf(url, [run, other])).toEqual([`trellis_test_${other}_one`, `trellis_test_template_${other}`]);

    await removeRun(other);
    await expect(fs.stat(templateDir(other))).rejects.toMatchObject({ code: 'ENOENT' });
    if (url) expect(await databasesOf(url, [run, other])).toEqual([]);
  });
});
