import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { BACKGROUND_NICE, currentThreadId, lowerThisThreadPriority, threadNice } from '../../src/lib/thread-priority';
import { historyThread } from '../../src/sync/history-thread';

/**
 * Issue 38, goal 2: on a server with one core every thread of the process
 * takes its turns from the serving thread, and a history pass in the
 * history thread held the core while keystrokes waited. The history thread
 * lowers its own priority (Linux: a nice value per thread), so the
 * scheduler runs it when the serving thread does not want the core; the
 * serving thread keeps its own. What the kernel says
 * (/proc/<pid>/task/<tid>/stat) is what is checked.
 */

const onLinux = process.platform === 'linux';

describe('the history thread yields the core to the serving thread', () => {
  it.runIf(onLinux)('runs at a lower priority (nice 10) than the serving thread, whose own priority is unchanged', async () => {
    const serving = currentThreadId();
    expect(serving).not.toBeNull();
    const servingNiceBefore = threadNice(serving!);
    expect(servingNiceBefore).not.toBeNull();

    const history = await historyThread.threadId();
    expect(history).not.toBeNull();
    expect(history).not.toBe(serving);
    expect(threadNice(history!)).toBe(Math.max(BACKGROUND_NICE, servingNiceBefore!));
    expect(threadNice(serving!)).toBe(servingNiceBefore);
  });

  it('still does its work at that priority: a state built there comes back whole', async () => {
    const doc = new Y.Doc();
    doc.getText('t').insert(0, 'hello');
    await historyThread.scratch('priority-check', Y.encodeStateAsUpdateV2(doc));
    const more = new Y.Doc();
    Y.applyUpdateV2(more, Y.encodeStateAsUpdateV2(doc));
    const before = Y.encodeStateVector(more);
    more.getText('t').insert(5, ' world');
    const update = Y.encodeStateAsUpdate(more, before);
    await historyThread.extendScratch('priority-check', { bytes: update, ends: [update.byteLength], seqs: [1], authors: [null] });
    const built = new Y.Doc();
    Y.applyUpdateV2(built, await historyThread.encodeScratch('priority-check'));
    expect(built.getText('t').toString()).toBe('hello world');
  });

  it('never raises a priority: a thread already lower keeps its own, and the call answers where it is supported', () => {
    // The test's own thread: lowering it to its present value or above is what the call may do, so ask for less than it has.
    const tid = currentThreadId();
    if (!onLinux) {
      expect(tid).toBeNull();
      expect(lowerThisThreadPriority()).toBe(false);
      return;
    }
    const now = threadNice(tid!)!;
    expect(lowerThisThreadPriority(now - 1 < -20 ? -20 : now - 1)).toBe(true);
    expect(threadNice(tid!)).toBe(now);
  });
});
