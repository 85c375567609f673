/**
 * Named places where a test can make the server fail on purpose, the way
 * databases test their own recovery (FreeBSD's and TiKV's failpoints). A
 * failpoint costs one map lookup when nothing is armed.
 *
 * In-process tests arm them through `services.failpoints`; a test that runs
 * the server as a real process (a crash between two writes) sets
 * `TRELLIS_FAILPOINTS`, e.g. `document.derived.commit=kill`. Production
 * never sets it. Known names:
 *
 * - `document.commit`: inside the transaction that commits a document
 *   change (a REST/MCP change's update, or the events and projections of a
 *   client's change), before it commits.
 * - `document.derived.commit`: the same, only for changes made by sync
 *   clients (their updates are already in the log).
 * - `database.flush`: the embedded database's next file flush, inside its
 *   thread (armed through `PGliteThread.armFailpoint`).
 * - `document.load` (a hold, not a failure: `hold`): a document's load
 *   after it read what is stored and answered the client waiting, before
 *   it applies it.
 * - `document.recovery` (a hold): a document's rebuild after a failed
 *   commit, once it read the log, before it replaces the document's state.
 * - `document.compact` (a hold): a scheduled compaction of a document,
 *   before it folds anything (compaction-schedule.ts).
 * - `document.compact.write` (a hold): a scheduled compaction's fold, its
 *   snapshot written and its transaction still open (document-store.ts).
 */

export type FailpointAction = 'error' | 'kill';

export class FailpointError extends Error {
  constructor(readonly failpoint: string) {
    super(`failpoint ${failpoint}`);
    this.name = 'FailpointError';
  }
}

type Armed = { action: FailpointAction; remaining: number };

export class Failpoints {
  private readonly armed = new Map<string, Armed>();
  private readonly holds = new Map<string, { released: Promise<void>; reached: Promise<void>; reach: () => void }>();

  /** Arms from `name=action[:times],...` (the TRELLIS_FAILPOINTS format). */
  static parse(spec: string | undefined): Failpoints {
    const failpoints = new Failpoints();
    for (const entry of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const [name, rest = 'error'] = entry.split('=');
      const [action, times] = rest.split(':');
      if (!name || (action !== 'error' && action !== 'kill')) throw new Error(`bad failpoint "${entry}"`);
      failpoints.arm(name, action, times ? Number(times) : Number.POSITIVE_INFINITY);
    }
    return failpoints;
  }

  arm(name: string, action: FailpointAction = 'error', times = 1) {
    this.armed.set(name, { action, remaining: times });
  }

  disarm(name: string) {
    this.armed.delete(name);
  }

  /** Whoever passes `name` waits there until the returned function is called (a test looks at a state half way through). */
  hold(name: string): () => void {
    let release!: () => void;
    let reach!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(name, { released, reached: new Promise<void>((resolve) => (reach = resolve)), reach });
    return () => {
      this.holds.delete(name);
      release();
    };
  }

  /** Resolves once something waits at the held `name`: the test acts at exactly that point. */
  reached(name: string): Promise<void> {
    return this.holds.get(name)?.reached ?? Promise.resolve();
  }

  /** Waits here while `name` is held. */
  async pass(name: string): Promise<void> {
    const hold = this.holds.get(name);
    if (!hold) return;
    hold.reach();
    await hold.released;
  }

  /** Fails here if `name` is armed. */
  hit(name: string) {
    if (this.armed.size === 0) return;
    const armed = this.armed.get(name);
    if (!armed) return;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed.delete(name);
    if (armed.action === 'kill') process.kill(process.pid, 'SIGKILL');
    throw new FailpointError(name);
  }
}
