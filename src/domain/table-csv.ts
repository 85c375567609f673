import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import type { CsvError, Options, parse } from 'csv-parse';
import type { stringify } from 'csv-stringify/sync';
import type * as Y from 'yjs';
import { ApiError, errors, OverLimitError, RateLimitedError } from '../errors';
import { whenNeeded } from '../lib/when-needed';
import type { Actor } from '../policy/actor';
import type { Workspace } from '../persistence/schema';
import { capsFor } from '../limits/plans';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { storableText } from '../lib/text';
import { tablesDocumentName } from '../model/document-names';
import {
  addToColumnStats,
  decodeCsvCell,
  emptyColumnStats,
  encodeCsvCell,
  ID_HEADER,
  inferColumnType,
  mapCsvHeaders,
  neutralizeFormula,
  type ColumnStats,
  type HeaderTarget,
  type InferredColumn,
} from '../model/table/csv';
import { addColumn, createTableId, ensureSheet, insertRows, normalizeLinkCells, readColumns, rowExists, validateCellValues, type ColumnDef, type NewRow, type RowData } from '../model/table/document';
import { unpassedRows } from '../sync/table-passed';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { linkChecks, listWorkspaceRows, lookUpPassedRows, passedRowCount, pickTableSurface, tableSurfaces, tableSurfaceForWrite, transactWithinRowCap, type RowListing, type RowRecord, type SurfaceSelector } from './tables';
import type { ViewDef } from '../model/table/views';
import { upgradeUrl } from './workspaces';

/**
 * CSV in and out of a sheet (docs/TABLES.md, "CSV"). Cells are encoded and
 * read back by src/model/table/csv.ts, which the web app's import preview
 * shares.
 */

// ---------------------------------------------------------------------------
// Export

/** A view's columns as it shows them: its order first, then the sheet's others in their order, without the hidden ones. */
function viewColumns(view: ViewDef, columns: readonly ColumnDef[]): string[] {
  const keys = columns.map((column) => column.key);
  const ordered = [...view.columnOrder.filter((key) => keys.includes(key)), ...keys.filter((key) => !view.columnOrder.includes(key))];
  return ordered.filter((key) => !view.hiddenColumns.includes(key));
}

/** Rows read per page while streaming: memory stays at one page whatever the table's size. */
export const CSV_EXPORT_PAGE = 1000;

export type RowsCsvQuery = Omit<RowListing, 'view'>;

/**
 * How the file is written (docs/TABLES.md "Export"). The defaults are the
 * round-trip form an import reads back; the web app asks for the form people
 * open in a spreadsheet (labels, a BOM, formulas neutralized).
 */
export type CsvForm = {
  /** `keys`: `id` then the column keys; `labels`: the column labels, without the `id` column. */
  headers?: 'keys' | 'labels';
  /** A UTF-8 byte order mark first, which spreadsheets need to read non-ASCII text right. */
  bom?: boolean;
  /** `formulas`: fields a spreadsheet would run get a leading `'` (neutralizeFormula). */
  neutralize?: 'formulas';
};

export type RowsCsv = {
  /** What was exported, for the download's file name: the view's name, else the sheet's. */
  title: string;
  /** RFC 4180 text, a page of rows per chunk; pulled, so a slow reader holds the listing back instead of filling memory. */
  chunks: AsyncIterable<string>;
  /** Once the chunks are read: the rows written, and whether rows past `maxRows` were left out. */
  readonly rows: number;
  readonly truncated: boolean;
};

/**
 * One sheet as CSV: a header, then a record per row in the listing's order.
 * The same listing as `GET /rows` (the query's sheet, else the primary one,
 * and its sort), read a page at a time. `columns` picks and orders the
 * columns; a view's visible ones in its order when a view is given; else
 * every column of the sheet in its order. The first page is read before
 * this returns, so a bad query fails before anything is sent.
 */
export async function rowsCsv(
  services: Services,
  workspace: Workspace,
  query: Omit<RowsCsvQuery, 'limit' | 'after'>,
  options: { columns?: readonly string[]; maxRows?: number; view?: ViewDef | null; form?: CsvForm } = {},
): Promise<RowsCsv> {
  const view = options.view ?? null;
  const form = options.form ?? {};
  const sheet = await pickTableSurface(services, workspace, view ? { surfaceId: view.surfaceId } : query);
  if (!sheet) throw errors.notFound('Table surface');
  const all = await services.sync.read(tablesDocumentName(workspace.id), (doc) => readColumns(doc, sheet.id));
  const keys = options.columns
    ? options.columns.filter((key) => all.some((column) => column.key === key))
    : view
      ? viewColumns(view, all)
      : all.map((column) => column.key);
  const listing = { ...query, surface: undefined, surfaceId: sheet.id, limit: CSV_EXPORT_PAGE } as RowsCsvQuery;
  const first = await listWorkspaceRows(services, workspace, listing, view);
  const labels = form.headers === 'labels';
  const header = labels ? keys.map((key) => all.find((column) => column.key === key)!.label) : [ID_HEADER, ...keys];
  const record = (row: { id: string; data: Record<string, unknown> }) => {
    const cells = keys.map((key) => encodeCsvCell(row.data[key]));
    return labels ? cells : [row.id, ...cells];
  };
  const field = form.neutralize === 'formulas' ? neutralizeFormula : (text: string) => text;
  // RFC 4180: CRLF between records; a field is quoted when it holds a comma, a quote, a CR or an LF (alone too: every reader splits a record there), or leading or trailing white space.
  const text = (records: string[][]) => whenNeeded<{ stringify: typeof stringify }>('csv-stringify/sync').stringify(records.map((cells) => cells.map(field)), { record_delimiter: 'windows', quoted_match: /^\s|\s$|[\r\n]/ });
  let room = options.maxRows ?? Infinity;
  let truncated = false;
  let written = 0;
  // Up to the rows left under `maxRows`; a page past them (or a cursor to one) marks the text truncated.
  const take = (rows: RowRecord[], nextCursor: string | null) => {
    const taken = rows.slice(0, room);
    room -= taken.length;
    written += taken.length;
    if (taken.length < rows.length || (room === 0 && nextCursor)) truncated = true;
    return taken;
  };
  async function* chunks() {
    yield (form.bom ? '\uFEFF' : '') + text([header, ...take(first.rows, first.nextCursor).map(record)]);
    let after = truncated ? null : first.nextCursor;
    while (after) {
      const page = await listWorkspaceRows(services, workspace, { ...listing, after }, view);
      const rows = take(page.rows, page.nextCursor);
      if (rows.length > 0) yield text(rows.map(record));
      after = truncated ? null : page.nextCursor;
    }
  }
  return {
    title: view?.name ?? sheet.name,
    chunks: chunks(),
    get rows() {
      return written;
    },
    get truncated() {
      return truncated;
    },
  };
}

// ---------------------------------------------------------------------------
// Import

/**
 * Rows written per transaction (one attributed change, one `row.created`
 * each), at most: a batch also ends at CSV_IMPORT_BATCH_BYTES of fields, so
 * that its statements (the projection's rows, the events), which the
 * embedded database runs without handing the event loop back, stay short
 * however wide the rows are.
 */
export const CSV_IMPORT_BATCH = 250;
const CSV_IMPORT_BATCH_BYTES = 64 * 1024;
/** Row ids of the file checked against the table per read. */
const CSV_IMPORT_ID_CHECKS = 500;
/** CSV imports one organisation may run at once, on each instance (what they share is its memory and event loop). */
export const CSV_IMPORTS_AT_ONCE = 2;
/** The Retry-After of the 429 past CSV_IMPORTS_AT_ONCE. */
const CSV_IMPORT_RETRY_SECONDS = 5;
/** How long an import holds the event loop before others get a turn (docs/SYNC.md's rule for background work). */
const TURN_BUDGET_MS = 20;
/** Line errors listed in a report; the rest are counted in a last entry. */
const REPORTED_ERRORS = 1000;
/** A record longer than this (an unclosed quote swallowing the file) is an error, not a memory spike. */
const MAX_RECORD_BYTES = 1024 * 1024;
const MAX_ROW_ID = 100;

export type ImportReport = {
  imported: number;
  refused: number;
  columnsCreated: string[];
  errors: Array<{ line: number; message: string }>;
};

/** A failed import (a bad line without `partial`): 422 with the standard error envelope and the report beside it; nothing was written. */
export class ImportFailedError extends ApiError {
  constructor(readonly report: ImportReport) {
    const lines = report.errors.length;
    super(422, 'import_failed', `${lines === 1 ? 'A line' : `${lines} lines`} of the file could not be imported, so nothing was (send partial=true to import the good lines).`, report.errors.map((e) => ({ path: ['line', String(e.line)], code: 'invalid_line', message: e.message })));
  }
  override body() {
    return { ...super.body(), ...this.report };
  }
}

type ParsedRecord = { fields: string[]; line: number };

/** What a record's visitor answers: go on, stop reading, or wait for this first. */
type Visited = void | 'stop' | Promise<void | 'stop'>;

/** Records csv-parse may hold for the visitor before it is paused. */
const PARSED_AHEAD = 4096;

/**
 * Visits the file's records in order, with the line each starts on;
 * csv-parse's errors (a bad quote, a record of the wrong length) go to
 * `onError` and parsing goes on with the next record. The same bytes give
 * the same records each time, so a record's ordinal names it across the two
 * passes. Records are taken from the parser a batch at a time and visited
 * in a plain loop, not one promise each (a file of millions of short lines
 * would otherwise make garbage faster than it is collected); between
 * records, the event loop gets a turn once this one has run TURN_BUDGET_MS.
 */
async function readRecords(source: Readable, onError: (line: number, message: string) => void, visit: (record: ParsedRecord) => Visited): Promise<void> {
  // csv-parse's own line counts drift on CRLF inside quotes; its raw text of each record (skipped blank lines first) counts true.
  // Lines are counted as csv-parse goes (on_record, 'skip'), in the file's order, not as records are taken from its buffer.
  let consumed = 0;
  const startLine = (raw: string | undefined) => {
    if (raw === undefined) return consumed + 1;
    const line = consumed + 1 + lineBreaks(/^[\r\n]*/.exec(raw)![0]);
    consumed += lineBreaks(raw);
    return line;
  };
  const parser = source.pipe(
    whenNeeded<{ parse: typeof parse }>('csv-parse').parse({
      bom: true,
      raw: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      max_record_size: MAX_RECORD_BYTES,
      // With `raw`, a record reaches on_record as { record, raw }.
      on_record: (parsed: unknown) => {
        const { record, raw } = parsed as { record: string[]; raw: string };
        return { fields: record.map(storableText), line: startLine(raw) };
      },
    } as unknown as Options),
  );
  source.on('error', (error) => parser.destroy(error));
  type Skipped = { skipped: string; line: number };
  const parsed: Array<ParsedRecord | Skipped> = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const woken = () => {
    wake?.();
    wake = null;
  };
  const take = (item: ParsedRecord | Skipped) => {
    parsed.push(item);
    if (parsed.length >= PARSED_AHEAD) parser.pause();
    woken();
  };
  parser.on('data', take);
  // A line csv-parse skips is reported in its place among the records: not at all if the visitor stops before it.
  parser.on('skip', (error: CsvError & { raw?: string }) => take({ skipped: csvErrorMessage(error), line: startLine(error.raw) }));
  parser.on('end', () => {
    ended = true;
    woken();
  });
  parser.on('error', (error) => {
    failure = error;
    woken();
  });
  const turns = new EventLoopTurns(TURN_BUDGET_MS);
  try {
    for (;;) {
      if (parsed.length > 0) {
        const batch = parsed.splice(0);
        parser.resume();
        for (const record of batch) {
          if ('skipped' in record) {
            onError(record.line, record.skipped);
            continue;
          }
          let visited = visit(record);
          if (visited instanceof Promise) visited = await visited;
          if (visited === 'stop') return;
          if (turns.isLong()) await turns.nextTurn();
        }
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } catch (error) {
    // Errors csv-parse cannot skip past (the file ends inside a quote) end the file there.
    const csvError = error as CsvError & { raw?: string };
    if (typeof csvError.code === 'string' && csvError.code.startsWith('CSV_')) onError(startLine(csvError.raw), csvErrorMessage(csvError));
    else throw error;
  } finally {
    source.destroy();
  }
}

function lineBreaks(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

function csvErrorMessage(error: CsvError): string {
  // csv-parse's messages are plain and name the line; drop its trailing detail of the parser's state.
  return `Malformed CSV: ${error.message.split('\n')[0]}`;
}

/**
 * The upload as it was read, kept on disk for the second pass, so memory
 * holds a chunk of it whatever the file's size. Only what was read is
 * kept: a check that stops early leaves the rest of the upload unread.
 */
class Spool {
  private constructor(
    private readonly directory: string,
    private readonly writer: WriteStream,
  ) {}

  static async open(): Promise<Spool> {
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-import-'));
    const writer = createWriteStream(path.join(directory, 'upload.csv'), { flags: 'wx' });
    // A failed write reaches the import through its callback (the tee fails with it); unheard, the stream's 'error' would end the process.
    writer.on('error', () => {});
    return new Spool(directory, writer);
  }

  /** The upload passed on as it is written here, a chunk at a time: the disk's pace holds the upload back. */
  tee(source: Readable): Readable {
    const tee = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.writer.write(chunk, (error) => done(error, chunk));
      },
    });
    source.on('error', (error) => tee.destroy(error));
    // A reader that stops early stops the upload too (src/http/multipart.ts drops the rest unread).
    tee.on('close', () => source.destroy());
    return source.pipe(tee);
  }

  /** Everything written, from the start (call after the first pass). */
  async read(): Promise<Readable> {
    await this.finished();
    return createReadStream(path.join(this.directory, 'upload.csv'));
  }

  async remove(): Promise<void> {
    // The writes already handed over (a first pass stopped early leaves some in flight) end first.
    await this.finished().catch(() => {});
    await fs.rm(this.directory, { recursive: true, force: true });
  }

  private finished(): Promise<void> {
    if (this.writer.writableFinished || this.writer.destroyed) return Promise.resolve();
    return new Promise((resolve, reject) => this.writer.end((error?: Error | null) => (error ? reject(error) : resolve())));
  }
}

/** Ordinals of the bad records, a bit each: a file of millions of bad lines costs a few hundred kilobytes. */
class OrdinalSet {
  private bits = new Uint8Array(1024);

  add(ordinal: number) {
    while (ordinal >> 3 >= this.bits.length) {
      const grown = new Uint8Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[ordinal >> 3]! |= 1 << (ordinal & 7);
  }

  has(ordinal: number): boolean {
    return ordinal >> 3 < this.bits.length && (this.bits[ordinal >> 3]! & (1 << (ordinal & 7))) !== 0;
  }
}

type ImportPlan = {
  sheetId: string;
  targets: HeaderTarget[];
  /** The existing columns at the check, and by key. */
  columns: ColumnDef[];
  existing: Map<string, ColumnDef>;
  /** New columns with their inferred types, in header order. */
  created: Array<{ key: string; label: string } & InferredColumn>;
  /** Ordinals (0-based, data records only) of the records with an error. */
  bad: OrdinalSet;
  /** Good records within the room under the row cap. */
  good: number;
  /** Data records the check read: the write pass reads no further. */
  read: number;
  /** The rows the workspace held and could still take when the check began. */
  current: number;
  room: number;
  /** The first good line past the room, where the check stopped reading (null: everything fit). */
  pastCap: number | null;
  /** The errors to report, in line order, the last one saying what was not listed or not read. */
  errors: ImportReport['errors'];
};

/**
 * Reads a CSV upload into a sheet (`POST /rows/import`), reading it as it
 * arrives. The first pass maps the headers, infers the types of new
 * columns and checks every line (values against existing columns, row
 * ids), keeping the bytes it read on disk; the second reads them back and
 * writes the rows in batches of CSV_IMPORT_BATCH, each one attributed
 * transaction with a `row.created` per row. Without `partial`, a bad line
 * fails the import before anything is written (ImportFailedError), and a
 * file with more rows than the plan's row cap leaves room for is 402,
 * nothing written; with it, the good lines are written and the bad ones
 * reported, up to the cap. The first pass stops reading as soon as nothing
 * more could be written: at the first good line past the cap, or (without
 * `partial`) at the REPORTED_ERRORS-th bad line. An organisation runs at
 * most CSV_IMPORTS_AT_ONCE imports at a time (429 beyond).
 */
export async function importRowsCsv(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  input: SurfaceSelector & { partial: boolean; open: () => Promise<Readable> },
): Promise<ImportReport> {
  const release = services.limits.running.tryAcquire(`csv_import:${resolved.workspace.orgId}`, CSV_IMPORTS_AT_ONCE);
  if (!release) {
    const now = services.clock.now();
    const retry = new Date(now.getTime() + CSV_IMPORT_RETRY_SECONDS * 1000);
    throw new RateLimitedError('csv_imports', CSV_IMPORTS_AT_ONCE, 'concurrent', retry, now, `This organisation is running ${CSV_IMPORTS_AT_ONCE} CSV imports, the most it may run at once; nothing was read or written.`);
  }
  let spool: Spool | null = null;
  try {
    const sheet = await tableSurfaceForWrite(services, actor, resolved, input);
    const source = await input.open();
    spool = await Spool.open();
    const plan = await checkFile(services, resolved, sheet.id, spool.tee(source), input.partial);
    const report: ImportReport = { imported: 0, refused: 0, columnsCreated: plan.created.map((c) => c.key), errors: plan.errors };
    if (plan.errors.length > 0 && !input.partial) throw new ImportFailedError(report);
    if (plan.pastCap !== null && !input.partial) throw rowCapError(services, resolved, plan);
    await writeRows(services, actor, resolved, plan, await spool.read(), report);
    return report;
  } finally {
    release();
    await spool?.remove();
  }
}

function rowCapError(services: Services, resolved: ResolvedWorkspace, plan: ImportPlan): OverLimitError {
  const cap = capsFor(resolved.orgPlan).rowsPerWorkspace;
  return new OverLimitError(
    'rows',
    plan.current,
    cap,
    { plan: resolved.orgPlan, upgradeUrl: upgradeUrl(services) },
    `The ${resolved.orgPlan} plan allows ${cap} rows in a workspace, and this one holds ${plan.current}: the file has more rows than the ${plan.room} that fit ` +
      `(the import stopped reading at line ${plan.pastCap}), so none were imported. Send partial=true to import the first ${plan.room}, or upgrade the plan.`,
  );
}

function capMessage(plan: string, cap: number): string {
  return `The ${plan} plan allows ${cap} rows in a workspace: the import stopped at this line, and it and the rest of the file were not imported (upgrade the plan or delete rows, then import them again).`;
}

async function checkFile(services: Services, resolved: ResolvedWorkspace, sheetId: string, source: Readable, partial: boolean): Promise<ImportPlan> {
  const { workspace } = resolved;
  const document = tablesDocumentName(workspace.id);
  const cap = capsFor(resolved.orgPlan).rowsPerWorkspace;
  await lookUpPassedRows(services, workspace.id);
  const { columns, current } = await services.sync.read(document, (doc) => ({ columns: readColumns(doc, sheetId), current: passedRowCount(doc) }));
  const errorLines = new Map<number, string[]>();
  let moreErrors = 0;
  const errorAt = (line: number, message: string) => {
    const known = errorLines.get(line);
    if (known) known.push(message);
    else if (errorLines.size < REPORTED_ERRORS) errorLines.set(line, [message]);
    else moreErrors++;
  };
  const plan: ImportPlan = {
    sheetId,
    targets: [],
    columns,
    existing: new Map(columns.map((c) => [c.key, c])),
    created: [],
    bad: new OrdinalSet(),
    good: 0,
    read: 0,
    current,
    room: Math.max(0, cap - current),
    pastCap: null,
    errors: [],
  };
  const stats: ColumnStats[] = [];
  const ids = new Set<string>();
  // Ids are checked against the table a batch at a time (one read each), not a read per line.
  let pendingIds: Array<{ id: string; ordinal: number; line: number }> = [];
  const checkPendingIds = async () => {
    if (pendingIds.length === 0) return;
    const batch = pendingIds;
    pendingIds = [];
    const taken = await services.sync.read(document, (doc) => batch.filter((entry) => rowExists(doc, entry.id)));
    for (const entry of taken) {
      errorAt(entry.line, `Row id ${entry.id} is already taken in this workspace (409 conflict); leave the id field empty to import the row with a new id.`);
      if (!plan.bad.has(entry.ordinal)) {
        plan.bad.add(entry.ordinal);
        plan.good--;
      }
    }
  };
  let header: string[] | null = null;
  let unreadFrom: number | null = null;
  const checkLine = (record: ParsedRecord): Visited => {
    // Without `partial` nothing will be written once a line is bad: the listed errors are all that is left to gather.
    if (!partial && errorLines.size >= REPORTED_ERRORS) {
      unreadFrom = record.line;
      return 'stop';
    }
    const problems = checkRecord(record, plan, ids);
    if (problems.length > 0) {
      for (const problem of problems) errorAt(record.line, problem);
      plan.bad.add(plan.read++);
      return;
    }
    if (plan.good >= plan.room) {
      // Nothing past here can be written, unless a taken id among the lines counted leaves a place for this one.
      return checkPendingIds().then(() => {
        if (plan.good >= plan.room) {
          plan.pastCap = record.line;
          return 'stop';
        }
        return takeGoodLine(record);
      });
    }
    return takeGoodLine(record);
  };
  const takeGoodLine = (record: ParsedRecord): Visited => {
    plan.good++;
    record.fields.forEach((text, i) => {
      if (plan.targets[i]?.kind === 'new') addToColumnStats(stats[i]!, text);
    });
    const id = idAt >= 0 ? record.fields[idAt]!.trim() : '';
    if (id !== '') pendingIds.push({ id, ordinal: plan.read, line: record.line });
    plan.read++;
    if (pendingIds.length >= CSV_IMPORT_ID_CHECKS) return checkPendingIds();
  };
  let idAt = -1;
  await readRecords(source, errorAt, (record) => {
    if (header) return checkLine(record);
    header = record.fields;
    const mapped = mapCsvHeaders(header, columns);
    if (mapped.problems.length > 0) {
      throw errors.badRequest(`The header row cannot be mapped to columns: ${mapped.problems.map((p) => p.message).join(' ')}`, mapped.problems.map((p) => ({ path: ['header', String(p.index)], code: 'invalid_header', message: p.message })));
    }
    plan.targets = mapped.targets;
    idAt = plan.targets.findIndex((t) => t.kind === 'id');
    for (const _ of header) stats.push(emptyColumnStats());
  });
  await checkPendingIds();
  if (!header) throw errors.badRequest('The file is empty: a CSV import needs a header row naming the columns.', [{ path: ['file'], code: 'empty_file', message: 'no header row' }]);
  plan.created = plan.targets.flatMap((target, i) => (target.kind === 'new' ? [{ key: target.key, label: target.label, ...inferColumnType(stats[i]!) }] : []));
  plan.errors = [...errorLines].sort(([a], [b]) => a - b).map(([line, messages]) => ({ line, message: messages.join(' ') }));
  const last = plan.errors.at(-1)?.line ?? 0;
  if (unreadFrom !== null) plan.errors.push({ line: unreadFrom, message: `The check stopped after ${REPORTED_ERRORS} bad lines: the file was not read from line ${unreadFrom} on.` });
  else if (moreErrors > 0) plan.errors.push({ line: last, message: `${moreErrors} more lines with errors after line ${last} are not listed.` });
  return plan;
}

/** What is wrong with one record: its length, its row id, and values that do not fit their existing typed columns. */
function checkRecord(record: ParsedRecord, plan: ImportPlan, ids: Set<string>): string[] {
  if (record.fields.length !== plan.targets.length) return [`Expected ${plan.targets.length} fields, got ${record.fields.length}.`];
  const problems: string[] = [];
  const data: Record<string, unknown> = {};
  let id = '';
  plan.targets.forEach((target, i) => {
    const text = record.fields[i]!;
    if (target.kind === 'id') {
      id = text.trim();
      if (id.length > MAX_ROW_ID) problems.push(`A row id is at most ${MAX_ROW_ID} characters.`);
      else if (id !== '' && ids.has(id)) problems.push(`Row id ${id} is given twice in the file (409 conflict).`);
    } else if (target.kind === 'column') {
      const value = decodeCsvCell(text, plan.existing.get(target.key));
      if (value !== undefined) data[target.key] = value;
    }
  });
  problems.push(...validateCellValues(plan.columns, normalizeLinkCells(plan.columns, data)).map((issue) => issue.message));
  // Only a line that will be written holds its id: a bad line's id stays free for a later line.
  if (problems.length === 0 && id !== '') ids.add(id);
  return problems;
}

async function writeRows(services: Services, actor: Actor, resolved: ResolvedWorkspace, plan: ImportPlan, source: Readable, report: ImportReport) {
  const cap = capsFor(resolved.orgPlan).rowsPerWorkspace;
  const surfaces = await tableSurfaces(services, resolved.workspace.id);
  const types = new Map<string, Pick<ColumnDef, 'type' | 'options'>>([...plan.existing, ...plan.created.map((c) => [c.key, c] as const)]);
  let columnsPending = plan.created.length > 0;
  let stopped = false;
  let batch: Array<NewRow & { line: number }> = [];
  let batchBytes = 0;

  const flush = async () => {
    const rows = batch;
    batch = [];
    batchBytes = 0;
    let take = 0;
    try {
      await transactWithinRowCap(
        services,
        actor,
        resolved,
        (doc) => (take = Math.min(rows.length, roomUnderCap(doc, cap))),
        (doc) => {
          ensureSheet(doc, plan.sheetId, null);
          if (columnsPending) for (const column of plan.created) addColumn(doc, plan.sheetId, column, null);
          const written = rows.slice(0, take);
          // Checked again inside the change: a column someone retyped since the first pass refuses the batch here.
          const columns = readColumns(doc, plan.sheetId);
          // Link cells name rows that exist on their target sheet (as a REST write checks them).
          const links = linkChecks(doc, surfaces);
          for (const row of written) row.data = normalizeLinkCells(columns, row.data) as RowData;
          const issue = written.flatMap((row) => validateCellValues(columns, row.data, { basePath: [String(row.line)], links }))[0];
          if (issue) throw errors.validation(`Line ${issue.path[0]}: ${issue.message}`);
          insertRows(doc, written, null);
        },
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Only a concurrent change between the check and the write gets here (a column retyped, an id taken meanwhile).
      const from = rows[0]?.line ?? 0;
      report.errors.push({ line: from, message: `The lines from ${from} on were not imported: ${error.message}` });
      stopped = true;
      return;
    }
    columnsPending = false;
    report.imported += take;
    if (take < rows.length) {
      // Someone else took the room the check saw.
      stopped = true;
      report.errors.push({ line: rows[take]!.line, message: capMessage(resolved.orgPlan, cap) });
    }
  };

  let header = true;
  let ordinal = 0;
  await readRecords(source, () => {}, (record) => {
    if (header) {
      header = false;
      return;
    }
    if (ordinal === plan.read) return 'stop';
    if (!plan.bad.has(ordinal)) {
      batch.push(rowOf(record, plan, types));
      for (const field of record.fields) batchBytes += field.length;
    }
    ordinal++;
    if (batch.length >= CSV_IMPORT_BATCH || batchBytes >= CSV_IMPORT_BATCH_BYTES) return flush().then(() => (stopped ? 'stop' : undefined));
  });
  // The last rows; new columns are created even when the file has no rows.
  if (!stopped && (batch.length > 0 || columnsPending)) await flush();
  // Rows the check found good but that were not written: past the cap, or after a concurrent change stopped the import.
  report.refused = plan.good - report.imported + (plan.pastCap === null ? 0 : 1);
  if (plan.pastCap !== null && !stopped) report.errors.push({ line: plan.pastCap, message: capMessage(resolved.orgPlan, cap) });
}

function rowOf(record: ParsedRecord, plan: ImportPlan, types: Map<string, Pick<ColumnDef, 'type' | 'options'>>): NewRow & { line: number } {
  let id = '';
  const data: RowData = {};
  plan.targets.forEach((target, i) => {
    const text = record.fields[i]!;
    if (target.kind === 'id') id = text.trim();
    else {
      const value = decodeCsvCell(text, types.get(target.key));
      if (value !== undefined) data[target.key] = value;
    }
  });
  return { id: id || createTableId(), surfaceId: plan.sheetId, data, line: record.line };
}

/** Rows the workspace may still take: the cap less the rows that passed it. */
function roomUnderCap(doc: Y.Doc, cap: number): number {
  return Math.max(0, cap - passedRowCount(doc));
}
