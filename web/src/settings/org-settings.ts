/** The organisation as its settings page reads it: `GET /api/me/org` answers the caller's role, and the policy table says what that role may do. */
import { api } from '../lib/api';
import { ORG_PERMISSIONS, type OrgAction } from '../../../src/model/permissions';
import type { OrgSettings } from '../../../src/model/schemas/account';

export type OrgRole = OrgSettings['role'];
export type { OrgSettings };

/** The tabs of the organisation settings page, each offered to a role with its action. */
export const ORG_SETTINGS_TABS = [
  { slug: 'billing', label: 'Billing', action: 'read_org' },
  { slug: 'webhooks', label: 'Webhooks', action: 'manage_webhooks' },
] as const satisfies ReadonlyArray<{ slug: string; label: string; action: OrgAction }>;

/** `/settings/{tab}` paths of that page (`/settings` alone is the account page); the payment pages link back to `/settings/billing`. */
export const ORG_SETTINGS_PATHS: readonly string[] = ORG_SETTINGS_TABS.map((tab) => tab.slug);

export function loadOrgSettings(): Promise<OrgSettings> {
  return api<OrgSettings>('GET', '/api/me/org');
}

/** Whether the role may take an organisation action: the same table the server's policy reads, so the page offers only what the API accepts. */
export function orgCan(role: OrgRole, action: OrgAction): boolean {
  return (ORG_PERMISSIONS[role] as readonly OrgAction[]).includes(action);
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: cents % 100 === 0 ? 0 : 2, maximumFractionDigits: 2 })}`;
}
