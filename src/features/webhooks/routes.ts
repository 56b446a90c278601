// Webhook endpoint routes (contract §9): an admin key, or the Bearer token of an owner or admin.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { WebhookService } from './service.js';
import {
  CreateWebhookBody,
  DeliveryParams,
  WebhookAttemptList,
  ListDeliveriesQuery,
  UpdateWebhookBody,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookList,
  WebhookParams,
} from './schemas.js';

const access = { apiKey: 'admin', bearer: ['owner', 'admin'] } as const;
const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const common = { tags: ['Webhooks'], security };
const who = 'An `admin` key, or the Bearer token of an owner or admin.';
const BASE = '/api/v1/webhooks';

export function webhookRoutes(app: FastifyInstance, service: WebhookService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(BASE, {
    config: { access },
    schema: {
      ...common,
      summary: 'Add a webhook endpoint',
      description: `Registers a URL to receive the chosen event types. The answer carries the signing secret (\`whsec_…\`), shown this once; it signs every delivery (Standard Webhooks). The URL is refused (400) when it resolves to a loopback, private or link-local address or names this service, unless the operator set WEBHOOK_ALLOW_PRIVATE=1. ${who}`,
      body: CreateWebhookBody,
      response: { 201: WebhookEndpointWithSecret, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.create(tenantOf(req), req.body)),
  });

  r.get(BASE, {
    config: { access },
    schema: {
      ...common,
      summary: 'List webhook endpoints',
      description: `Every endpoint of the organization, oldest first; secrets are never shown again. ${who}`,
      response: { 200: WebhookList, ...errorResponses(401, 403) },
    },
    handler: (req) => service.list(tenantOf(req)),
  });

  r.get(`${BASE}/:id`, {
    config: { access },
    schema: { ...common, summary: 'Get a webhook endpoint', description: who, params: WebhookParams, response: { 200: WebhookEndpoint, ...errorResponses(401, 403, 404) } },
    handler: (req) => service.get(tenantOf(req), req.params.id),
  });

  r.patch(`${BASE}/:id`, {
    config: { access },
    schema: {
      ...common,
      summary: 'Change a webhook endpoint',
      description: `Changes the fields given (at least one): \`url\` (checked as on creation), \`events\`, \`description\` (null clears it), \`enabled\` (true turns a disabled endpoint back on; its pending deliveries resume). ${who}`,
      params: WebhookParams,
      body: UpdateWebhookBody,
      response: { 200: WebhookEndpoint, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.update(tenantOf(req), req.params.id, req.body),
  });

  r.delete(`${BASE}/:id`, {
    config: { access },
    schema: {
      ...common,
      summary: 'Delete a webhook endpoint',
      description: `The endpoint and its deliveries are deleted; nothing more is sent to it. 204. ${who}`,
      params: WebhookParams,
      response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
    },
    handler: async (req, reply) => {
      await service.remove(tenantOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  });

  r.post(`${BASE}/:id/rotate-secret`, {
    config: { access },
    schema: {
      ...common,
      summary: 'Rotate the signing secret',
      description: `A new secret replaces the old one at once (attempts from then on are signed with it) and is shown this once. No body. ${who}`,
      params: WebhookParams,
      response: { 200: WebhookEndpointWithSecret, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.rotateSecret(tenantOf(req), req.params.id),
  });

  r.get(`${BASE}/:id/deliveries`, {
    config: { access },
    schema: {
      ...common,
      summary: 'List deliveries to a webhook endpoint',
      description: `One row per event sent (or to be sent) to the endpoint, newest first, with its attempts, the last answer or error, and when the next attempt is due. ${who}`,
      params: WebhookParams,
      querystring: ListDeliveriesQuery,
      response: { 200: WebhookDeliveryList, ...errorResponses(400, 401, 403, 404) },
    },
    handler: (req) => service.deliveries(tenantOf(req), req.params.id, req.query),
  });

  r.get(`${BASE}/:id/deliveries/:delivery_id/attempts`, {
    config: { access },
    schema: {
      ...common,
      summary: "A webhook delivery's attempts",
      description: `The delivery and every attempt made at it, oldest first: when it was sent, how long the receiver took, its HTTP status or why it failed. Attempts are kept as long as the delivery (deleting the endpoint deletes both). ${who}`,
      params: DeliveryParams,
      response: { 200: WebhookAttemptList, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.attempts(tenantOf(req), req.params.id, req.params.delivery_id),
  });

  r.post(`${BASE}/:id/deliveries/:delivery_id/retry`, {
    config: { access },
    schema: {
      ...common,
      summary: 'Retry a webhook delivery',
      description: `Sends the delivery again as soon as the worker gets to it (whatever its status; the same event id, so the receiver can tell a repeat). 202 with the delivery, now pending. A disabled endpoint: 409. No body. ${who}`,
      params: DeliveryParams,
      response: { 202: WebhookDelivery, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => reply.code(202).send(await service.retry(tenantOf(req), req.params.id, req.params.delivery_id)),
  });

  r.post(`${BASE}/:id/test`, {
    config: { access },
    schema: {
      ...common,
      summary: 'Send a test event',
      description: `Queues a \`webhook.test\` event for this endpoint only; it is delivered (signed, retried) like any other. 202 with the delivery. A disabled endpoint: 409. No body. ${who}`,
      params: WebhookParams,
      response: { 202: WebhookDelivery, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => reply.code(202).send(await service.sendTest(tenantOf(req), req.params.id)),
  });
}
