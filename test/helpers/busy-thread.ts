/**
 * Keeps this thread's event loop busy (every turn runs `turnMs` of work)
 * until the returned function is called: a serving thread under load, for
 * work that waits for a quiet moment (src/lib/quiet-moment.ts).
 */
export function keepThreadBusy(turnMs = 20): () => void {
  let busy = true;
  const spin = () => {
    if (!busy) return;
    const end = performance.now() + turnMs;
    while (performance.now() < end);
    setImmediate(spin);
  };
  spin();
  return () => {
    busy = false;
  };
}

/** Lets `windows` windows of 100 ms pass (in busy turns, when the thread is kept busy). */
export async function waitWindows(windows: number): Promise<void> {
  for (let i = 0; i < windows; i++) await new Promise((resolve) => setTimeout(resolve, 100));
}
