// The export for the regulator: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { exportRoutes } from './routes.js';
import { createExportService, type ExportServiceDeps } from './service.js';

export { createExportService, type ExportService, type ExportStarted, type ExportedOrganization } from './service.js';
export { verifyExport, type VerifyReport } from './verify.js';
export { MANIFEST, META, JWKS, TABLES, PART_BYTES } from './archive.js';

export function registerExport(app: FastifyInstance, deps: ExportServiceDeps) {
  const service = createExportService(deps);
  exportRoutes(app, service);
  return service;
}
