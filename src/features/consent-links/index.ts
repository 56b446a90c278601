// Consent links: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { consentLinkRoutes } from './routes.js';
import { createConsentLinkService, type ConsentLinkServiceDeps } from './service.js';

export {
  completeLinkRequest,
  markLatestRequestRevoked,
  consentLinkUrl,
  linkStatus,
  wholeDays,
  MAX_REGENERATIONS,
  type ConsentLinkService,
} from './service.js';
export { CONSENT_ACTIONS, type ConsentAction } from './schemas.js';

export function registerConsentLinks(app: FastifyInstance, deps: ConsentLinkServiceDeps) {
  const service = createConsentLinkService(deps);
  consentLinkRoutes(app, service);
  return service;
}
