import { createHash } from 'node:crypto';
import { ApiError } from '../errors';
import { logHead } from '../persistence/versions';
import type { Services } from './services';
import { holdBaseVersion } from '../sync/version-index';

/**
 * Version tokens (`ETag`): a document's log position plus a short hash of
 * the document's name, so a token read from one surface cannot pass as a
 * base of another. Reads hand them out (and hold them for compaction);
 * writes name them as their base (`If-Match` or `baseVersion`).
 */

function documentHash(document: string): string {
  return createHash('sha256').update(document).digest('base64url').slice(0, 8);
}

export function versionTag(document: string, seq: number): string {
  return `"${seq}.${documentHash(document)}"`;
}

/** The log position a token names for this document, or null when it is not one of its tokens. */
export function parseVersionTag(document: string, raw: string): number | null {
  const match = /^(?:W\/)?"?(\d{1,15})\.([A-Za-z0-9_-]{8})"?$/.exec(raw.trim());
  if (!match || match[2] !== documentHash(document)) return null;
  return Number(match[1]);
}

/**
 * The token of the document as a read is about to see it: the newest log
 * position is taken before the read, so what the reader gets holds at least
 * that state (an update still being applied may add to it, never the
 * reverse). Held so compaction keeps it usable as a base.
 */
export async function readVersionTag(services: Services, document: string): Promise<string> {
  const seq = await logHead(services.db, document);
  await holdBaseVersion(services.db, document, seq, services.clock.now());
  return versionTag(document, seq);
}

export function preconditionFailed(code: 'precondition_failed' | 'base_unavailable', message: string): ApiError {
  return new ApiError(412, code, message);
}

/**
 * The base a write names: the `If-Match` header or the body's `baseVersion`
 * (the same token when both are sent). `*` or nothing means no base. A
 * token that is not one of this document's, or from its future, is 412.
 */
/** What a write names as its base: the `If-Match` header, the body's `baseVersion`, or both. */
export type WriteBase = { ifMatch?: string; baseVersion?: string };

export async function baseOfWrite(services: Services, document: string, base: WriteBase): Promise<number | null> {
  const header = base.ifMatch?.trim();
  if (header && header.includes(',')) throw preconditionFailed('precondition_failed', 'If-Match names one version token.');
  const raw = header && header !== '*' ? header : base.baseVersion;
  if (header && header !== '*' && base.baseVersion && parseVersionTag(document, base.baseVersion) !== parseVersionTag(document, header)) {
    throw preconditionFailed('precondition_failed', 'If-Match and baseVersion name different versions.');
  }
  if (!raw) return null;
  const seq = parseVersionTag(document, raw);
  if (seq === null || seq > (await logHead(services.db, document))) {
    throw preconditionFailed('precondition_failed', 'The base version is not a version token of this document (read it again for a fresh ETag).');
  }
  return seq;
}
