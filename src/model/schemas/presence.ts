import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** Who has a surface open (docs/SYNC.md, "Presence"). */

export const PresenceCursor = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('cell'),
      rowId: z.string(),
      column: z.string().describe('The column key'),
    }),
    z.object({
      type: z.literal('doc'),
      anchor: z.number().int().describe('Where the selection starts, as a ProseMirror position of the body as `GET /doc` returns it (as comment anchors)'),
      head: z.number().int().describe('Where it ends (the caret); equal to `anchor` for a caret without a selection'),
    }),
  ])
  .describe('Where the client is, when it shares it: the active cell of this table surface, or the selection in this doc')
  .meta({ id: 'PresenceCursor' });
export type PresenceCursor = z.infer<typeof PresenceCursor>;

export const Presence = z
  .object({
    principal: Principal,
    since: IsoDateTime.describe('When the earliest of its open connections to the surface’s document opened'),
    connections: z.number().int().min(1).describe('Its open sync connections to the document (tabs, processes), on every instance'),
    owner: Principal.optional().describe('For an agent: the user who owns it (and its key)'),
    cursor: PresenceCursor.optional(),
  })
  .meta({ id: 'Presence' });
export type Presence = z.infer<typeof Presence>;

export const PresenceList = z
  .object({ present: z.array(Presence).describe('One entry per principal, earliest first') })
  .meta({ id: 'PresenceList' });
export type PresenceList = z.infer<typeof PresenceList>;
