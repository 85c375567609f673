import { describe, expect, it } from 'vitest';
import { KINDS, analyse, readBaseline, toBaseline, type Violation } from './import-graph';

/**
 * The layer rule and the circle check of issue 23 (docs/ARCHITECTURE.md,
 * "Layers"), as a ratchet: layer-baseline.json lists the violations main had
 * before the move; a new one fails, and so does an entry that no longer
 * occurs, so the baseline only shrinks until it is empty.
 *
 *   npx tsx test/architecture/import-graph.ts                    counts, folder circles, top upward edges
 *   npx tsx test/architecture/import-graph.ts --write-baseline   rewrite the baseline (only to shrink it)
 */

const FIX: Record<Violation['kind'], string> = {
  'circle-file':
    'Break the circle: move what both files need (types included) into a third module they both import, or pass the dependency in as a parameter.',
  'circle-folder':
    'Break the circle: the folder lower in the layer table must not import the higher one; move the shared piece down, or pass it in from above.',
  upward:
    'Move the imported piece down to a lower layer (or into src/model, src/policy, src/lib), or have the caller above pass it in (a parameter or an interface the lower layer declares). The ranks are in RANKS at the top of test/architecture/import-graph.ts.',
  'web-reach':
    'The browser app may use only src/model (and src/docs until it moves there); put the shared code in src/model. Nothing in src/ may import web/.',
};

describe('layers and import circles (issue 23)', () => {
  const { violations, unranked } = analyse();
  const baseline = readBaseline();
  const current = toBaseline(violations);

  it('ranks every folder of src/ in the layer table', () => {
    expect(unranked, `give these a rank in RANKS (test/architecture/import-graph.ts) and in docs/ARCHITECTURE.md: ${unranked.join(', ')}`).toEqual([]);
  });

  it('adds no import circle, upward import or web reach beyond the baseline', () => {
    const known = new Set(KINDS.flatMap((kind) => baseline[kind].map((key) => `${kind} ${key}`)));
    // The edge that goes up usually causes the circles listed after it.
    const order: Violation['kind'][] = ['upward', 'web-reach', 'circle-file', 'circle-folder'];
    const added = violations.filter((v) => !known.has(`${v.kind} ${v.key}`)).sort((x, y) => order.indexOf(x.kind) - order.indexOf(y.kind));
    const messages = added.slice(0, 30).map(
      (v) =>
        `${v.edge.from}:${v.edge.line} imports '${v.edge.specifier}' (${v.edge.to}${v.edge.typeOnly ? ', type-only' : ''})\n` +
        `  breaks the rule [${v.kind}]: ${v.rule}\n  fix: ${FIX[v.kind]}`,
    );
    const more = added.length > messages.length ? `\n\n... and ${added.length - messages.length} more` : '';
    expect(added.length, `\n${messages.join('\n\n')}${more}\n`).toBe(0);
  });

  it('keeps no baseline entry that no longer occurs (the baseline only shrinks)', () => {
    const gone = KINDS.flatMap((kind) => baseline[kind].filter((key) => !current[kind].includes(key)).map((key) => `[${kind}] ${key}`));
    const message =
      `\nThese violations are fixed: delete them from test/architecture/layer-baseline.json ` +
      `(or run \`npx tsx test/architecture/import-graph.ts --write-baseline\`):\n  ${gone.join('\n  ')}\n`;
    expect(gone.length, message).toBe(0);
  });
});
