import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/** A free loopback port (the OS picks one, we release it and hand it to the child). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export type ServerProcess = { url: string; child: ChildProcess; output: () => string; kill(signal?: NodeJS.Signals): Promise<number | null> };

/**
 * Runs `src/main.ts` (or a test `entry` that ends up in it, or a `compiled`
 * bundle) as a real process, and waits for /api/health (up to `startTimeoutMs`; a
 * child that does not come up is killed).
 */
export async function startServerProcess(env: Record<string, string>, options: { startTimeoutMs?: number; entry?: string; compiled?: string } = {}): Promise<ServerProcess> {
  const port = await freePort();
  let output = '';
  // `compiled`: a built bundle run by plain node, as `npm start` runs dist/server/main.js.
  const args = options.compiled ? [path.resolve(options.compiled)] : ['--import', 'tsx', path.resolve(options.entry ?? 'src/main.ts')];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', COOKIE_SECURE: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => output,
    kill: (signal = 'SIGKILL') =>
      new Promise((resolve) => {
        // A child ended by a signal has no exit code, only a signal code.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

/** Signs in to a server process through its mail outbox file (no SMTP); returns the session cookie value. */
export async function signInThroughOutboxFile(url: string, dataDir: string, email: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  await fetch(`${url}/api/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  const outbox = await readFile(path.join(dataDir, 'outbox.jsonl'), 'utf8');
  const token = /token=([A-Za-z0-9_-]+)/.exec(outbox.trim().split('\n').at(-1)!)![1]!;
  const res = await fetch(`${url}/api/auth?token=${token}`, { redirect: 'manual' });
  return /svc-session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!;
}
