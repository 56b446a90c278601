// Assets and collection points: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { collectionPointRoutes } from './routes.js';
import { createCollectionPointService, type CollectionPointServiceDeps } from './service.js';

export { findCollectionPoint, type CollectionPointService } from './service.js';
export type { CollectionPointRow, PurposeRow } from './repo.js';

export function registerCollectionPoints(app: FastifyInstance, deps: CollectionPointServiceDeps) {
  const service = createCollectionPointService(deps);
  collectionPointRoutes(app, service);
  return service;
}
