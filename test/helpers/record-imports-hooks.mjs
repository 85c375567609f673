// The module hooks of record-imports.mjs (they run on Node's loader thread).
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, next) {
  if (file && !/^(node:|\.|\/|file:|data:)/.test(specifier)) appendFileSync(file, `${specifier}\n`);
  return next(specifier, context);
}
