/**
 * A pass that runs on a timer beside the app (a first run soon after start,
 * then every interval), and on demand: `runOnce` joins a pass under way
 * rather than starting a second one, and `stop` waits for it.
 */
export class PeriodicJob<T> {
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<T> | null = null;

  constructor(
    /** `scheduled`: the timer started it (not `runOnce`). */
    private readonly pass: (run: { scheduled: boolean }) => Promise<T>,
    private readonly onError: (error: unknown) => void,
    private readonly timing: { intervalMs: number; firstRunAfterMs: number },
  ) {}

  start() {
    if (this.timer) return;
    const tick = () => void this.runPass(true).catch(this.onError);
    this.first = setTimeout(tick, this.timing.firstRunAfterMs).unref();
    this.timer = setInterval(tick, this.timing.intervalMs).unref();
  }

  runOnce(): Promise<T> {
    return this.runPass(false);
  }

  /** A pass as the timer starts it (`scheduled`) or as `runOnce` does; joins one under way. */
  protected runPass(scheduled: boolean): Promise<T> {
    this.running ??= this.pass({ scheduled }).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop() {
    if (this.first) clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
    this.first = this.timer = null;
    await this.running?.catch(() => {});
  }
}

/**
 * A periodic pass that may wait (for a quiet moment of the serving thread,
 * say) before its work, and is switched off where it has nothing to do:
 * `stop` aborts `stopping`, so a pass still waiting ends at once.
 */
export class WaitingPeriodicJob<T> extends PeriodicJob<T> {
  private controller = new AbortController();

  constructor(
    readonly enabled: boolean,
    pass: (run: { scheduled: boolean; stopping: AbortSignal }) => Promise<T>,
    onError: (error: unknown) => void,
    timing: { intervalMs: number; firstRunAfterMs: number },
  ) {
    super((run) => pass({ ...run, stopping: this.controller.signal }), onError, timing);
  }

  override start() {
    if (!this.enabled) return;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    super.start();
  }

  /** A pass as the timer runs it (waiting where it waits). */
  runWhenQuiet(): Promise<T> {
    return this.runPass(true);
  }

  override async stop() {
    this.controller.abort();
    await super.stop();
  }
}
