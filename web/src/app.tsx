import { useEffect } from 'preact/hooks';
import { segmentsOf, useLocation } from './lib/router';
import { useStore } from './lib/store';
import { InvitePage, resumePendingInvite } from './pages/InvitePage';
import { SignInPage } from './pages/SignInPage';
import { hasSessionHint, loadSession, session } from './session';
import { Toasts } from './ui/toast';
import { DialogHost } from './ui/dialogs';
import { ElevationPrompt } from './ui/elevation';
import { lazy } from './ui/lazy';
import { OfflineNotice } from './offline/OfflineNotice';
import { Spinner } from './ui/primitives';

/** The signed-in app (signed-in.tsx): fetched only once there is a session, so the sign-in page stays small. */
const SignedIn = lazy(() => import('./signed-in').then((module) => module.SignedIn), 'Trellis');

export function App() {
  const state = useStore(session);
  const { path } = useLocation();
  const segments = segmentsOf(path);

  useEffect(() => {
    // With a session, the signed-in app's code comes while `/api/me` is asked.
    if (hasSessionHint()) void SignedIn.preload();
    void loadSession();
  }, []);

  useEffect(() => {
    if (state.status === 'signed-in') resumePendingInvite();
  }, [state]);

  const invite = (segments[0] === 'invites' || segments[0] === 'org-invites') && segments[1] ? { kind: segments[0], token: segments[1] } : null;

  let page;
  if (state.status === 'loading') page = <Spinner label="Opening Trellis…" />;
  else if (invite) page = <InvitePage kind={invite.kind as 'invites' | 'org-invites'} token={invite.token} />;
  else if (state.status === 'error' && state.error.isNetwork)
    page = (
      <main class="auth-page">
        <OfflineNotice what="Trellis has not been opened with your account on this device yet, so there is nothing of it here." onRetry={loadSession} />
      </main>
    );
  else if (state.status === 'error') page = <SignInPage error={state.error.message} />;
  else if (state.status === 'signed-out') page = <SignInPage />;
  else page = <SignedIn segments={segments} me={state.me} />;

  return (
    <>
      {page}
      <ElevationPrompt />
      <DialogHost />
      <Toasts />
    </>
  );
}
