// Grievance tickets: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { grievanceRoutes } from './routes.js';
import { createGrievanceService, type GrievanceServiceDeps } from './service.js';

export { createGrievanceService, grievancePeriodDays, clockOf, withClock, type GrievanceService, type TicketClock } from './service.js';
export { GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES } from './schemas.js';

export function registerGrievances(app: FastifyInstance, deps: GrievanceServiceDeps) {
  const service = createGrievanceService(deps);
  grievanceRoutes(app, service);
  return service;
}
