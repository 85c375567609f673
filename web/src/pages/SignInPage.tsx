import { useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { Button } from '../ui/primitives';
import { Icon } from '../ui/icons';
import type { SignInResponse } from '../../../src/model/schemas/account';

/** Magic-link sign-in: the mailed link signs in and opens the app at `/{orgSlug}/welcome`. */
export function SignInPage(props: { error?: string; intro?: string }) {
  const [email, setEmail] = useState('');
  const [state, setState] = useState<'idle' | 'sending' | 'sent' | 'waitlisted'>('idle');
  const [error, setError] = useState<string | null>(props.error ?? null);

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
          </form>
        )}
      </div>
    </main>
  );
}
