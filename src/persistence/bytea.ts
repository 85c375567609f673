import { sql, type RawBuilder } from 'kysely';

/**
 * Binary values (Y updates and snapshots) cross to and from the database as
 * base64 text, decoded and encoded by Postgres. PGlite turns a `bytea`
 * parameter into hex and parses a `bytea` result back in JavaScript, byte
 * by byte: a 9 MB snapshot took ~10 s to write and ~1.2 s to read that way,
 * against ~0.5 s and ~0.3 s as base64 (Node encodes and decodes base64
 * natively), and small log rows cost about twice as much. On Postgres the
 * difference is small either way. Storage is unchanged: still `bytea`.
 */

/** A value for a `bytea` column. */
export function bytea(bytes: Uint8Array): RawBuilder<Uint8Array> {
  return sql<Uint8Array>`decode(${base64Of(bytes)}, 'base64')`;
}

/** The text `bytea` sends for `bytes`, for statements written by hand: decode it with `decode($n, 'base64')`. */
export function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Selects a `bytea` column as base64 text, under its own name; read it with `fromBase64`. */
export function byteaAsBase64(column: string): RawBuilder<string> {
  return sql<string>`encode(${sql.ref(column)}, 'base64')`;
}

/** Bytes from `byteaAsBase64` (Postgres breaks the text into lines; Node's decoder skips them). */
export function fromBase64(text: string): Uint8Array {
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
