import type { App } from '../http/types';
import type { Services } from '../services';
import { healthRoutes } from './health';

/** One module per resource; each registers its own routes and schemas. */
export async function registerRoutes(app: App, services: Services) {
  await healthRoutes(app, services);
}
