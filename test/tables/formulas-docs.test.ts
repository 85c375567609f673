import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTION_LIST } from '../../src/model/table/formulas/functions';
import { ROLLUP_FUNCTIONS } from '../../src/model/table/formulas/rollups';
import { ERROR_CODES } from '../../src/model/table/formulas/values';

/** docs/FORMULAS.md is written from the model's tables (issue 36, "Done when"): it must keep up with them. */
describe('docs/FORMULAS.md', () => {
  const doc = readFileSync(new URL('../../docs/FORMULAS.md', import.meta.url), 'utf8');

  it('lists every function with its signature, help and example, every rollup function and every error code', () => {
    for (const spec of FUNCTION_LIST) {
      expect(doc, spec.name).toContain(`| \`${spec.signature}\` | ${spec.help} | \`${spec.example}\` |`);
    }
    for (const fn of ROLLUP_FUNCTIONS) expect(doc, fn).toContain(`| \`${fn}\` |`);
    for (const code of ERROR_CODES) expect(doc, code).toContain(`| \`${code}\` |`);
  });
});
