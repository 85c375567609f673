import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { navigate } from '../lib/router';
import { useStore } from '../lib/store';
import { session } from '../session';
import { Button, Spinner } from '../ui/primitives';
import { showError } from '../ui/toast';
import { SignInPage } from './SignInPage';
import type { Invite, PublicInvite } from '../../../src/model/schemas/members';
import type { AcceptedWorkspaceInvite } from '../../../src/model/schemas/members';

const PENDING_INVITE = 'trellis:pending-invite';

/** An invite link: shows who invited whom to what, then accepts it once the right person is signed in. */
export function InvitePage(props: { kind: 'invites' | 'org-invites'; token: string }) {
  const state = useStore(session);
  const [invite, setInvite] = useState<PublicInvite | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const apiPath = `/api/${props.kind}/${encodeURIComponent(props.token)}`;

  useEffect(() => {
    api<PublicInvite>('GET', apiPath).then(setInvite, (failure) => setError(messageOf(failure)));
  }, [apiPath]);

  if (error) {
    return (
      <main class="auth-page">
        <div class="auth-card">
          <h1>This invite cannot be used</h1>
          <p class="muted">{error} It may have been used already, revoked, or it expired. Ask for a new one.</p>
          <Button onClick={() => navigate('/')}>Go to Trellis</Button>
        </div>
      </main>
    );
  }
  if (!invite) return <Spinner />;
  const target = invite.workspace ? `the workspace “${invite.workspace.name}”` : `the organisation “${invite.org?.name}”`;

  if (state.status !== 'signed-in') {
    // The magic link lands on the welcome page; come back here after it.
    localStorage.setItem(PENDING_INVITE, location.pathname);
    return <SignInPage intro={`${invite.invitedBy.name} invited ${invite.email} to ${target} as ${invite.role}. Sign in with that address to accept.`} />;
  }

  const accept = async () => {
    setBusy(true);
    try {
      const accepted = await api<AcceptedWorkspaceInvite>('POST', apiPath);
      localStorage.removeItem(PENDING_INVITE);
      const workspace = accepted.invite.workspace;
      navigate(workspace ? `/${workspace.org.slug}/${workspace.slug}` : `/${accepted.invite.org?.slug ?? ''}`);
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="auth-page">
      <div class="auth-card">
        <h1>Join {invite.workspace?.name ?? invite.org?.name}</h1>
        <p class="muted">
          {invite.invitedBy.name} invited <strong>{invite.email}</strong> to {target} as <strong>{invite.role}</strong>.
        </p>
        {state.me.user?.email !== invite.email && (
          <p class="form-error">You are signed in as {state.me.user?.email}. Sign in as {invite.email} to accept.</p>
        )}
        <Button variant="primary" class="button-block" busy={busy} onClick={accept}>
          Accept invite
        </Button>
      </div>
    </main>
  );
}

/** After signing in from an invite link, go back to it. */
export function resumePendingInvite(): boolean {
  const pending = localStorage.getItem(PENDING_INVITE);
  if (!pending) return false;
  localStorage.removeItem(PENDING_INVITE);
  navigate(pending, { replace: true });
  return true;
}
