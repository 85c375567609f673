import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { Button } from '../ui/primitives';
import { Icon } from '../ui/icons';
import type { SignInMethods, SignInResponse } from '../../../src/model/schemas/account';

/** What the server's refusal codes (`/signin?error=...` after single sign-on) mean to the person. */
const SSO_REFUSALS: Record<string, string> = {
  oidc_cancelled: 'Single sign-on was cancelled or refused by your identity provider. Try again, or use an e-mail link.',
  oidc_failed: 'Single sign-on could not be completed: your identity provider could not be reached, or its answer could not be verified. Try again.',
  oidc_email_missing: 'Your identity provider did not share an e-mail address, so we cannot tell who you are.',
  oidc_email_unverified: 'Your identity provider has not verified your e-mail address. Verify it there, or use an e-mail link.',
  oidc_domain_not_allowed: 'Your e-mail domain may not sign in to this server with single sign-on. Ask the person who runs it.',
  oidc_waitlisted: 'This server is invite-only for now: you are on the waitlist, and we will write when a seat opens.',
};

/** A refusal the server redirected here with, once: the code leaves the address bar. */
function refusalFromAddress(): string | null {
  const params = new URLSearchParams(window.location.search);
  const code = params.get('error');
  if (!code) return null;
  params.delete('error');
  const rest = params.toString();
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${rest ? `?${rest}` : ''}`);
  return SSO_REFUSALS[code] ?? 'Sign-in did not complete. Try again.';
}

/** Where single sign-on comes back to: the page that asked for sign-in, unless that is the sign-in page itself. */
function returnPath(): string | null {
  const here = `${window.location.pathname}${window.location.search}`;
  return window.location.pathname === '/' || window.location.pathname === '/signin' ? null : here;
}

/**
 * Magic-link sign-in (the mailed link signs in and opens the app at
 * `/{orgSlug}/welcome`) and, when the server is configured for it, a
 * "Sign in with …" button for single sign-on.
 */
export function SignInPage(props: { error?: string; intro?: string }) {
  const [email, setEmail] = useState('');
  const [state, setState] = useState<'idle' | 'sending' | 'sent' | 'waitlisted'>('idle');
  const [error, setError] = useState<string | null>(() => props.error ?? refusalFromAddress());
  const [sso, setSso] = useState<SignInMethods['oidc']>(null);

  useEffect(() => {
    api<SignInMethods>('GET', '/api/auth/methods')
      .then((methods) => setSso(methods.oidc))
      // Unanswered, the page offers magic links only.
      .catch(() => {});
  }, []);
  const next = returnPath();

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setState('sending');
    try {
      const answer = await api<SignInResponse>('POST', '/api/auth', { email: email.trim() });
      setState('waitlisted' in answer ? 'waitlisted' : 'sent');
    } catch (failure) {
      setError(messageOf(failure));
      setState('idle');
    }
  };

  return (
    <main class="auth-page">
      <div class="auth-card">
        <div class="brand brand-large">
          <span class="brand-mark" aria-hidden="true" />
          <span>Trellis</span>
        </div>
        {state === 'sent' ? (
          <div class="auth-sent" role="status">
            <div class="auth-sent-icon">
              <Icon name="check" size={22} />
            </div>
            <h1>Check your inbox</h1>
            <p>
              We sent a sign-in link to <strong>{email.trim()}</strong>. It works once and expires in 15 minutes.
            </p>
            <button class="link-button" onClick={() => setState('idle')}>
              Use another address
            </button>
          </div>
        ) : state === 'waitlisted' ? (
          <div class="auth-sent" role="status">
            <h1>You are on the waitlist</h1>
            <p>This server is invite-only for now. We will write to {email.trim()} when a seat opens.</p>
          </div>
        ) : (
          <form onSubmit={submit}>
            <h1>Sign in</h1>
            <p class="muted">{props.intro ?? 'Tables and docs you share with your team and your agents, live and offline.'}</p>
            <label class="field">
              <span>Work e-mail</span>
              <input type="email" name="email" required autoComplete="email" placeholder="you@company.com" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} autoFocus />
            </label>
            {error && (
              <p class="form-error" role="alert">
                {error}
              </p>
            )}
            <Button variant="primary" type="submit" busy={state === 'sending'} class="button-block">
              Email me a sign-in link
            </Button>
            <p class="fine-print">No password: we send a link that signs you in on this device.</p>
            {sso && (
              <>
                <div class="auth-divider" aria-hidden="true">
                  <span>or</span>
                </div>
                {/* A navigation, not a fetch: the identity provider's pages take over the tab. */}
                <a class="button button-secondary button-block" href={next ? `${sso.startUrl}?next=${encodeURIComponent(next)}` : sso.startUrl}>
                  Sign in with {sso.name}
                </a>
              </>
            )}
          </form>
        )}
      </div>
    </main>
  );
}
