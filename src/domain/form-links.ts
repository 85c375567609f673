import { randomToken } from '../lib/secrets';
import { ensureFormTokens } from '../persistence/form-links';
import type { Services } from './services';

/**
 * A form view's public link: `{PUBLIC_URL}/forms/{token}`, the token 32
 * random bytes made the first time the form is read open and kept with the
 * view, so closing and opening it again keeps the address. The token opens
 * the form and nothing else; it is stored as it is (not hashed) so that
 * reads can show the link again, like a file's share link.
 */
export async function formTokensFor(services: Services, workspaceId: string, viewIds: readonly string[]): Promise<Map<string, string>> {
  return ensureFormTokens(services.db, workspaceId, viewIds, () => randomToken(32));
}

export function formUrl(services: Pick<Services, 'config'>, token: string): string {
  return `${services.config.publicUrl}/forms/${token}`;
}
