/**
 * Runs `work` on every item, at most `width` at once: for work that waits on
 * the disk rather than the CPU (copying or flushing many small files), where
 * one after another leaves the thread pool idle and all at once would open
 * thousands of files.
 */
export async function eachSideBySide<T>(items: readonly T[], work: (item: T) => Promise<void>, width = 8): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}
