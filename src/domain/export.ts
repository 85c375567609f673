import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import type { Executor } from '../persistence/database';
import {
  exportAgents,
  exportCommentReactions,
  exportComments,
  exportKeys,
  exportMemberships,
  exportOrganisations,
  exportProfile,
  exportSessions,
  exportWebhooks,
  exportWorkspaces,
  type Page,
} from '../persistence/export';
import type { Services } from './services';

/**
 * The personal data export: everything of the user's that exists, as one
 * JSON object written section by section so that memory stays flat however
 * much there is. Later features add sections here (rows, comments,
 * webhooks, files); each is a name and a paged reader.
 */

const PAGE_SIZE = 500;

type SectionReader = (db: Executor, userId: string, page: Page) => Promise<object[]>;

/** In output order, after `exportedAt` and `profile`. */
const SECTIONS: Array<[name: string, read: SectionReader]> = [
  ['organisations', exportOrganisations],
  ['workspaces', exportWorkspaces],
  ['memberships', exportMemberships],
  ['agents', exportAgents],
  ['keys', exportKeys],
  ['sessions', exportSessions],
  ['comments', exportComments],
  ['commentReactions', exportCommentReactions],
  ['webhooks', exportWebhooks],
];

export type OpenedExport = { filename: string; chunks: AsyncGenerator<string> };

/**
 * Loads the profile first, so a missing user fails as a normal error
 * response; everything after it is streamed. Sessions only: a key or token
 * exporting its owner's data would leak far beyond what it reaches.
 */
export async function openExport(services: Services, actor: Actor): Promise<OpenedExport> {
  if (actor.via !== 'session') throw errors.forbidden('The data export is for people signed in with a session, not API keys or tokens.');
  const profile = await exportProfile(services.db, actor.userId);
  if (!profile) throw errors.unauthorized();
  const exportedAt = services.clock.now().toISOString();
  return {
    filename: `trellis-export-${exportedAt.slice(0, 10)}.json`,
    chunks: writeExport(services.db, actor.userId, { exportedAt, profile }),
  };
}

async function* writeExport(db: Executor, userId: string, head: { exportedAt: string; profile: object }): AsyncGenerator<string> {
  yield `{"exportedAt":${JSON.stringify(head.exportedAt)},"profile":${JSON.stringify(head.profile)}`;
  for (const [name, read] of SECTIONS) {
    yield `,${JSON.stringify(name)}:[`;
    let separator = '';
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const rows = await read(db, userId, { limit: PAGE_SIZE, offset });
      if (rows.length > 0) yield separator + rows.map((row) => JSON.stringify(row)).join(',');
      separator = ',';
      if (rows.length < PAGE_SIZE) break;
    }
    yield ']';
  }
  yield '}\n';
}
