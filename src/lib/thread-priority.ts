import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';

/**
 * Background threads yield the core to the serving thread. On a server
 * with one core (or one pinned, as the benches pin it), every other thread
 * of the process takes its turns from the serving thread: a history pass
 * replaying a typist's updates held the core for tens of milliseconds
 * while keystrokes waited to be acknowledged. On Linux the nice value is
 * per thread, so a background thread raises its own (lower priority) and
 * the scheduler gives it the core when the serving thread does not want
 * it; with a core to spare nothing changes. Elsewhere (no /proc/thread-self,
 * or the call refused) it does nothing.
 *
 * Only for threads nothing waits on to answer a client: not the embedded
 * database's thread (every acknowledgement waits for its commit), not the
 * libuv pool (file writes and flushes).
 */

/**
 * Nice value of background threads. At 10 a busy serving thread (nice 0)
 * gets about nine tenths of a contended core, in slices of a few
 * milliseconds; 19 would leave the background about one part in seventy,
 * so a compaction could wait indefinitely behind a server that is never
 * idle and the log would grow.
 */
export const BACKGROUND_NICE = 10;

/** This thread's id where Linux says it (`/proc/thread-self` is `<pid>/task/<tid>`), else null. */
export function currentThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/** Lowers this thread's priority (raises its nice value to `nice`); answers whether it did. Never raises a priority. */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): boolean {
  const tid = currentThreadId();
  if (tid === null) return false;
  try {
    if (os.getPriority(tid) >= nice) return true;
    os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/** A thread's nice value as the kernel reports it (/proc/<pid>/task/<tid>/stat, field 19), or null. */
export function threadNice(tid: number, pid = process.pid): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: fields count from after it (state is field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const nice = Number(fields[19 - 3]);
    return Number.isInteger(nice) ? nice : null;
  } catch {
    return null;
  }
}
