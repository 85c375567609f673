import { sql, type RawBuilder } from 'kysely';

/**
 * Binary values (Y updates and snapshots) are written as `bytea` parameters
 * sent in binary: the bytes themselves, with no text encoding on either
 * side. node-postgres sends a Uint8Array parameter that way; PGlite does
 * once its `bytea` serializer hands the bytes back as they are
 * (pglite-instance.ts; its own writes hex text, byte by byte, and Postgres
 * parses it: a 9 MB snapshot took ~10 s). They went as base64 text decoded
 * by Postgres before (~0.5 s for the 9 MB): on PGlite the decode runs in
 * the serving thread, and a 3.4 MB state cost 105-218 ms a write as base64
 * against 51-68 ms in binary (docs/PERFORMANCE.md, issue 38, session 19,
 * h19-pauses). Results are read as base64 still (or as raw bytes on
 * PGlite, pglite-bytes.ts). Storage is unchanged: still `bytea`.
 */

/** A value for a `bytea` column, sent as a binary parameter. */
export function bytea(bytes: Uint8Array): RawBuilder<Uint8Array> {
  return sql<Uint8Array>`${bytes}::bytea`;
}

/** Base64 text of `bytes`, for statements written by hand that send many values in one text parameter: decode it with `decode($n, 'base64')`. */
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
