import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * All SQL lives in src/persistence (docs/ARCHITECTURE.md, "Modules"): other
 * folders call its named functions and pass a `db` or a transaction. This
 * finds query building anywhere else: a Kysely builder call, a `sql`
 * template, or a value import from 'kysely' (type imports are fine).
 */

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');

const QUERY_BUILDING: Array<[RegExp, string]> = [
  [/\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(/, 'a Kysely query builder call'],
  [/(^|[^\w.])sql\s*(<[^>]*>)?\s*`/, 'a `sql` template'],
  [/^\s*import\s+(?!type\b)[^;]*from\s+['"]kysely['"]/, "a value import from 'kysely'"],
];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === path.join(SRC, 'persistence') ? [] : sourceFiles(full);
    return /\.(ts|tsx)$/.test(entry.name) ? [full] : [];
  });
}

describe('SQL only in src/persistence', () => {
  it('finds no query building in any other folder of src/', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const [pattern, what] of QUERY_BUILDING) {
            if (pattern.test(line)) found.push(`${path.relative(ROOT, file)}:${index + 1}: ${what}: ${line.trim()}`);
          }
        });
    }
    expect(found, `\nMove these into a named function in src/persistence and call it:\n  ${found.join('\n  ')}\n`).toEqual([]);
  });

  it('would find each kind of query building (the patterns are not dead)', () => {
    const lines = [
      "await db.selectFrom('orgs').select('plan')",
      '  .insertInto(\'events\')',
      'await sql`select 1`.execute(db)',
      'await sql<{ n: number }>`select 1`.execute(db)',
      "import { sql } from 'kysely';",
    ];
    for (const line of lines) expect(QUERY_BUILDING.some(([pattern]) => pattern.test(line)), line).toBe(true);
    for (const line of ["import type { Kysely } from 'kysely';", 'insertIntoSheet(doc, id, [row], 0);', 'const sqlText = `x`;']) {
      expect(QUERY_BUILDING.some(([pattern]) => pattern.test(line)), line).toBe(false);
    }
  });
});
