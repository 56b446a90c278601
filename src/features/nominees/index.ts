// Nominees: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { nomineeRoutes, principalNomineeRoutes } from './routes.js';
import { createNomineeService, type NomineeServiceDeps } from './service.js';

export { createNomineeService, type NomineeService } from './service.js';
export { RELATIONSHIPS, NOMINEE_STATUSES, MyNomineeBody, MyNomineeUpdateBody, type MyNomineeInput, type MyNomineeUpdateInput } from './schemas.js';
export type { NomineeRow } from './repo.js';

export function registerNominees(app: FastifyInstance, deps: NomineeServiceDeps) {
  const service = createNomineeService(deps);
  nomineeRoutes(app, service);
  principalNomineeRoutes(app, service);
  return service;
}
