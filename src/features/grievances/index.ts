// Grievance tickets: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { grievanceRoutes, principalGrievanceRoutes } from './routes.js';
import { createGrievanceService, type GrievanceServiceDeps } from './service.js';

export { createGrievanceService, statusMessage, ticketNoticeText, type GrievanceService } from './service.js';
export { GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES, CreateGrievanceBody, type CreateGrievanceInput } from './schemas.js';
export type { GrievanceRow } from './repo.js';

export function registerGrievances(app: FastifyInstance, deps: GrievanceServiceDeps) {
  const service = createGrievanceService(deps);
  grievanceRoutes(app, service);
  principalGrievanceRoutes(app, service);
  return service;
}
