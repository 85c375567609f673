import type * as client from 'openid-client';
import { z } from 'zod';
import { storableText } from '../lib/text';
import { Email } from '../model/schemas/common';
import { isSafeReturnPath, joinWaitlist, mayJoin, normaliseEmail, signInVerifiedEmail } from './accounts';
import type { Services } from './services';

/**
 * OpenID Connect sign-in (authorization code with PKCE, state and nonce) on
 * openid-client. The person is matched by an e-mail the provider says it
 * verified; the sign-up rules are the magic link's. Every refusal is one of
 * the codes below, which the sign-in page turns into a sentence: nothing of
 * the token or the provider's error text reaches the person or the log.
 */
export type OidcRefusal =
  /** The provider answered with an error (the person cancelled, or it refused). */
  | 'oidc_cancelled'
  /** State, nonce, audience, issuer, signature or expiry did not check out, or the provider could not be reached. */
  | 'oidc_failed'
  | 'oidc_email_missing'
  | 'oidc_email_unverified'
  | 'oidc_domain_not_allowed'
  /** SIGNUP_MODE=waitlist and the address is neither known, allow-listed nor invited: put on the waitlist. */
  | 'oidc_waitlisted';

export class OidcRefused extends Error {
  constructor(readonly code: OidcRefusal, readonly reason: string) {
    super(reason);
    this.name = 'OidcRefused';
  }
}

/** What the browser keeps between start and callback (an httpOnly cookie): the secrets the callback checks against. */
export const OidcPending = z.strictObject({
  state: z.string().min(1).max(200),
  nonce: z.string().min(1).max(200),
  verifier: z.string().min(43).max(128),
  next: z.string().max(4000).nullable(),
});
export type OidcPending = z.infer<typeof OidcPending>;

export const OIDC_PENDING_TTL_MS = 10 * 60 * 1000;
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';

type Settings = NonNullable<Services['config']['oidc']>;

/** The provider's metadata, discovered once per process (and again after a failed discovery). */
const discovered = new WeakMap<Settings, Promise<client.Configuration>>();

/** openid-client is loaded by the first OIDC sign-in, not at start (most servers never configure one). */
let clientModule: Promise<typeof client> | null = null;
const openidClient = () => (clientModule ??= import('openid-client'));

function discover(settings: Settings): Promise<client.Configuration> {
  let found = discovered.get(settings);
  if (!found) {
    const issuer = new URL(settings.issuer);
    found = openidClient().then((client) => client.discovery(issuer, settings.clientId, undefined, client.ClientSecretPost(settings.clientSecret), {
      // Plain http only for a provider on this machine (development, tests); anything else must be https.
      execute: isLoopback(issuer) ? [client.allowInsecureRequests] : [],
      timeout: 10,
    }));
    found.catch(() => discovered.delete(settings));
    discovered.set(settings, found);
  }
  return found;
}

function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]');
}

function settingsOf(services: Services): Settings {
  const settings = services.config.oidc;
  if (!settings) throw new OidcRefused('oidc_failed', 'OpenID Connect is not configured');
  return settings;
}

export function oidcCallbackUrl(services: Services): string {
  return `${services.config.publicUrl}${OIDC_CALLBACK_PATH}`;
}

/** The provider's authorization URL for a new sign-in, and what the callback will check. */
export async function startOidcSignIn(services: Services, next: string | undefined): Promise<{ url: string; pending: OidcPending }> {
  const client = await openidClient();
  const settings = settingsOf(services);
  let config: client.Configuration;
  try {
    config = await discover(settings);
  } catch (error) {
    throw new OidcRefused('oidc_failed', `discovery of ${settings.issuer} failed: ${(error as Error).message}`);
  }
  const pending: OidcPending = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    next: next !== undefined && isSafeReturnPath(next) ? next : null,
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: oidcCallbackUrl(services),
    scope: 'openid email profile',
    response_type: 'code',
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, pending };
}

/**
 * Finishes a sign-in from the provider's redirect: exchanges the code, checks
 * the ID token (issuer, audience, signature, expiry by this server's clock,
 * nonce) and the e-mail, then opens a session like a magic link does.
 */
export async function finishOidcSignIn(
  services: Services,
  callbackQuery: string,
  pending: OidcPending | null,
  userAgent: string | null,
): Promise<{ sessionToken: string; orgSlug: string; expiresAt: Date; returnTo: string | null }> {
  const settings = settingsOf(services);
  const params = new URLSearchParams(callbackQuery);
  if (params.has('error')) throw new OidcRefused('oidc_cancelled', `the provider answered ${params.get('error')?.slice(0, 100)}`);
  if (!pending) throw new OidcRefused('oidc_failed', 'no sign-in was started in this browser, or it took longer than 10 minutes');
  const client = await openidClient();

  let claims: client.IDToken;
  let userinfo: client.UserInfoResponse | null = null;
  try {
    const discoveredConfig = await discover(settings);
    // Token times are judged by this server's clock (which tests move), not the process's.
    const config = new client.Configuration(
      discoveredConfig.serverMetadata(),
      settings.clientId,
      { [client.clockSkew]: Math.round((services.clock.now().getTime() - Date.now()) / 1000) },
      client.ClientSecretPost(settings.clientSecret),
    );
    if (isLoopback(new URL(settings.issuer))) client.allowInsecureRequests(config);
    const currentUrl = new URL(`${oidcCallbackUrl(services)}?${params.toString()}`);
    const tokens = await client.authorizationCodeGrant(config, currentUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims()!;
    // Some providers put the e-mail only in userinfo.
    if (typeof claims.email !== 'string') userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  } catch (error) {
    if (error instanceof OidcRefused) throw error;
    // openid-client's message and its cause's say which check failed (`unexpected JWT "aud" (audience) claim value`), never the token.
    const cause = (error as { cause?: unknown }).cause;
    const message = [(error as Error).message, cause instanceof Error ? cause.message : null].filter(Boolean).join(': ');
    throw new OidcRefused('oidc_failed', message.slice(0, 300) || 'sign-in failed');
  }

  const source: Record<string, unknown> = typeof claims.email === 'string' ? claims : (userinfo ?? {});
  const rawEmail = source.email;
  if (typeof rawEmail !== 'string' || !Email.safeParse(rawEmail.trim()).success) throw new OidcRefused('oidc_email_missing', 'the provider gave no e-mail address');
  // A string "true" too: some providers (Amazon Cognito) send the userinfo claim as a string.
  if (source.email_verified !== true && source.email_verified !== 'true') throw new OidcRefused('oidc_email_unverified', 'the provider has not verified the e-mail address');
  const email = normaliseEmail(rawEmail);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (settings.allowedDomains.length > 0 && !settings.allowedDomains.includes(domain)) {
    throw new OidcRefused('oidc_domain_not_allowed', `the domain ${domain} is not in OIDC_ALLOWED_DOMAINS`);
  }
  if (services.config.signupMode === 'waitlist' && !(await mayJoin(services, email))) {
    await joinWaitlist(services, { email, source: 'oidc' });
    throw new OidcRefused('oidc_waitlisted', 'the address is not invited (SIGNUP_MODE=waitlist)');
  }
  const name = typeof source.name === 'string' && source.name.trim() ? storableText(source.name.trim()).slice(0, 100) : undefined;
  const session = await signInVerifiedEmail(services, email, userAgent, { name });
  return { ...session, returnTo: pending.next !== null && isSafeReturnPath(pending.next) ? pending.next : null };
}
