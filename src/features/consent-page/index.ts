// The hosted consent page: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { consentPageRoutes, type ConsentPageRouteDeps } from './routes.js';
import { createConsentPageService, type ConsentPageDeps } from './service.js';

export { CODE_TTL_MINUTES, MAX_WRONG_TRIES, RESEND_AFTER_SECONDS, MAX_CODES_PER_LINK } from './service.js';

/** Registers the page in its own encapsulated context (its headers, parser and error pages stay there). */
export async function registerConsentPage(app: FastifyInstance, deps: ConsentPageDeps & Omit<ConsentPageRouteDeps, 'service'>): Promise<void> {
  const service = createConsentPageService(deps);
  await app.register(consentPageRoutes, { ...deps, service });
}
