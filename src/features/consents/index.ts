// Consents: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { consentRoutes, principalConsentRoutes } from './routes.js';
import { createConsentService, type ConsentServiceDeps } from './service.js';

export { consentActionFor, type ConsentService } from './service.js';
export type { ReceiptRow } from './repo.js';
export { RecordConsentBody, type RecordConsentInput } from './schemas.js';

export function registerConsents(app: FastifyInstance, deps: ConsentServiceDeps) {
  const service = createConsentService(deps);
  consentRoutes(app, service);
  principalConsentRoutes(app, service);
  return service;
}
