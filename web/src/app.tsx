import { useEffect } from 'preact/hooks';
import { navigate, segmentsOf, useLocation } from './lib/router';
import { useStore } from './lib/store';
import { AccountPage } from './pages/AccountPage';
import { HomePage } from './pages/HomePage';
import { ORG_SETTINGS_TABS, OrgSettingsPage } from './settings/OrgSettingsPage';
import { InvitePage, resumePendingInvite } from './pages/InvitePage';
import { SignInPage } from './pages/SignInPage';
import { loadSession, session } from './session';
import { setIdentity } from './sync/connection';
import { Toasts } from './ui/toast';
import { DialogHost } from './ui/dialogs';
import { APP_PAGE_SLUGS } from '../../src/model/app-paths';
import { ElevationPrompt } from './ui/elevation';
import { OfflineNotice } from './offline/OfflineNotice';
import { Spinner } from './ui/primitives';
import { Shell } from './workspace/Shell';
import { WorkspacePage } from './workspace/WorkspacePage';

/** Top-level paths that are app pages, not organisation slugs (the server never gives an org one of them). */
const APP_PAGES: ReadonlySet<string> = new Set(APP_PAGE_SLUGS);

export function App() {
  const state = useStore(session);
  const { path } = useLocation();
  const segments = segmentsOf(path);

  useEffect(() => {
    void loadSession();
  }, []);

  useEffect(() => {
    if (state.status !== 'signed-in') return;
    setIdentity(state.me.principal);
    resumePendingInvite();
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
  else page = <SignedIn segments={segments} orgSlug={state.me.org?.slug ?? null} />;

  return (
    <>
      {page}
      <ElevationPrompt />
      <DialogHost />
      <Toasts />
    </>
  );
}

function SignedIn(props: { segments: string[]; orgSlug: string | null }) {
  const [first, second, third] = props.segments;
  useEffect(() => {
    if ((!first || first === 'signin') && props.orgSlug) navigate(`/${props.orgSlug}`, { replace: true });
  }, [first, props.orgSlug]);

  if (first === 'settings') {
    return <Shell>{second && ORG_SETTINGS_TABS.includes(second) ? <OrgSettingsPage tab={second} /> : <AccountPage />}</Shell>;
  }
  if (!first || APP_PAGES.has(first)) return <Spinner />;
  return (
    <Shell orgSlug={first} workspaceSlug={second}>
      {second ? <WorkspacePage key={`${first}/${second}`} orgSlug={first} slug={second} surfaceSlug={third} /> : <HomePage orgSlug={first} />}
    </Shell>
  );
}
