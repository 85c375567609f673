import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * Starts a benchmark server script in its own process (so it does not share
 * the clients' core) and resolves with the JSON line it prints when ready.
 * `BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof"` profiles it.
 */
export async function spawnBenchServer<Info>(script: string, mode: string, runId: string): Promise<{ info: Info; child: ChildProcess }> {
  const extra = process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', path.resolve(import.meta.dirname, script), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // Underscores only: the id becomes part of a Postgres template database name.
    env: { ...process.env, TRELLIS_TEST_RUN_ID: runId },
  });
  const info = await new Promise<Info>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`${script} ${mode} exited ${code}`)));
  });
  return { info, child };
}
