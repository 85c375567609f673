import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The directory holding package.json above `from` (a module's
 * `import.meta.dirname`). A fixed `../..` breaks with where the build puts
 * the code: src/persistence and dist/server are two levels under the
 * repository, but the bundle's shared chunks (dist/server/chunks) are three.
 */
export function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '../..');
  }
}
