import { z } from 'zod';
import { OAUTH_SCOPES } from '../permissions';
import { IsoDateTime, Principal, Role } from './common';

/** The caller's own records: who they are, their organisation's settings, sudo mode and the apps they connected, as the API answers them and the web app reads them. */

/** Sudo mode: sensitive actions need a fresh, per-scope grant on a human session (src/domain/elevation.ts). */
export const ELEVATION_SCOPES = ['keys', 'credentials', 'org_members', 'workspace_delete'] as const;
export type ElevationScope = (typeof ELEVATION_SCOPES)[number];

export const Me = z
  .object({
    principal: Principal,
    user: z.object({ id: z.string(), email: z.string(), name: z.string(), avatarUrl: z.string().nullable(), createdAt: z.string() }),
    agent: z.object({ id: z.string(), name: z.string(), keyId: z.string(), role: z.string(), scopeWorkspaceId: z.string().nullable(), suggestOnly: z.boolean() }).nullable(),
    org: z.object({ id: z.string(), slug: z.string(), name: z.string(), plan: z.enum(['free', 'pro', 'scale']) }).nullable(),
  })
  .meta({ id: 'Me', description: 'The caller. For an API key, `agent` is the key\'s agent and `user` its owner.' });

export const CallerOrg = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    role: Role.nullable().describe('Your role in the organisation; null when you do not belong to it and it is listed because some of its workspaces are shared with you'),
    primary: z.boolean().describe('Your own organisation: where new workspaces, keys and organisation settings go'),
  })
  .meta({ id: 'CallerOrg' });

export const CallerOrgList = z.object({ orgs: z.array(CallerOrg) }).meta({ id: 'CallerOrgList' });

export const OrgSettings = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    defaultWorkspaceVisibility: z.enum(['org', 'private']),
    plan: z.enum(['free', 'pro', 'scale']),
    role: z.enum(['owner', 'editor', 'commenter', 'viewer']),
  })
  .meta({ id: 'OrgSettings' });

export const ElevateResponse = z.union([
  z.object({ scope: z.enum(ELEVATION_SCOPES), expiresAt: z.string() }),
  z.object({ status: z.literal('code_sent') }),
]);

export const Grant = z
  .object({
    id: z.string(),
    client: z.object({ id: z.string(), name: z.string(), uri: z.string().nullable() }),
    scopes: z.array(z.enum(OAUTH_SCOPES)),
    createdAt: IsoDateTime,
    lastUsedAt: IsoDateTime.nullable(),
    expiresAt: IsoDateTime.describe('When the grant lapses unless the app refreshes its tokens before'),
  })
  .meta({ id: 'OAuthGrant' });

export type Me = z.infer<typeof Me>;
export type OrgSettings = z.infer<typeof OrgSettings>;
export type CallerOrg = z.infer<typeof CallerOrg>;
export type CallerOrgList = z.infer<typeof CallerOrgList>;
export type ElevateResponse = z.infer<typeof ElevateResponse>;
export type Grant = z.infer<typeof Grant>;

export const SignInResponse = z.union([z.object({ ok: z.literal(true) }), z.object({ waitlisted: z.literal(true) })]);
export type SignInResponse = z.infer<typeof SignInResponse>;

/** How a person can sign in here: the web app's sign-in page shows a button per method. */
export const SignInMethods = z
  .object({
    magicLink: z.literal(true),
    oidc: z
      .object({
        name: z.string().describe('The identity provider, as in "Sign in with <name>"'),
        startUrl: z.string().describe('Open this (a browser navigation) to sign in; add `?next=<path>` to come back to a page'),
      })
      .nullable()
      .describe('OpenID Connect single sign-on; null when not configured'),
  })
  .meta({ id: 'SignInMethods' });
export type SignInMethods = z.infer<typeof SignInMethods>;

export const GrantList = z.object({ grants: z.array(Grant) });
export type GrantList = z.infer<typeof GrantList>;

export const RevokedSessions = z.object({ revokedSessions: z.number().int() });
export type RevokedSessions = z.infer<typeof RevokedSessions>;
