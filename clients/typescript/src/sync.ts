/**
 * Live documents for agents: a table as typed rows, or a doc as Markdown,
 * kept current over the Hocuspocus provider at `/api/sync` (the same
 * documents the web app edits; docs/SYNC-DOCUMENTS.md). The Y layouts are
 * read with the server's own model (bundled into the package), and each
 * open document runs the digest check, so `saved()` means the server holds
 * every change made through it.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import * as Y from 'yjs';
import { readDocBody } from '../../../src/model/doc/body';
import { docToMarkdown } from '../../../src/model/doc/markdown';
import { ConvergenceCheck } from '../../../src/model/sync-digest';
import { rowsAsRead } from '../../../src/model/table/computed';
import { listRows } from '../../../src/model/table/list';
import type { ReadRowData, TableRow as StoredRow } from '../../../src/model/table/types';
import { TrellisError, type TrellisClient } from './index';

/** A row as REST reads it: links to rows that exist, and lookups, formulas and rollups computed by the server's own code (docs/FORMULAS.md). */
export type TableRow = Omit<StoredRow, 'data'> & { data: ReadRowData };

export type OpenOptions = {
  baseUrl: string;
  apiKey: string;
  /** Workspace slug. */
  workspace: string;
  /** Surface slug. */
  surface: string;
  /** A WebSocket class where the runtime has none (Node 20: the `ws` package). */
  WebSocket?: unknown;
};

export interface LiveDocument {
  readonly doc: Y.Doc;
  readonly provider: HocuspocusProvider;
  /** Calls `listener` after every change, local or remote; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Resolves once the server's digest covers every change made here (and its durable log holds them). */
  saved(): Promise<void>;
  close(): void;
}

export interface LiveTable extends LiveDocument {
  readonly surfaceId: string;
  /** The sheet's rows in order, as they are now, computed cells included (TODAY() and NOW() read now, in the workspace's time zone). */
  rows(): TableRow[];
}

export interface LiveDoc extends LiveDocument {
  markdown(): string;
}

export async function openTable(client: TrellisClient, options: OpenOptions): Promise<LiveTable> {
  const { surface, live } = await open(client, options, 'table');
  return Object.assign(live, { surfaceId: surface.id, rows: () => rowsAsRead(live.doc, listRows(live.doc, { surfaceId: surface.id }).rows) });
}

export async function openDoc(client: TrellisClient, options: OpenOptions): Promise<LiveDoc> {
  const { live } = await open(client, options, 'doc');
  return Object.assign(live, { markdown: () => docToMarkdown(readDocBody(live.doc)) });
}

async function open(client: TrellisClient, options: OpenOptions, kind: 'table' | 'doc') {
  const { data, error, response } = await client.GET('/api/workspaces/{slug}/surfaces', { params: { path: { slug: options.workspace } } });
  if (error !== undefined || !data) throw new TrellisError(response.status, error);
  const surface = data.surfaces.find((s) => s.slug === options.surface);
  if (!surface || surface.kind !== kind || !surface.syncDocument) {
    throw new TrellisError(404, { error: { code: 'not_found', message: `No ${kind} surface "${options.surface}" in workspace "${options.workspace}".` } });
  }
  const socket = new HocuspocusProviderWebsocket({
    url: options.baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws') + '/api/sync',
    ...(options.WebSocket ? { WebSocketPolyfill: options.WebSocket as never } : {}),
  });
  const doc = new Y.Doc();
  let failed: ((error: Error) => void) | undefined;
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name: surface.syncDocument,
    document: doc,
    token: options.apiKey,
    onAuthenticationFailed: ({ reason }) => failed?.(new TrellisError(403, { error: { code: reason, message: `The sync connection was refused: ${reason}.` } })),
  });
  provider.attach();
  await new Promise<void>((resolve, reject) => {
    failed = reject;
    if (provider.isSynced) resolve();
    provider.on('synced', () => resolve());
  });
  const check = new ConvergenceCheck(provider);
  const live: LiveDocument = {
    doc,
    provider,
    onChange(listener) {
      const handler = () => listener();
      doc.on('update', handler);
      return () => doc.off('update', handler);
    },
    async saved() {
      while ((await check.check()) !== 'saved') await new Promise<void>((resolve) => setTimeout(resolve, 50));
    },
    close() {
      check.destroy();
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
  return { surface, live };
}
