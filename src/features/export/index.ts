// The export for the regulator: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { exportRoutes } from './routes.js';
import { createExportService, type ExportServiceDeps } from './service.js';

export { createExportService, type ExportService, type ExportStarted, type ExportedOrganization } from './service.js';
export { verifyExport, type VerifyOptions, type VerifyReport } from './verify.js';
export { FORMAT, MANIFEST, MANIFEST_SIGNATURE, META, JWKS, TABLES, PART_BYTES } from './archive.js';
export { MANIFEST_TYP, signManifest, verifyManifestSignature, type SignedManifest } from './manifest.js';

export function registerExport(app: FastifyInstance, deps: ExportServiceDeps) {
  const service = createExportService(deps);
  exportRoutes(app, service);
  return service;
}
