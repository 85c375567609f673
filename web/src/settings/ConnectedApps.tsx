import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { timeAgo } from '../lib/format';
import { confirmDialog } from '../ui/dialogs';
import { Button, EmptyState, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { Grant as GrantRecord } from '../../../src/model/schemas/account';
import type { GrantList } from '../../../src/model/schemas/account';

type Grant = GrantRecord;

const SCOPE_WORDS: Record<string, string> = { read: 'read', write: 'read and write', admin: 'administer' };

/** Apps the person authorised over OAuth (docs/OAUTH.md): what each may do, and revoking it. */
export function ConnectedApps() {
  const [grants, setGrants] = useState<Grant[] | null>(null);
  const load = () => api<GrantList>('GET', '/api/me/oauth-grants').then(({ grants }) => setGrants(grants), showError);
  useEffect(() => {
    void load();
  }, []);

  const revoke = async (grant: Grant) => {
    const confirmed = await confirmDialog({
      title: `Disconnect ${grant.client.name}?`,
      message: 'Its access ends at once: its tokens stop working and its open connections close.',
      confirmLabel: 'Disconnect',
      danger: true,
    });
    if (!confirmed) return;
    try {
      await api('DELETE', `/api/me/oauth-grants/${encodeURIComponent(grant.id)}`);
      showToast(`${grant.client.name} is disconnected.`, 'success');
      await load();
    } catch (error) {
      showError(error);
    }
  };

  return (
    <section class="card" aria-label="Connected apps">
      <h2>Connected apps</h2>
      <p class="muted">Apps you let act for you through OAuth, such as AI assistants using Trellis over MCP. Each has at most your own access.</p>
      {grants === null ? (
        <Spinner />
      ) : grants.length === 0 ? (
        <EmptyState icon="link" title="No connected apps">
          When you authorise an app to use your Trellis account, it is listed here.
        </EmptyState>
      ) : (
        <table class="key-table">
          <thead>
            <tr>
              <th>App</th>
              <th>May</th>
              <th>Connected</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {grants.map((grant) => (
              <tr key={grant.id} data-grant={grant.id}>
                <td>
                  <strong>{grant.client.name}</strong>
                  {grant.client.uri && <span class="muted key-prefix">{grant.client.uri}</span>}
                </td>
                <td>{grant.scopes.map((scope) => SCOPE_WORDS[scope] ?? scope).join(', ')}</td>
                <td>{timeAgo(grant.createdAt)}</td>
                <td>{grant.lastUsedAt ? timeAgo(grant.lastUsedAt) : 'never'}</td>
                <td>
                  <Button variant="ghost" onClick={() => void revoke(grant)}>
                    Disconnect
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
