// Grievance tickets: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { grievanceRoutes, principalGrievanceRoutes } from './routes.js';
import { createGrievanceService, type GrievanceServiceDeps } from './service.js';

export { createGrievanceService, statusMessage, parseStatusMessage, ticketNoticeText, grievancePeriodDays, clockOf, withClock, type GrievanceService, type TicketClock } from './service.js';
export {
  GRIEVANCE_CATEGORIES,
  GRIEVANCE_STATUSES,
  CreateGrievanceBody,
  MessageBody,
  PrincipalGrievanceBody,
  type CreateGrievanceInput,
  type MessageInput,
  type PrincipalGrievanceInput,
} from './schemas.js';
export type { GrievanceRow, MessageRow } from './repo.js';

export function registerGrievances(app: FastifyInstance, deps: GrievanceServiceDeps) {
  const service = createGrievanceService(deps);
  grievanceRoutes(app, service);
  principalGrievanceRoutes(app, service);
  return service;
}
