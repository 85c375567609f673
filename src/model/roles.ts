/**
 * The names the policy decides over: roles, who a principal is, how far a
 * workspace is visible, and the plans. They are stored as text columns
 * (src/persistence/schema.ts re-exports them for its table types), but they
 * belong here, at the bottom, so the policy and the web app need nothing above it.
 */
export type { Role } from './permissions';
export type PrincipalKind = 'user' | 'agent';
/** Who a change is attributed to: a principal, or a public form, which collects rows from people without an account (docs/TABLES.md "Forms"). */
export type AuthorKind = PrincipalKind | 'form';
export type Visibility = 'private' | 'org' | 'unlisted' | 'public';
export type PlanName = 'free' | 'pro' | 'scale';
