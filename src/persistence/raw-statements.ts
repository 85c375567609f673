import { CompiledQuery } from 'kysely';
import type { Executor } from './database';

/**
 * The commit path's hot statements (the row projection, its indexes, the
 * audit log, a run's changes) as SQL written out with their parameters
 * instead of built with Kysely: every commit of a table write runs them, and
 * building, transforming and compiling a query cost more of the serving
 * thread than sending it. They still go through the executor, so the write
 * epochs see them (write-epochs.ts) and rows come back camel-cased, as from
 * a builder. Parameters are numbered `$1...` in the order given.
 */
export async function runStatement<R>(db: Executor, text: string, parameters: unknown[]): Promise<R[]> {
  return (await db.executeQuery<R>(CompiledQuery.raw(text, parameters))).rows;
}

/**
 * A data-modifying CTE (`name as (insert ...)`, without `with`) whose
 * parameters are numbered from where the statement it rides in asked: a
 * write of the same commit sent in another statement's round trip.
 */
export type StatementHead = { text: string; parameters: unknown[] };

/** `with a as (...), b as (...) ` for the heads given, or '' when there are none. */
export function withHeads(heads: ReadonlyArray<StatementHead | null>): string {
  const texts = heads.flatMap((head) => (head ? [head.text] : []));
  return texts.length === 0 ? '' : `with ${texts.join(', ')} `;
}

/** Shapes of up to this many parameters keep their text; a bigger batch (an import) builds its own. */
const KEPT_PARAMETERS = 1_000;
// Heads numbered after another statement's rows make `first` vary with the batch: bound how many shapes are kept.
const KEPT_SHAPES = 4_096;
const tuples = new Map<string, string>();

/**
 * `($1, $2), ($3, $4)`: `rows` tuples of `width` parameters, numbered from
 * `first`; `casts` (one per column, or '') type a column where Postgres
 * cannot infer it from its target.
 */
export function valueTuples(rows: number, width: number, first = 1, casts?: readonly string[]): string {
  const key = `${rows}:${width}:${first}:${casts?.join(',') ?? ''}`;
  const kept = tuples.get(key);
  if (kept) return kept;
  const text = Array.from({ length: rows }, (_, row) => `(${Array.from({ length: width }, (_, column) => `$${first + row * width + column}${casts?.[column] ?? ''}`).join(', ')})`).join(', ');
  if (rows * width <= KEPT_PARAMETERS) {
    if (tuples.size >= KEPT_SHAPES) tuples.clear();
    tuples.set(key, text);
  }
  return text;
}

/** `$3, $4, $5`: a list of `count` parameters numbered from `first` (for `in (...)`). */
export function parameterList(count: number, first: number): string {
  return valueTuples(1, count, first).slice(1, -1);
}
