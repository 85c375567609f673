/**
 * One serial queue per document: its changes' events and projections are
 * persisted in transaction order, and whatever else touches its derivation
 * (deriving again, marking updates derived, unloading it) takes its turn
 * behind them. A task's failure is its caller's; the queue goes on.
 */
export class DocumentQueues {
  private readonly tails = new Map<string, Promise<void>>();

  enqueue(documentName: string, task: () => Promise<unknown>): Promise<void> {
    const previous = this.tails.get(documentName) ?? Promise.resolve();
    const run = previous.then(task);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.tails.set(documentName, settled);
    void settled.then(() => {
      if (this.tails.get(documentName) === settled) this.tails.delete(documentName);
    });
    return run.then(() => {});
  }

  /** Whether the document has a task queued or running. */
  busy(documentName: string): boolean {
    return this.tails.has(documentName);
  }

  /** Resolves once every task queued so far has finished. */
  async drain(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
