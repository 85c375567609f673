// Preloaded with `--import` into a server process: every package the process imports as an ES module (a bare
// specifier, resolved from anywhere) is appended to the file named by RECORD_IMPORTS_TO, one a line.
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_IMPORTS_TO } });
