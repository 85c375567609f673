import { findOrgRole } from '../persistence/accounts';
import { orgCallerFacts, type OrgCallerFacts } from '../policy/index';
import type { Actor } from '../policy/actor';
import type { Services } from './services';

/**
 * What the policy needs to decide an organisation action for `actor`: the
 * org role of the person behind it (the user, or the key's owner) with the
 * key or token it calls with. `authorizeOrg` decides over it.
 */
export async function loadOrgCaller(services: Services, actor: Actor, orgId: string): Promise<OrgCallerFacts> {
  return orgCallerFacts(actor, await findOrgRole(services.db, orgId, actor.userId));
}
