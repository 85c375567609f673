import type { Node as PMNode } from 'prosemirror-model';

/**
 * What reading a file into a doc gives, shared by the readers
 * (./doc-import.ts, in the conversion threads) and the serving thread
 * (./doc-conversions.ts), which must not load the readers' libraries.
 */

export type ParsedImport = { doc: PMNode; warnings: string[] };

/** The Word file's images, by the `docx-image:N` source the HTML names them with. */
export type DocxImages = Map<string, { contentType: string; read(): Promise<Buffer> }>;

/** Bytes that are not the file their type says. */
export class UnreadableFileError extends Error {}
