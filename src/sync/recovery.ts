import type { Document } from '@hocuspocus/server';
import type { Logger } from 'pino';
import * as Y from 'yjs';
import type { Failpoints } from '../lib/failpoints';
import type { Db } from '../persistence/database';
import { loadInto, replaceDocumentState } from './document-store';

/**
 * The log is the truth. After a server change failed to commit, the loaded
 * document still holds it (and whatever was built on it), though no client
 * saw it: the document is rebuilt from its log, in place, so every
 * connection stays open, and its projections are rewritten from it.
 * Everything else on the document waits meanwhile (`settled`): client
 * messages (so nothing is applied to the state being replaced), server
 * changes and reads.
 *
 * Each failure bumps the document's generation: a server change queued
 * under an older generation was built on discarded state, and is void.
 */
export class DocumentRecovery {
  /** Per document: bumped by every recovery; server changes from an older generation are void. */
  private readonly generations = new Map<string, number>();
  /** Documents being rebuilt from their log after a failed commit; everything else on them waits. */
  private readonly recovering = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Db;
      log: Logger;
      failpoints: Failpoints;
      loadBudgetBytes: number;
      document(documentName: string): Document | undefined;
      /** Resolves once every client update received so far is logged (or failed): the rebuilt state holds them. */
      logSettled(): Promise<void>;
      /** Resolves once the server changes queued so far on the document are committed or failed. */
      serverChangesSettled(documentName: string): Promise<void>;
      /** Rewrites the document's projections from its state. */
      reproject(documentName: string): Promise<void>;
      /** Closes the document's connections and releases it: its log could not be read, nobody may edit a state the log lacks. */
      drop(documentName: string): Promise<void>;
    },
  ) {}

  generationOf(documentName: string): number {
    return this.generations.get(documentName) ?? 0;
  }

  /** The rebuild under way for the document, if any. */
  running(documentName: string): Promise<void> | undefined {
    return this.recovering.get(documentName);
  }

  /** Resolves once no rebuild of the document is under way (whatever its outcome). */
  async settled(documentName: string) {
    await this.recovering.get(documentName)?.catch(() => {});
  }

  /**
   * Rebuilds the document from its log. `failure`: a commit failed, which
   * voids the server changes made after it (built on it). `refusal`: a
   * change was refused before it was logged, which voids none: those before
   * it commit first (the rebuild waits for them), those after wait for the
   * rebuild.
   */
  recover(documentName: string, cause: 'failure' | 'refusal' = 'failure'): Promise<void> {
    if (cause === 'failure') this.generations.set(documentName, this.generationOf(documentName) + 1);
    const running = this.recovering.get(documentName);
    if (running) return running;
    const run = (async () => {
      if (cause === 'refusal') await this.deps.serverChangesSettled(documentName);
      // Messages that passed the gate before it closed finish logging first, so the rebuilt state holds them.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await this.deps.logSettled();
      const document = this.deps.document(documentName);
      if (!document) return; // unloaded meanwhile: the next load reads the log
      const rebuilt = new Y.Doc({ gc: true });
      try {
        await loadInto(this.deps.db, documentName, rebuilt, this.deps.loadBudgetBytes);
        await this.deps.failpoints.pass('document.recovery');
        replaceDocumentState(document, rebuilt);
      } catch (error) {
        this.deps.log.error({ err: error, documentName }, 'could not rebuild a document from its log; unloading it');
        rebuilt.destroy();
        await this.deps.drop(documentName);
        return;
      }
      this.deps.log.info({ documentName }, 'document rebuilt from its log after a failed commit');
      await this.deps.reproject(documentName);
    })().finally(() => {
      if (this.recovering.get(documentName) === run) this.recovering.delete(documentName);
    });
    this.recovering.set(documentName, run);
    return run;
  }
}
