import type { App } from '../http/types';
import type { Services } from '../services';
import { authRoutes } from './auth';
import { healthRoutes } from './health';
import { meRoutes } from './me';
import { waitlistRoutes } from './waitlist';

/** One module per resource; each registers its own routes and schemas. */
export async function registerRoutes(app: App, services: Services) {
  await healthRoutes(app, services);
  await authRoutes(app, services);
  await meRoutes(app, services);
  await waitlistRoutes(app, services);
}
