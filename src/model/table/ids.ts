/**
 * Short random ids for things that live inside the table document (column
 * ids) and the base64url helpers for opaque cursors. Web Crypto and
 * TextEncoder only, so the web app can import the table module unchanged.
 */

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `length` base64url characters of crypto randomness (6 bits each; 10 chars = 60 bits). */
export function createTableId(length = 10): string {
  let id = '';
  for (let i = 0; i < length; i++) id += BASE64URL[randomByte() & 63];
  return id;
}

// Random bytes drawn a pool at a time: a call to the system's generator costs far more than the few bytes an id takes (every row a server writes gets one).
const POOL_BYTES = 4_096;
const pool = new Uint8Array(POOL_BYTES);
let drawn = POOL_BYTES;

function randomByte(): number {
  if (drawn === POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool);
    drawn = 0;
  }
  return pool[drawn++]!;
}

export function encodeBase64UrlJson(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** Returns undefined for anything that is not base64url-encoded JSON. */
export function decodeBase64UrlJson(text: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}
