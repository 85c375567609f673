import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort, Worker, type TransferListItem } from 'node:worker_threads';

/**
 * A small bounded pool of worker threads for CPU-heavy work that would
 * otherwise hold the event loop for seconds (a Word file parsed, a PDF
 * laid out). At most `size` tasks run at once in the process; more wait
 * in order. Tasks take and give plain data (structured clone; buffers can
 * be transferred). A worker left idle goes away after `idleMs`, so a
 * server that converts nothing holds no thread and no heap for it.
 */

type Message = { id: number; chunk?: Uint8Array; result?: unknown; error?: { name: string; message: string } };
type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void; onChunk?: (chunk: Uint8Array) => void };
type Queued = { task: string; input: unknown; transfer: TransferListItem[]; pending: Pending };
type Slot = { worker: Worker; busy: Pending | null; taskId: number; idle: NodeJS.Timeout | null };

/** The error a task threw in its worker, by its name and message (the class does not cross the thread). */
export class WorkerTaskError extends Error {
  constructor(
    readonly taskErrorName: string,
    message: string,
  ) {
    super(message);
  }
}

type WorkerScript = { url: URL } | { source: string };

/**
 * The worker's script `name`, for a caller whose module URL is `base`.
 * Compiled (a `.js` caller: the esbuild bundle in dist/server, or one of
 * its chunks a level below), it is the compiled `name.js` the build emits
 * as an entry point of its own beside the bundle. From source (a `.ts`
 * caller: tsx, the tests), it is the `.ts` beside the caller, the worker
 * registering tsx's loader itself (Node 20 does not carry a parent's
 * `--import tsx` into a worker's entry).
 */
export function workerScript(base: string, name: string): WorkerScript {
  if (!base.endsWith('.ts')) {
    const compiled = [`./${name}.js`, `../${name}.js`].map((relative) => new URL(relative, base)).find((url) => existsSync(fileURLToPath(url)));
    if (!compiled) throw new Error(`The worker script ${name}.js is not beside the compiled server (${base}): the build must emit it as an entry point.`);
    return { url: compiled };
  }
  const source = new URL(`./${name}.ts`, base).href;
  // The loader's ESM build: `require.resolve` finds its CommonJS twin, whose `register` cannot start the ESM hooks.
  const tsx = pathToFileURL(createRequire(base).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return { source: `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(source)}); });` };
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Queued[] = [];
  private nextId = 1;

  constructor(
    private readonly script: WorkerScript,
    readonly size: number,
    private readonly idleMs = 30_000,
  ) {}

  /** Runs `task` in a worker; `onChunk` receives what the task streams before its result. */
  run<T>(task: string, input: unknown, options: { transfer?: TransferListItem[]; onChunk?: (chunk: Uint8Array) => void } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { resolve: resolve as (value: unknown) => void, reject, onChunk: options.onChunk };
      this.queue.push({ task, input, transfer: options.transfer ?? [], pending });
      this.dispatch();
    });
  }

  /** Tasks running or waiting. */
  get load(): number {
    return this.queue.length + this.slots.filter((slot) => slot.busy).length;
  }

  async close() {
    const slots = this.slots.splice(0);
    for (const queued of this.queue.splice(0)) queued.pending.reject(new Error('The worker pool was closed.'));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private dispatch() {
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => !candidate.busy) ?? (this.slots.length < this.size ? this.spawn() : null);
      if (!slot) return;
      const next = this.queue.shift()!;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.busy = next.pending;
      slot.taskId = this.nextId++;
      // A running task keeps the process alive (an admin command may await nothing else); an idle worker does not.
      slot.worker.ref();
      slot.worker.postMessage({ id: slot.taskId, task: next.task, input: next.input }, next.transfer);
    }
  }

  private spawn(): Slot {
    const worker = 'url' in this.script ? new Worker(this.script.url) : new Worker(this.script.source, { eval: true });
    worker.unref();
    const slot: Slot = { worker, busy: null, taskId: 0, idle: null };
    worker.on('message', (message: Message) => {
      const pending = slot.busy;
      if (!pending || message.id !== slot.taskId) return;
      if (message.chunk) return pending.onChunk?.(message.chunk);
      slot.busy = null;
      slot.worker.unref();
      if (message.error) pending.reject(new WorkerTaskError(message.error.name, message.error.message));
      else pending.resolve(message.result);
      slot.idle = setTimeout(() => this.retire(slot), this.idleMs).unref();
      this.dispatch();
    });
    const failed = (error: Error) => {
      this.retire(slot);
      slot.busy?.reject(error);
      slot.busy = null;
      this.dispatch();
    };
    worker.on('error', failed);
    worker.on('exit', (code) => failed(new Error(`A worker thread stopped (exit code ${code}).`)));
    this.slots.push(slot);
    return slot;
  }

  private retire(slot: Slot) {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (slot.idle) clearTimeout(slot.idle);
    void slot.worker.terminate();
  }
}

/** Whether `bytes` own their whole buffer, so that a worker can hand the buffer over (transfer) instead of its bytes being copied. */
export function ownsWholeBuffer(bytes: Uint8Array): boolean {
  return bytes.byteOffset === 0 && bytes.buffer instanceof ArrayBuffer && bytes.byteLength === bytes.buffer.byteLength;
}

export type TaskHandler = (input: never, stream: (chunk: Uint8Array) => void) => Promise<{ result: unknown; transfer?: TransferListItem[] }>;

/** The worker's side: answers the pool's tasks with `handlers`, one at a time. */
export function serveWorkerTasks(handlers: Record<string, TaskHandler>) {
  const port = parentPort;
  if (!port) throw new Error('serveWorkerTasks runs inside a worker thread.');
  port.on('message', async ({ id, task, input }: { id: number; task: string; input: never }) => {
    try {
      const handler = handlers[task];
      if (!handler) throw new Error(`No worker task "${task}".`);
      const { result, transfer } = await handler(input, (chunk) => port.postMessage({ id, chunk }));
      port.postMessage({ id, result }, transfer ?? []);
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      port.postMessage({ id, error: { name: error instanceof Error ? error.constructor.name : name, message } });
    }
  });
}
