/** The organisation as its settings page reads it: `GET /api/me/org` answers the caller's role, and the policy table says what that role may do. */
import { api } from '../lib/api';
import { ORG_PERMISSIONS, type OrgAction } from '../../../src/model/permissions';
import type { OrgSettings } from '../../../src/model/schemas/account';

export type OrgRole = OrgSettings['role'];
export type { OrgSettings };

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
