// Webhook endpoints: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { webhookRoutes } from './routes.js';
import { createWebhookService, type WebhookServiceDeps } from './service.js';

export { createWebhookService, type WebhookService } from './service.js';

export function registerWebhooks(app: FastifyInstance, deps: WebhookServiceDeps) {
  const service = createWebhookService(deps);
  webhookRoutes(app, service);
  return service;
}
