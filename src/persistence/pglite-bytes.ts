import type { PGlite } from '@electric-sql/pglite';
import { PostgresAdapter, type Kysely } from 'kysely';
import { serialize } from 'pg-protocol';

/**
 * A statement whose result columns are all `bytea`, read from PGlite as raw
 * bytes. PGlite's `query` asks for every result in text, turns each row's
 * text into a JavaScript string and parses a `bytea` hex string byte by
 * byte; as base64 (./bytea.ts) the 11.8 MB stored copy of a 50,000-row
 * table still cost 320-920 ms of CPU on the first read after a restart
 * (Postgres's encoding, the string, Node's decoding). Here the statement
 * goes to PGlite as protocol messages asking for binary results, and the
 * reply's bytes are taken as they come, unparsed: 80-140 ms, most of it
 * reading and decompressing the value inside Postgres (docs/PERFORMANCE.md,
 * issue 38, "The first client's read as bytes").
 *
 * Marked with BYTEA_ROWS at its start, a statement takes this path through
 * the PGlite dialect (./pglite-dialect.ts); on Postgres the mark is only a
 * comment. Postgres is better read as base64 still: node-postgres gets a
 * `bytea` as hex text, and its 23 MB string cost 163-224 ms of client CPU
 * against 71-105 ms as base64 (the same 11.8 MB value), so callers ask
 * `readsRawBytes` which to write. Parameters go as text.
 */
export const BYTEA_ROWS = '/* trellis:bytea-rows */';

/** The PGlite dialect's adapter: how a statement's executor (a transaction's too) tells PGlite from Postgres. */
export class PGliteAdapter extends PostgresAdapter {}

/** Whether `db` reads a BYTEA_ROWS statement as raw bytes (PGlite); else select base64 (./bytea.ts). */
export function readsRawBytes(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PGliteAdapter;
}

export type ByteaRows = Array<Record<string, Uint8Array | null>>;

const BYTEA_OID = 17;

/** Runs `sql` on `pglite` (in the session as it stands: inside a transaction if one is open), every result column in binary. */
export async function queryByteaRows(pglite: PGlite, sql: string, parameters: unknown[] = []): Promise<ByteaRows> {
  const chunks: Uint8Array[] = [];
  await pglite.runExclusive(() =>
    pglite.execProtocolRawStream(binaryQueryMessages(sql, parameters), {
      // As PGlite's own query does outside its `transaction()`: what the statement wrote (hint bits, an evicted page) reaches the file layer.
      syncToFs: true,
      // A view into the database's memory, valid during this call only.
      onRawData: (chunk) => void chunks.push(chunk.slice()),
    }),
  );
  return rowsOf(chunks.length === 1 ? chunks[0]! : concat(chunks));
}

const decoder = new TextDecoder();

/**
 * Parse, Bind (parameters as text, every result column binary), Describe
 * the portal (for the column names), Execute, Sync: written by pg-protocol,
 * node-postgres's own serializer.
 */
export function binaryQueryMessages(sql: string, parameters: unknown[]): Uint8Array {
  const values = parameters.map((p) => (p === null || p === undefined ? null : p instanceof Date ? p.toISOString() : String(p)));
  return concat([serialize.parse({ text: sql }), serialize.bind({ values, binary: true }), serialize.describe({ type: 'P' }), serialize.execute(), serialize.sync()]);
}

/** The rows of a reply to binaryQueryMessages, each value its own copy (so it can move to another thread); an ErrorResponse thrown as PGlite would. */
export function rowsOf(reply: Uint8Array): ByteaRows {
  const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
  const rows: ByteaRows = [];
  let names: string[] = [];
  let error: Error | null = null;
  for (let at = 0; at < reply.byteLength; ) {
    const type = reply[at]!;
    const end = at + 1 + view.getInt32(at + 1);
    let p = at + 5;
    if (type === 0x54 /* T: RowDescription */) {
      const count = view.getInt16(p);
      p += 2;
      names = [];
      for (let i = 0; i < count; i++) {
        const nameEnd = reply.indexOf(0, p);
        names.push(decoder.decode(reply.subarray(p, nameEnd)));
        const typeOid = view.getInt32(nameEnd + 1 + 6);
        if (typeOid !== BYTEA_OID) error ??= new Error(`queryByteaRows: column ${names[i]} is not bytea (type ${typeOid})`);
        p = nameEnd + 1 + 18;
      }
    } else if (type === 0x44 /* D: DataRow */) {
      const count = view.getInt16(p);
      p += 2;
      const row: Record<string, Uint8Array | null> = {};
      for (let i = 0; i < count; i++) {
        const length = view.getInt32(p);
        p += 4;
        row[names[i] ?? String(i)] = length < 0 ? null : reply.slice(p, p + length);
        if (length > 0) p += length;
      }
      rows.push(row);
    } else if (type === 0x45 /* E: ErrorResponse */) {
      error = errorOf(reply.subarray(p, end));
    }
    at = end;
  }
  if (error) throw error;
  return rows;
}

/** An ErrorResponse's fields, named as PGlite's DatabaseError names them. */
function errorOf(body: Uint8Array): Error {
  const names: Record<string, string> = { S: 'severity', C: 'code', D: 'detail', H: 'hint', s: 'schema', t: 'table', c: 'column', n: 'constraint', P: 'position', W: 'where' };
  const fields: Record<string, string> = {};
  for (let p = 0; p < body.byteLength && body[p] !== 0; ) {
    const end = body.indexOf(0, p + 1);
    fields[String.fromCharCode(body[p]!)] = decoder.decode(body.subarray(p + 1, end));
    p = end + 1;
  }
  const error = new Error(fields.M ?? 'database error');
  for (const [key, name] of Object.entries(names)) if (fields[key] !== undefined) Object.assign(error, { [name]: fields[key] });
  return error;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
