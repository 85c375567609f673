import { useEffect, useMemo } from 'preact/hooks';
import { navigate } from './lib/router';
import type { Me } from './session';
import { ORG_SETTINGS_PATHS } from './settings/org-settings';
import { setIdentity } from './sync/connection';
import { lazy } from './ui/lazy';
import { Spinner } from './ui/primitives';
import { APP_PAGE_SLUGS } from '../../src/model/app-paths';
import { HomePage } from './pages/HomePage';
import { Shell } from './workspace/Shell';
import { WorkspacePage } from './workspace/WorkspacePage';

/** Top-level paths that are app pages, not organisation slugs (the server never gives an org one of them). */
const APP_PAGES: ReadonlySet<string> = new Set(APP_PAGE_SLUGS);

const AccountPage = lazy(() => import('./pages/AccountPage').then((module) => module.AccountPage), 'The account page');
const OrgSettingsPage = lazy(() => import('./settings/OrgSettingsPage').then((module) => module.OrgSettingsPage), 'Organisation settings');

/**
 * Everything a signed-in person sees: the shell, the organisation's
 * workspaces, a workspace and the settings. A file of its own in the build
 * (app.tsx imports it when a session exists), so the sign-in page does not
 * carry the sync engine (Yjs) or the workspace page.
 */
export function SignedIn(props: { me: Me; segments: string[] }) {
  const [first, second, third] = props.segments;
  const orgSlug = props.me.org?.slug ?? null;
  // Before any document opens (the children's effects run before this component's): local copies are kept per account.
  useMemo(() => setIdentity(props.me.principal), [props.me.principal.id, props.me.principal.name]);

  useEffect(() => {
    if ((!first || first === 'signin') && orgSlug) navigate(`/${orgSlug}`, { replace: true });
  }, [first, orgSlug]);

  if (first === 'settings') {
    return <Shell>{second && ORG_SETTINGS_PATHS.includes(second) ? <OrgSettingsPage tab={second} /> : <AccountPage />}</Shell>;
  }
  if (!first || APP_PAGES.has(first)) return <Spinner />;
  return (
    <Shell orgSlug={first} workspaceSlug={second}>
      {second ? <WorkspacePage key={`${first}/${second}`} orgSlug={first} slug={second} surfaceSlug={third} /> : <HomePage orgSlug={first} />}
    </Shell>
  );
}
