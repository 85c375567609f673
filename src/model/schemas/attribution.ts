import { z } from 'zod';
import { Principal } from './common';

/** Who wrote what (docs/ATTRIBUTION.md): from the update log's own attribution. */

export const AttributedPrincipal = Principal.extend({
  owner: Principal.optional().describe('For an agent: the user who owns it (and its key)'),
}).meta({ id: 'AttributedPrincipal' });
export type AttributedPrincipal = z.infer<typeof AttributedPrincipal>;

export const AuthorSpan = z
  .object({
    text: z.string(),
    principal: AttributedPrincipal.nullable().describe('Whose update inserted this text; null for the system, a deleted principal, or text no logged update names'),
  })
  .meta({ id: 'AuthorSpan' });
export type AuthorSpan = z.infer<typeof AuthorSpan>;

export const DocAttribution = z
  .object({
    surfaceId: z.string(),
    spans: z.array(AuthorSpan).describe('The text of `format=text`, in order, cut where the principal changes (their texts joined are that text)'),
  })
  .meta({ id: 'DocAttribution' });
export type DocAttribution = z.infer<typeof DocAttribution>;

/** Per column key of the row's stored cells, who last set its value (a cell whose writer is unknown is absent). */
export const CellAttribution = z.record(z.string(), AttributedPrincipal).meta({ id: 'CellAttribution' });

/** `attribution=1` in a query. */
export const AttributionFlag = z.enum(['1', 'true', '0', 'false']);
export const attributionWanted = (flag: string | undefined) => flag === '1' || flag === 'true';
