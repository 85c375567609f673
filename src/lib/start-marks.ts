/**
 * Where a start's time goes: each phase of src/main.ts (and of opening the
 * embedded database) notes the time since the process started
 * (`performance.now()`), and with `TRELLIS_START_TRACE=1` src/main.ts
 * prints them to stderr once the server listens, one line per phase
 * (docs/PERFORMANCE.md, "session 20"). A mark is an array push: kept at
 * every start, printed only when asked.
 */
const marks: [string, number][] = [];

export function startMark(phase: string): void {
  if (marks.length < 64) marks.push([phase, performance.now()]);
}

/** The marks so far as `start <ms since the process started> <phase>` lines. */
export function startMarkLines(): string {
  return marks.map(([phase, at]) => `start ${at.toFixed(0).padStart(6)} ms ${phase}\n`).join('');
}
