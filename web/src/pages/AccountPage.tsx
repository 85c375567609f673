import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { timeAgo } from '../lib/format';
import { useStore } from '../lib/store';
import { loadSession, session } from '../session';
import { withElevation } from '../ui/elevation';
import { Icon } from '../ui/icons';
import { FormDialog } from '../ui/FormDialog';
import { Button, EmptyState, IconButton, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import { workspaceList } from '../workspace-context/workspaces-store';
import { confirmDialog } from '../ui/dialogs';
import { SecretDialog } from '../ui/SecretDialog';
import { ConnectedApps } from '../settings/ConnectedApps';
import type { ApiKey, MintedKey } from '../../../src/model/schemas/keys';
import type { RevokedSessions } from '../../../src/model/schemas/account';
import type { KeyList } from '../../../src/model/schemas/keys';

/** The person's profile, and the API keys their agents use. */
export function AccountPage() {
  const state = useStore(session);
  const me = state.status === 'signed-in' ? state.me : null;
  const [name, setName] = useState(me?.user?.name ?? '');
  const [saving, setSaving] = useState(false);

  const saveName = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    try {
      await api('PATCH', '/api/me', { name: name.trim() });
      await loadSession();
      showToast('Profile saved.', 'success');
    } catch (error) {
      showError(error);
    } finally {
      setSaving(false);
    }
  };

  return (
    <div class="page page-narrow">
      <header class="page-header">
        <div>
          <h1>Account</h1>
          <p class="muted">{me?.user?.email}</p>
        </div>
      </header>
      <section class="card">
        <h2>Profile</h2>
        <form class="inline-form" onSubmit={saveName}>
          <label class="field">
            <span>Display name</span>
            <input name="name" value={name} maxLength={100} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <Button type="submit" busy={saving} disabled={!name.trim() || name.trim() === me?.user?.name}>
            Save
          </Button>
        </form>
      </section>
      <ApiKeys />
      <ConnectedApps />
      <section class="card">
        <h2>Sessions</h2>
        <p class="muted">Sign out of Trellis in every browser. API keys keep working; revoke them above.</p>
        <Button
          variant="danger"
          icon="signOut"
          onClick={async () => {
            try {
              const { revokedSessions } = await api<RevokedSessions>('DELETE', '/api/me/sessions');
              showToast(`Signed out of ${revokedSessions} ${revokedSessions === 1 ? 'session' : 'sessions'}.`);
              await loadSession();
            } catch (error) {
              showError(error);
            }
          }}
        >
          Sign out everywhere
        </Button>
      </section>
    </div>
  );
}

function ApiKeys() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [minting, setMinting] = useState(false);
  const [secret, setSecret] = useState<{ key: ApiKey; secret: string } | null>(null);
  const load = () => api<KeyList>('GET', '/api/keys').then(({ keys }) => setKeys(keys), showError);
  useEffect(() => {
    void load();
  }, []);
  const live = (keys ?? []).filter((key) => !key.revokedAt);

  return (
    <section class="card">
      <div class="card-header">
        <div>
          <h2>API keys</h2>
          <p class="muted">Each key acts as one of your agents, with at most your own access.</p>
        </div>
        <Button variant="primary" icon="key" onClick={() => setMinting(true)}>
          New key
        </Button>
      </div>
      {keys === null ? (
        <Spinner />
      ) : live.length === 0 ? (
        <EmptyState icon="key" title="No API keys">
          Create a key to let an agent or a script read and write your workspaces.
        </EmptyState>
      ) : (
        <table class="key-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Agent</th>
              <th>Access</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {live.map((key) => (
              <tr key={key.id}>
                <td>
                  <strong>{key.name}</strong>
                  <code class="key-prefix">{key.prefix}…</code>
                </td>
                <td>
                  <Icon name="agent" size={12} /> {key.agent.name}
                </td>
                <td>
                  {key.role}
                  {key.scopeSlug ? ` · ${key.scopeSlug} only` : ' · all your workspaces'}
                </td>
                <td>{key.lastUsedAt ? timeAgo(key.lastUsedAt) : 'never'}</td>
                <td>
                  <IconButton
                    icon="trash"
                    label={`Revoke ${key.name}`}
                    onClick={async () => {
                      const confirmed = await confirmDialog({ title: 'Revoke key?', message: `Anything using “${key.name}” stops working at once.`, confirmLabel: 'Revoke key', danger: true });
                      if (!confirmed) return;
                      try {
                        await api('DELETE', `/api/keys/${key.id}`);
                        await load();
                      } catch (error) {
                        showError(error);
                      }
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {minting && (
        <MintKeyDialog
          onClose={() => setMinting(false)}
          onMinted={(minted) => {
            setMinting(false);
            setSecret(minted);
            void load();
          }}
        />
      )}
      {secret && <KeySecretDialog minted={secret} onClose={() => setSecret(null)} />}
    </section>
  );
}

function MintKeyDialog(props: { onClose: () => void; onMinted: (minted: { key: ApiKey; secret: string }) => void }) {
  const workspaces = useStore(workspaceList).items;
  const [name, setName] = useState('');
  const [agentName, setAgentName] = useState('');
  const [role, setRole] = useState<'editor' | 'commenter' | 'viewer'>('editor');
  const [scope, setScope] = useState('');
  const me = session.get();
  const orgSlug = me.status === 'signed-in' ? me.me.org?.slug : undefined;

  const submit = async () => {
    const body = { name: name.trim(), agentName: agentName.trim() || name.trim(), role, ...(scope ? { scopeSlug: scope } : {}) };
    const minted = await withElevation('keys', () => api<MintedKey>('POST', '/api/keys', body));
    props.onMinted(minted);
  };

  return (
    <FormDialog title="New API key" id="mint-key" submitLabel="Create key" disabled={!name.trim()} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>What is it for?</span>
        <input name="name" required maxLength={100} placeholder="Nightly report bot" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        <span>Agent name</span>
        <input name="agentName" maxLength={100} placeholder={name || 'Report bot'} value={agentName} onInput={(e) => setAgentName((e.target as HTMLInputElement).value)} />
        <small>People see this name on the agent's edits and comments. An agent of yours with this name is reused.</small>
      </label>
      <div class="field-row">
        <label class="field">
          <span>Access</span>
          <select name="role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as typeof role)}>
            <option value="editor">Can edit</option>
            <option value="commenter">Can comment</option>
            <option value="viewer">Can read</option>
          </select>
        </label>
        <label class="field">
          <span>Workspaces</span>
          <select name="scope" value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value)}>
            <option value="">All of mine</option>
            {workspaces
              .filter((workspace) => workspace.org.slug === orgSlug)
              .map((workspace) => (
                <option key={workspace.id} value={workspace.slug}>
                  Only {workspace.name}
                </option>
              ))}
          </select>
        </label>
      </div>
    </FormDialog>
  );
}

/** The secret exists only in this dialog: once closed, nobody can see it again. */
function KeySecretDialog(props: { minted: { key: ApiKey; secret: string }; onClose: () => void }) {
  return (
    <SecretDialog
      title="Copy your new key"
      intro="This is the only time the key is shown. Store it in your agent's secrets now; if you lose it, revoke it and create another."
      secret={props.minted.secret}
      testId="api-key-secret"
      onClose={props.onClose}
    >
      <p class="fine-print">
        Acts as <strong>{props.minted.key.agent.name}</strong> with {props.minted.key.role} access{props.minted.key.scopeSlug ? ` to ${props.minted.key.scopeSlug}` : ''}.
      </p>
    </SecretDialog>
  );
}
