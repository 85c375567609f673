import type { App } from '../http/types';
import { documentContent } from '../domain/workspace-documents';
import type { Services } from '../services';
import { agentRoutes } from './agents';
import { authRoutes } from './auth';
import { columnRoutes } from './columns';
import { docRoutes } from './doc';
import { eventRoutes } from './events';
import { exportRoutes } from './export';
import { healthRoutes } from './health';
import { htmlRoutes } from './html';
import { inviteRoutes } from './invites';
import { keyRoutes } from './keys';
import { meRoutes } from './me';
import { memberRoutes } from './members';
import { orgRoutes } from './orgs';
import { rowRoutes } from './rows';
import { surfaceRoutes } from './surfaces';
import { uploadRoutes } from './uploads';
import { versionRoutes } from './versions';
import { waitlistRoutes } from './waitlist';
import { workspaceRoutes } from './workspaces';

/** One module per resource; each registers its own routes and schemas. */
export async function registerRoutes(app: App, services: Services) {
  await healthRoutes(app, services);
  await authRoutes(app, services);
  await meRoutes(app, services);
  await waitlistRoutes(app, services);
  await workspaceRoutes(app, services, documentContent(services));
  await surfaceRoutes(app, services, documentContent(services));
  await keyRoutes(app, services);
  await agentRoutes(app, services);
  await exportRoutes(app, services);
  await memberRoutes(app, services);
  await inviteRoutes(app, services);
  await orgRoutes(app, services);
  await rowRoutes(app, services);
  await columnRoutes(app, services);
  await eventRoutes(app, services);
  await docRoutes(app, services);
  await uploadRoutes(app, services);
  await htmlRoutes(app, services);
  await versionRoutes(app, services);
}
