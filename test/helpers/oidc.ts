import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** The person the provider signs in at its next login prompt; the test sets every claim. */
export type TestIdentity = { sub: string; email?: string; email_verified?: boolean; name?: string };

export type TestOidcProvider = {
  /** http://127.0.0.1:<port>, known before the provider is configured (the server under test needs it in its env). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registers the client with its redirect URI; the provider answers only after this. */
  configure(redirectUri: string): void;
  signInAs(identity: TestIdentity): void;
  /** Tampering the test turns on: ID tokens issued for another client id. */
  tamper: { audience: string | null };
  close(): Promise<void>;
};

/**
 * A real OpenID Connect provider (oidc-provider) on loopback. Its login and
 * consent prompts are answered at once for the identity the test names, so a
 * sign-in is the same redirects a browser follows.
 */
export async function startOidcProvider(): Promise<TestOidcProvider> {
  let provider: Provider | null = null;
  let identity: TestIdentity | null = null;
  const tamper = { audience: null as string | null };
  const server = http.createServer((req, res) => {
    if (!provider) {
      res.statusCode = 503;
      res.end('not configured');
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      void interact(provider, req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'trellis-test';
  const clientSecret = 'a-client-secret-of-the-test-provider';

  async function interact(p: Provider, req: http.IncomingMessage, res: http.ServerResponse) {
    const details = await p.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      if (!identity) throw new Error('the test named no identity to sign in as');
      await p.interactionFinished(req, res, { login: { accountId: identity.sub } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new p.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    await p.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  const configure = (redirectUri: string) => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' }] },
      cookies: { keys: ['test-cookie-key'] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      // Claims in the ID token itself, as Google and most company providers send them.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: false } },
      ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      findAccount: async (_ctx: unknown, sub: string) => ({
        accountId: sub,
        claims: async () => {
          const { sub: _sub, ...claims } = identity && identity.sub === sub ? identity : { sub };
          return { sub, ...claims };
        },
      }),
    });
    // A provider that hands out tokens meant for another client: the signature is valid, only `aud` is wrong.
    const issue = p.IdToken.prototype.issue;
    p.IdToken.prototype.issue = function (this: { client: { clientId: string } }, options?: unknown) {
      if (tamper.audience) {
        const real = this.client;
        const audience = tamper.audience;
        Object.defineProperty(this, 'client', { value: new Proxy(real, { get: (target, key) => (key === 'clientId' ? audience : Reflect.get(target, key)) }), configurable: true });
      }
      return issue.call(this, options);
    };
    if (process.env.TEST_LOG_LEVEL) p.on('server_error', (_ctx: unknown, error: Error) => console.error('oidc-provider', error));
    provider = p;
  };

  return {
    issuer,
    clientId,
    clientSecret,
    configure,
    signInAs: (next) => {
      identity = next;
    },
    tamper,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Cookies by origin, as a browser keeps them for these two loopback servers (paths ignored: stricter than a browser never matters here). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();
  header(url: URL): string {
    return [...(this.jar.get(url.origin) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(url: URL, headers: Headers) {
    const cookies = this.jar.get(url.origin) ?? new Map<string, string>();
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (gone || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(url.origin, cookies);
  }
}

export type OidcDance = {
  /** Where the server sent the browser at the end: into the app, or `/signin?error=...`. */
  location: string;
  /** The `svc-session` cookie set by the callback, or null. */
  session: string | null;
  /** Every Set-Cookie header the server under test sent, for leak checks. */
  serverSetCookies: string[];
  /** The provider's redirect to the callback as the browser sent it (URL and Cookie header), for replays. */
  callback: { url: string; cookie: string } | null;
};

/** Follows the redirects a browser follows from "Sign in with …" to the page the server lands on. */
export async function oidcSignIn(serverUrl: string, options: { next?: string; jar?: CookieJar } = {}): Promise<OidcDance> {
  const jar = options.jar ?? new CookieJar();
  const server = new URL(serverUrl);
  let url = new URL(`/api/auth/oidc/start${options.next !== undefined ? `?next=${encodeURIComponent(options.next)}` : ''}`, server);
  let session: string | null = null;
  const serverSetCookies: string[] = [];
  let callback: OidcDance['callback'] = null;
  for (let hop = 0; hop < 20; hop++) {
    if (url.origin === server.origin && url.pathname === '/api/auth/oidc/callback') callback = { url: url.href, cookie: jar.header(url) };
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header(url) } });
    jar.take(url, response.headers);
    if (url.origin === server.origin) {
      serverSetCookies.push(...response.headers.getSetCookie());
      const found = response.headers.getSetCookie().find((c) => c.startsWith('svc-session='));
      if (found) session = /^svc-session=([^;]*)/.exec(found)![1]!;
    }
    const location = response.headers.get('location');
    await response.arrayBuffer();
    if (!location) throw new Error(`${url.pathname} answered ${response.status} without a redirect`);
    const next = new URL(location, url);
    if (next.origin === server.origin && !next.pathname.startsWith('/api/auth/oidc/')) return { location, session, serverSetCookies, callback };
    url = next;
  }
  throw new Error('too many redirects');
}
