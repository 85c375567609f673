import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../lib/api';
import { createStore, useStore } from '../lib/store';
import { Button, Dialog } from './primitives';
import type { ElevateResponse, ElevationScope } from '../../../src/model/schemas/account';

type Scope = ElevationScope;

const pending = createStore<{ scope: Scope; resolve: (granted: boolean) => void } | null>(null);

/**
 * Runs a sensitive action, elevating the session first when the server asks
 * for it (401 `elevation_required`): granted at once for a fresh sign-in,
 * otherwise the user types the 6-digit code we mail them. Rejects with the
 * server's error if the action still fails.
 */
export async function withElevation<T>(scope: Scope, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'elevation_required') throw error;
  }
  const answer = await api<ElevateResponse>('POST', '/api/me/elevate', { scope });
  if ('status' in answer && answer.status === 'code_sent') {
    const granted = await new Promise<boolean>((resolve) => pending.set({ scope, resolve }));
    if (!granted) throw new ApiError(401, 'elevation_required', 'Confirmation cancelled.');
  }
  return action();
}

const SCOPE_TEXT: Record<Scope, string> = {
  keys: 'create an API key',
  credentials: 'change your sign-in details',
  org_members: 'remove someone from the organisation',
  workspace_delete: 'archive a workspace',
};

/** The code prompt, mounted once by the app. */
export function ElevationPrompt() {
  const request = useStore(pending);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!request) return null;
  const close = (granted: boolean) => {
    pending.set(null);
    setCode('');
    setError(null);
    request.resolve(granted);
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await api('POST', '/api/me/elevate', { scope: request.scope, code: code.trim() });
      close(true);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      title="Confirm it is you"
      onClose={() => close(false)}
      footer={
        <>
          <Button variant="ghost" onClick={() => close(false)}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form="elevation-form" busy={busy}>
            Confirm
          </Button>
        </>
      }
    >
      <form id="elevation-form" class="form" onSubmit={submit}>
        <p class="muted">To {SCOPE_TEXT[request.scope]}, enter the 6-digit code we just mailed you. It keeps this session confirmed for 15 minutes.</p>
        <label class="field">
          <span>Code</span>
          <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required value={code} onInput={(e) => setCode((e.target as HTMLInputElement).value)} />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
