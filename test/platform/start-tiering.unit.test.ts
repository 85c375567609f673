import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { raiseTieringBudgetForStart, restoreTieringBudget } from '../../src/lib/start-tiering';

/** V8's optimisation budget while the server starts (src/lib/start-tiering.ts): src/main.ts raises it first thing and restores it once it listens. */
describe("V8's optimisation budget while the server starts", () => {
  const v8 = '11.3.244.8-node.38';

  it('is raised once on the V8 it was measured on, and set back once to that V8\'s default', () => {
    const flags: string[] = [];
    const set = (flag: string) => void flags.push(flag);
    expect(raiseTieringBudgetForStart(v8, [], set)).toBe(true);
    expect(raiseTieringBudgetForStart(v8, [], set)).toBe(false);
    expect(restoreTieringBudget(set)).toBe(true);
    expect(restoreTieringBudget(set)).toBe(false);
    expect(flags).toEqual(['--interrupt-budget=1000000', '--interrupt-budget=67584']);
  });

  it('leaves a budget given on the command line alone, and any other V8', () => {
    const flags: string[] = [];
    const set = (flag: string) => void flags.push(flag);
    expect(raiseTieringBudgetForStart(v8, ['--interrupt-budget=5000'], set)).toBe(false);
    expect(raiseTieringBudgetForStart(v8, ['--max-old-space-size=512', '--interrupt_budget=5000'], set)).toBe(false);
    expect(raiseTieringBudgetForStart('12.4.254.21-node.33', [], set)).toBe(false);
    expect(restoreTieringBudget(set)).toBe(false);
    expect(flags).toEqual([]);
  });

  it.runIf(process.versions.v8.startsWith('11.3.'))("restores this Node's own default: the one its V8 reports", () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    const reported = /--interrupt-budget \(.*?\)\s+type: int\s+default: --interrupt-budget=(\d+)/s.exec(options)?.[1];
    const flags: string[] = [];
    raiseTieringBudgetForStart(process.versions.v8, [], (flag) => void flags.push(flag));
    restoreTieringBudget((flag) => void flags.push(flag));
    expect(flags.at(-1)).toBe(`--interrupt-budget=${reported}`);
  });
});
