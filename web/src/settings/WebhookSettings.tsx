import { useEffect, useState } from 'preact/hooks';
import { EVENT_NAMES } from '../../../src/model/event-names';
import { api, messageOf } from '../lib/api';
import { timeAgo } from '../lib/format';
import { confirmDialog } from '../ui/dialogs';
import { FormDialog } from '../ui/FormDialog';
import { Button, EmptyState, IconButton, Spinner } from '../ui/primitives';
import { SecretDialog } from '../ui/SecretDialog';
import { showError, showToast } from '../ui/toast';
import type { OrgSettings } from './org-settings';
import type { CreatedWebhook, DeliveryList, Webhook, WebhookDelivery, WebhookList } from '../../../src/model/schemas/webhooks';

/** `Webhook` and `WebhookDelivery` of docs/WEBHOOKS.md: the API's own schemas. */
type Delivery = WebhookDelivery;

/** Event names by area (`row`, `comment`, ...), in the service's own order, for the picker. */
const AREAS: Array<{ area: string; names: string[] }> = [];
for (const name of EVENT_NAMES) {
  const area = name.slice(0, name.indexOf('.'));
  const group = AREAS.find((candidate) => candidate.area === area);
  if (group) group.names.push(name);
  else AREAS.push({ area, names: [name] });
}

/**
 * Organisation-wide webhooks (`/api/orgs/{slug}/webhooks`): the list with
 * each one's state, creating one (its signing secret is shown once), pause
 * and resume, delete, and each webhook's deliveries with a retry.
 */
export function WebhookSettings(props: { org: OrgSettings }) {
  const base = `/api/orgs/${encodeURIComponent(props.org.slug)}/webhooks`;
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ url: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const load = () => api<WebhookList>('GET', base).then(({ webhooks }) => setHooks(webhooks), showError);
  useEffect(() => {
    void load();
  }, []);

  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
      await load();
    } catch (error) {
      showError(error);
    }
  };

  return (
    <section class="card" aria-label="Webhooks">
      <div class="card-header">
        <div>
          <h2>Webhooks</h2>
          <p class="muted">Trellis posts each event of every workspace of the organisation to these addresses, signed with the webhook's secret (Standard Webhooks).</p>
        </div>
        <Button variant="primary" icon="plus" onClick={() => setCreating(true)}>
          New webhook
        </Button>
      </div>
      {hooks === null ? (
        <Spinner />
      ) : hooks.length === 0 ? (
        <EmptyState icon="webhook" title="No webhooks">
          Add one to have your own service told when rows, docs, comments or members change.
        </EmptyState>
      ) : (
        <ul class="webhook-list">
          {hooks.map((hook) => (
            <li key={hook.id} class="webhook" data-webhook={hook.id}>
              <div class="webhook-row">
                <button class="webhook-toggle" aria-expanded={open === hook.id} onClick={() => setOpen(open === hook.id ? null : hook.id)}>
                  <code class="webhook-url">{hook.url}</code>
                  <span class="webhook-events">{hook.events.join(', ')}</span>
                </button>
                <WebhookState hook={hook} />
                <Button variant="ghost" onClick={() => void act(() => api('PATCH', `${base}/${hook.id}`, { active: !hook.active }))}>
                  {hook.active ? 'Pause' : 'Resume'}
                </Button>
                <IconButton
                  icon="trash"
                  label={`Delete webhook ${hook.url}`}
                  onClick={async () => {
                    const confirmed = await confirmDialog({ title: 'Delete webhook?', message: `${hook.url} receives nothing more, and its pending deliveries are dropped.`, confirmLabel: 'Delete', danger: true });
                    if (confirmed) await act(() => api('DELETE', `${base}/${hook.id}`));
                  }}
                />
              </div>
              {open === hook.id && <Deliveries path={`${base}/${hook.id}/deliveries`} />}
            </li>
          ))}
        </ul>
      )}
      {creating && (
        <CreateWebhookDialog
          base={base}
          onClose={() => setCreating(false)}
          onCreated={(hook) => {
            setCreating(false);
            setCreated(hook);
            void load();
          }}
        />
      )}
      {created && (
        <SecretDialog
          title="Webhook created"
          intro="This signing secret is shown only now. Store it with your receiver, which uses it to check that each request comes from Trellis."
          secret={created.secret}
          testId="webhook-secret"
          onClose={() => setCreated(null)}
        >
          <p class="fine-print">
            For <code>{created.url}</code>.
          </p>
        </SecretDialog>
      )}
    </section>
  );
}

function WebhookState(props: { hook: Webhook }) {
  const { hook } = props;
  if (!hook.active) return <span class="badge badge-muted">{hook.deactivationReason === 'failing' ? 'Off: failed for 3 days' : 'Paused'}</span>;
  if (hook.failingSince) return <span class="badge badge-warning" title={`Failing since ${new Date(hook.failingSince).toLocaleString()}`}>Failing {timeAgo(hook.failingSince)}</span>;
  return <span class="badge badge-success">Active</span>;
}

/** The newest deliveries of one webhook, refreshed every few seconds while shown. */
function Deliveries(props: { path: string }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [retrying, setRetrying] = useState<string | null>(null);
  const load = () =>
    api<DeliveryList>('GET', `${props.path}?limit=20`).then(
      ({ deliveries }) => {
        setDeliveries(deliveries);
        setError(null);
      },
      (failure) => setError(messageOf(failure)),
    );
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 3_000);
    return () => clearInterval(timer);
  }, [props.path]);

  const retry = async (delivery: Delivery) => {
    setRetrying(delivery.id);
    try {
      const after = await api<Delivery>('POST', `/api/webhook-deliveries/${encodeURIComponent(delivery.id)}/retry`);
      showToast(after.status === 'succeeded' ? 'Delivered.' : `Still failing${after.responseStatus ? ` (${after.responseStatus})` : ''}: ${after.error ?? 'no answer'}`, after.status === 'succeeded' ? 'success' : 'error');
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      setRetrying(null);
    }
  };

  if (error) return <p class="form-error">{error}</p>;
  if (!deliveries) return <Spinner />;
  if (deliveries.length === 0) return <p class="muted deliveries-empty">No deliveries yet: the next matching event is sent here.</p>;
  return (
    <table class="key-table deliveries" aria-label="Deliveries">
      <thead>
        <tr>
          <th>Event</th>
          <th>Status</th>
          <th>Response</th>
          <th>Attempts</th>
          <th>When</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => (
          <tr key={delivery.id} data-delivery={delivery.id}>
            <td>
              <code>{delivery.event}</code>
            </td>
            <td>
              <span class={`delivery-status is-${delivery.status}`}>{delivery.status}</span>
            </td>
            <td title={delivery.error ?? undefined}>
              {delivery.responseStatus ?? '—'}
              {delivery.durationMs !== null && <span class="muted"> · {delivery.durationMs} ms</span>}
              {delivery.error && <span class="delivery-error">{delivery.error}</span>}
            </td>
            <td>{delivery.attempts}</td>
            <td>{timeAgo(delivery.lastAttemptAt ?? delivery.createdAt)}</td>
            <td>
              {delivery.status !== 'succeeded' && (
                <Button variant="ghost" busy={retrying === delivery.id} onClick={() => void retry(delivery)}>
                  Retry
                </Button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateWebhookDialog(props: { base: string; onClose: () => void; onCreated: (created: { url: string; secret: string }) => void }) {
  const [url, setUrl] = useState('');
  const [all, setAll] = useState(false);
  const [picked, setPicked] = useState<Set<string>>(new Set(['row.*']));
  const events = all ? ['*'] : [...picked];

  const toggle = (filter: string, on: boolean) => {
    const next = new Set(picked);
    if (on) next.add(filter);
    else next.delete(filter);
    // A whole area covers its names: keep the subscription free of repeats.
    if (on && filter.endsWith('.*')) for (const name of AREAS.find((group) => `${group.area}.*` === filter)?.names ?? []) next.delete(name);
    setPicked(next);
  };

  const submit = async () => {
    const created = await api<CreatedWebhook>('POST', props.base, { url: url.trim(), events });
    props.onCreated(created);
  };

  return (
    <FormDialog title="New webhook" id="new-webhook" submitLabel="Create webhook" wide disabled={!url.trim() || events.length === 0} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Address</span>
        <input name="url" type="url" required maxLength={2048} placeholder="https://example.com/trellis-events" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        <small>A public http(s) address. Redirects are not followed.</small>
      </label>
      <fieldset class="field event-picker">
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} />
          Every event
        </label>
        {!all && (
          <div class="event-areas">
            {AREAS.map((group) => {
              const whole = picked.has(`${group.area}.*`);
              return (
                <div key={group.area} class="event-area">
                  <label class="check event-area-name">
                    <input type="checkbox" checked={whole} onChange={(e) => toggle(`${group.area}.*`, (e.target as HTMLInputElement).checked)} />
                    {group.area}.*
                  </label>
                  {group.names.map((name) => (
                    <label key={name} class="check">
                      <input type="checkbox" disabled={whole} checked={whole || picked.has(name)} onChange={(e) => toggle(name, (e.target as HTMLInputElement).checked)} />
                      {name}
                    </label>
                  ))}
                </div>
              );
            })}
          </div>
        )}
      </fieldset>
    </FormDialog>
  );
}
