// Rights fulfilment: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { dataMapRoutes, principalPackageRoutes, taskRoutes } from './routes.js';
import { createFulfilmentService, type FulfilmentServiceDeps } from './service.js';

export { DEFAULT_PART_MAX_BYTES } from './routes.js';
export { createFulfilmentService, ticketFulfilmentStatus, KIND_OF_CATEGORY, type FulfilmentService, type TicketStatusMover } from './service.js';

export function registerFulfilment(app: FastifyInstance, deps: FulfilmentServiceDeps) {
  const service = createFulfilmentService(deps);
  dataMapRoutes(app, service);
  taskRoutes(app, service, deps.partMaxBytes);
  principalPackageRoutes(app, service);
  return service;
}
