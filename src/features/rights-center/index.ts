// The Rights Center (contract §7): the data principal's own pages at /rights. The feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { rightsCenterRoutes, type RightsCenterDeps } from './routes.js';

/** Registers the pages in their own encapsulated context (headers, form parser, CSRF and error pages stay there). */
export async function registerRightsCenter(app: FastifyInstance, deps: RightsCenterDeps): Promise<void> {
  await app.register(rightsCenterRoutes, deps);
}
