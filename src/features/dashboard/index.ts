// The dashboard (web/): the feature's only public surface.
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { dashboardRoutes, type DashboardDeps } from './routes.js';

export { ASSET_PREFIX } from './routes.js';
export { DASHBOARD_PAGES } from './pages.js';

/** web/dist of this checkout or package (src/features/dashboard and dist/features/dashboard are as deep). */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../web/dist', import.meta.url));

export async function registerDashboard(app: FastifyInstance, deps: { webDir?: string; baseDomain: string }): Promise<void> {
  const options: DashboardDeps = { webDir: deps.webDir ?? DEFAULT_WEB_DIR, baseDomain: deps.baseDomain };
  await app.register(dashboardRoutes, options);
}
