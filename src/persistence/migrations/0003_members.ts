import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * At most one open invite per address and target: inviting the same e-mail
 * again refreshes that invite (role, token, expiry) instead of piling up
 * links that all still work. "Open" means neither accepted nor revoked;
 * expired ones stay open so a re-invite revives them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create unique index invites_open_workspace_email_idx on invites (workspace_id, email)
      where kind = 'workspace' and accepted_at is null and revoked_at is null
  `.execute(db);
  await sql`
    create unique index invites_open_org_email_idx on invites (org_id, email)
      where kind = 'org' and accepted_at is null and revoked_at is null
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists invites_open_workspace_email_idx`.execute(db);
  await sql`drop index if exists invites_open_org_email_idx`.execute(db);
}
