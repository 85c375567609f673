import { useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../lib/api';
import { navigate } from '../lib/router';
import { Button, EmptyState, Spinner } from '../ui/primitives';
import { BillingSettings } from './BillingSettings';
import { loadOrgSettings, ORG_SETTINGS_TABS as TABS, orgCan, type OrgSettings } from './org-settings';
import { WebhookSettings } from './WebhookSettings';

/**
 * The organisation's settings (`/settings/billing`, `/settings/webhooks`): billing for
 * every member (changing the plan for owners), webhooks for those who may
 * manage them. Each tab is offered only to a role the API would serve.
 */
export function OrgSettingsPage(props: { tab?: string }) {
  const [org, setOrg] = useState<OrgSettings | null>(null);
  const [error, setError] = useState<ApiError | string | null>(null);
  const reload = () =>
    loadOrgSettings().then(
      (loaded) => {
        setOrg(loaded);
        setError(null);
      },
      (failure) => setError(failure instanceof ApiError ? failure : messageOf(failure)),
    );
  useEffect(() => {
    void reload();
  }, []);

  if (error) {
    return (
      <div class="page page-narrow">
        <EmptyState icon="building" title="No organisation settings" action={<Button onClick={() => navigate('/')}>Back to Trellis</Button>}>
          {error instanceof ApiError && error.status === 404 ? 'You are not a member of an organisation.' : typeof error === 'string' ? error : error.message}
        </EmptyState>
      </div>
    );
  }
  if (!org) return <Spinner />;

  const tabs = TABS.filter((tab) => orgCan(org.role, tab.action));
  const tab = tabs.find((candidate) => candidate.slug === props.tab) ?? tabs[0]!;

  return (
    <div class="page page-narrow">
      <header class="page-header">
        <div>
          <h1>{org.name}</h1>
          <p class="muted">
            Organisation settings · you are {org.role === 'owner' ? 'an owner' : `a${org.role === 'editor' ? 'n' : ''} ${org.role}`}
          </p>
        </div>
      </header>
      {tabs.length > 1 && (
        <div class="segmented settings-tabs" role="tablist" aria-label="Settings">
          {tabs.map((candidate) => (
            <button
              key={candidate.slug}
              role="tab"
              aria-selected={candidate.slug === tab.slug}
              class={candidate.slug === tab.slug ? 'is-selected' : ''}
              onClick={() => navigate(`/settings/${candidate.slug}`, { replace: true })}
            >
              {candidate.label}
            </button>
          ))}
        </div>
      )}
      {tab.slug === 'billing' ? <BillingSettings org={org} onPlanChanged={reload} /> : <WebhookSettings org={org} />}
    </div>
  );
}
