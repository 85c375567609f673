import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** API keys (SPEC "API keys"), as the keys routes answer them and the web app's account page reads them. */

export const KeyRole = z.enum(['editor', 'commenter', 'viewer']).describe('Never above the minting user\'s own role; keys never own.');

export const ApiKey = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('The first 12 characters of the secret, to recognise the key in lists'),
    scopeSlug: z.string().nullable().describe('The workspace the key is scoped to; null for an unscoped key'),
    scopeWorkspaceId: z.string().nullable(),
    role: KeyRole,
    suggestOnly: z.boolean().describe('Its doc and row writes can only be suggestions (docs/SUGGESTIONS.md)'),
    agent: Principal,
    owner: Principal.describe('The user who minted the key and owns its agent'),
    createdAt: IsoDateTime,
    lastUsedAt: IsoDateTime.nullable().describe('Stamped at most once a minute'),
    revokedAt: IsoDateTime.nullable(),
  })
  .meta({ id: 'ApiKey', description: 'An API key without its secret; the secret is shown once, when the key is minted.' });

export const MintedKey = z
  .object({
    key: ApiKey,
    secret: z.string().describe('`svc_live_…`: returned only here; store it now'),
  })
  .meta({ id: 'MintedKey' });

export type ApiKey = z.infer<typeof ApiKey>;
export type MintedKey = z.infer<typeof MintedKey>;

export const KeyList = z.object({ keys: z.array(ApiKey) });
export type KeyList = z.infer<typeof KeyList>;
