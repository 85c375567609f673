import { useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf, onThisOrigin } from '../lib/api';
import { formatDate } from '../lib/format';
import { formatBytes } from '../files/files-api';
import { confirmDialog } from '../ui/dialogs';
import { FormDialog } from '../ui/FormDialog';
import { Button, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import { formatCents, orgCan, type OrgSettings } from './org-settings';
import type { BillingSummary, DowngradeResult, UpgradeResult } from '../../../src/model/schemas/billing';

/** The billing answers are the API's own schemas (src/model/schemas/billing.ts, docs/BILLING.md "BillingSummary"). */
type PlanName = BillingSummary['plan'];

const PLAN_LABELS: Record<PlanName, string> = { free: 'Free', pro: 'Pro', scale: 'Scale' };
const PLAN_ORDER: PlanName[] = ['free', 'pro', 'scale'];
/** While a checkout is open in another tab, the page looks for the new plan this often. */
const CHECKOUT_POLL_MS = 2_000;

/**
 * The plan, what the organisation uses of it this month, and changing it:
 * upgrades (at once with a card on file, else through the provider's
 * checkout page in a new tab), the scheduled downgrade and its cancel, and
 * a request for a higher limit. Only owners are offered plan changes, as
 * only they may make them (`manage_billing`).
 */
export function BillingSettings(props: { org: OrgSettings; onPlanChanged: () => void }) {
  const [summary, setSummary] = useState<BillingSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<PlanName | 'downgrade' | null>(null);
  const [checkout, setCheckout] = useState<{ plan: PlanName; url: string } | null>(null);
  const [asking, setAsking] = useState(false);
  const owner = orgCan(props.org.role, 'manage_billing');
  const planSeen = useRef<PlanName | null>(null);

  const load = async () => {
    try {
      const next = await api<BillingSummary>('GET', '/api/billing');
      setSummary(next);
      setError(null);
      if (planSeen.current && planSeen.current !== next.plan) props.onPlanChanged();
      planSeen.current = next.plan;
      return next;
    } catch (failure) {
      setError(messageOf(failure));
      return null;
    }
  };

  useEffect(() => {
    void load();
    const onFocus = () => void load();
    window.addEventListener('focus', onFocus);
    return () => window.removeEventListener('focus', onFocus);
  }, []);

  // A checkout is paid in its own tab: until the plan changes, look again every few seconds.
  useEffect(() => {
    if (!checkout) return;
    const timer = setInterval(async () => {
      const next = await load();
      if (next?.plan === checkout.plan) {
        setCheckout(null);
        showToast(`You are on ${PLAN_LABELS[next.plan]} now.`, 'success');
      }
    }, CHECKOUT_POLL_MS);
    return () => clearInterval(timer);
  }, [checkout]);

  if (error && !summary) return <p class="form-error">{error}</p>;
  if (!summary) return <Spinner />;

  const switchTo = async (plan: PlanName) => {
    setBusy(plan);
    try {
      const result = await api<UpgradeResult>('POST', '/api/billing/upgrade', { plan });
      if (result.status === 'checkout-required') {
        const url = onThisOrigin(result.checkoutUrl);
        setCheckout({ plan, url });
        window.open(url, '_blank', 'noopener');
      } else {
        showToast(
          `You are on ${PLAN_LABELS[result.plan]} now${result.prorationCents > 0 ? `; ${formatCents(result.prorationCents)} is charged for the rest of the month` : result.prorationCents < 0 ? `; ${formatCents(-result.prorationCents)} is credited` : ''}.`,
          'success',
        );
        await load();
      }
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(null);
    }
  };

  const toggleDowngrade = async (cancel: boolean) => {
    if (!cancel) {
      const confirmed = await confirmDialog({
        title: 'Move to Free?',
        message: `${PLAN_LABELS[summary.plan]} stays until ${formatDate(summary.periodEndsAt)}; then the organisation moves to Free. Nothing is deleted, but creating more than Free allows is refused.`,
        confirmLabel: 'Downgrade at period end',
        danger: true,
      });
      if (!confirmed) return;
    }
    setBusy('downgrade');
    try {
      const result = await api<DowngradeResult>('POST', '/api/billing/downgrade');
      showToast(result.status === 'scheduled' ? `Moving to Free on ${formatDate(result.effectiveAt!)}.` : `You stay on ${PLAN_LABELS[summary.plan]}.`, 'success');
      await load();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(null);
    }
  };

  const meters: Array<{ label: string; used: number; cap: number; format?: (n: number) => string }> = [
    { label: 'Workspaces', used: summary.activeWorkspaces, cap: summary.workspaceCap },
    { label: 'People', used: summary.activeMembers, cap: summary.memberCap },
    { label: 'Agents', used: summary.activeAgents, cap: summary.agentCap },
    { label: 'API calls this month', used: summary.apiCallsThisMonth, cap: summary.apiCallsPerMonthCap },
    { label: 'Webhook deliveries this month', used: summary.webhooksThisMonth, cap: summary.webhooksPerMonthCap },
    { label: 'Agent messages this month', used: summary.messagesThisMonth, cap: summary.messagesBundlePerMonth },
    { label: 'File storage', used: summary.storageBytesUsed, cap: summary.storageBytesCap, format: formatBytes },
  ];

  return (
    <>
      <section class="card" aria-label="Plan">
        <div class="card-header">
          <div>
            <h2>
              Plan: <span data-testid="current-plan">{PLAN_LABELS[summary.plan]}</span>
            </h2>
            <p class="muted">
              {formatCents(summary.monthlyPriceCents)} a month
              {summary.monthlyTotalCents !== summary.monthlyPriceCents && ` · ${formatCents(summary.monthlyTotalCents)} this month with ${summary.messagesOverage.toLocaleString()} extra messages`}
              {' · '}the month ends {formatDate(summary.periodEndsAt)}
              {summary.payments.card && ` · ${summary.payments.card.brand} ending ${summary.payments.card.last4}`}
            </p>
          </div>
        </div>
        {summary.pendingDowngradeAt && (
          <div class="banner" role="note">
            Moving to Free on {formatDate(summary.pendingDowngradeAt)}.
            {owner && (
              <Button variant="ghost" busy={busy === 'downgrade'} onClick={() => void toggleDowngrade(true)}>
                Keep {PLAN_LABELS[summary.plan]}
              </Button>
            )}
          </div>
        )}
        {checkout && (
          <div class="banner" role="status">
            Finish the payment in the checkout tab; this page changes as soon as it is paid.{' '}
            <a href={checkout.url} target="_blank" rel="noopener">
              Open the checkout again
            </a>
          </div>
        )}
        <div class="plan-grid">
          {PLAN_ORDER.map((name) => {
            const plan = summary.plans.find((candidate) => candidate.plan === name);
            if (!plan) return null;
            const current = name === summary.plan;
            const higher = PLAN_ORDER.indexOf(name) > PLAN_ORDER.indexOf(summary.plan);
            return (
              <div key={name} class={`plan-card ${current ? 'is-current' : ''}`} data-plan={name}>
                <h3>{PLAN_LABELS[name]}</h3>
                <p class="plan-price">
                  {formatCents(plan.monthlyPriceCents)}
                  <span class="muted"> / month</span>
                </p>
                <ul class="plan-caps">
                  <li>{capText(plan.caps.workspaces, 'workspaces')}</li>
                  <li>{capText(plan.caps.rowsPerWorkspace, 'rows per workspace')}</li>
                  <li>{capText(plan.caps.humans, 'people')}</li>
                  <li>{capText(plan.caps.agents, 'agents')}</li>
                </ul>
                {current ? (
                  <span class="badge">Current plan</span>
                ) : owner && name !== 'free' ? (
                  <Button variant={higher ? 'primary' : 'secondary'} busy={busy === name} onClick={() => void switchTo(name)}>
                    {higher ? `Upgrade to ${PLAN_LABELS[name]}` : `Switch to ${PLAN_LABELS[name]}`}
                  </Button>
                ) : owner && name === 'free' && !summary.pendingDowngradeAt ? (
                  <Button variant="ghost" busy={busy === 'downgrade'} onClick={() => void toggleDowngrade(false)}>
                    Downgrade to Free
                  </Button>
                ) : null}
              </div>
            );
          })}
        </div>
        {!owner && <p class="fine-print">Only owners of the organisation can change its plan.</p>}
      </section>

      <section class="card" aria-label="Usage">
        <div class="card-header">
          <h2>Usage</h2>
          <Button variant="ghost" icon="sync" onClick={() => void load()}>
            Refresh
          </Button>
        </div>
        <ul class="meters">
          {meters.map((meter) => (
            <Meter key={meter.label} {...meter} />
          ))}
        </ul>
        {summary.fullestWorkspaces.length > 0 && (
          <>
            <h3 class="meters-heading">Rows in the fullest workspaces</h3>
            <ul class="meters">
              {summary.fullestWorkspaces.map((workspace) => (
                <Meter key={workspace.id} label={workspace.name} used={workspace.rows} cap={summary.rowsPerWorkspaceCap} />
              ))}
            </ul>
          </>
        )}
        <div class="card-footer">
          <p class="muted">Need more than your plan allows without changing it?</p>
          <Button onClick={() => setAsking(true)}>Request a higher limit</Button>
        </div>
      </section>
      {asking && <LimitIncreaseDialog onClose={() => setAsking(false)} />}
    </>
  );
}

function capText(cap: number | null | undefined, what: string) {
  return cap === null || cap === undefined ? `Unlimited ${what}` : `${cap.toLocaleString()} ${what}`;
}

function Meter(props: { label: string; used: number; cap: number; format?: (n: number) => string }) {
  const format = props.format ?? ((n: number) => n.toLocaleString());
  const share = props.cap > 0 ? Math.min(1, props.used / props.cap) : 0;
  const level = share >= 1 ? 'is-full' : share >= 0.8 ? 'is-high' : '';
  return (
    <li class={`meter ${level}`} data-meter={props.label}>
      <div class="meter-label">
        <span>{props.label}</span>
        <span class="meter-figures">
          {format(props.used)} of {format(props.cap)}
        </span>
      </div>
      <div class="meter-bar" role="meter" aria-label={props.label} aria-valuemin={0} aria-valuemax={props.cap} aria-valuenow={props.used}>
        <span style={{ width: `${share * 100}%` }} />
      </div>
    </li>
  );
}

function LimitIncreaseDialog(props: { onClose: () => void }) {
  const [kind, setKind] = useState<'agents' | 'workspaces' | 'rows' | 'other'>('rows');
  const [desired, setDesired] = useState('');
  const [reason, setReason] = useState('');
  const value = Number(desired.replace(/[,\s]/g, ''));

  const submit = async () => {
    await api('POST', '/api/billing/request-limit-increase', { kind, desiredValue: value, reason: reason.trim() });
    showToast('Request sent. We will answer by e-mail.', 'success');
    props.onClose();
  };

  return (
    <FormDialog title="Request a higher limit" id="limit-increase" submitLabel="Send request" disabled={!Number.isInteger(value) || value < 1 || !reason.trim()} onClose={props.onClose} onSubmit={submit}>
      <div class="field-row">
        <label class="field">
          <span>Limit</span>
          <select name="kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value as typeof kind)}>
            <option value="rows">Rows per workspace</option>
            <option value="workspaces">Workspaces</option>
            <option value="agents">Agents</option>
            <option value="other">Something else</option>
          </select>
        </label>
        <label class="field">
          <span>How many do you need?</span>
          <input name="desiredValue" inputMode="numeric" required value={desired} onInput={(e) => setDesired((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <label class="field">
        <span>What for?</span>
        <textarea name="reason" rows={4} required maxLength={2000} value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
      </label>
    </FormDialog>
  );
}
