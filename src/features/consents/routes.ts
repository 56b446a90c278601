// Consent routes (consent scope): record, withdraw, read the current consent of a data principal.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { ConsentService } from './service.js';
import { ConsentRecord, CurrentConsent, CurrentConsentQuery, PointParams, RecordConsentBody, WithdrawConsentBody } from './schemas.js';

const access = { apiKey: 'consent' } as const;
const common = { tags: ['Consents'], security: [{ ApiKey: [] }] };

export function consentRoutes(app: FastifyInstance, service: ConsentService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/consent/:collection_point_id/consent', {
    config: { access, idempotent: true },
    schema: {
      ...common,
      summary: 'Record a consent',
      description: [
        'Appends a consent record: every purpose of the collection point exactly once (missing, repeated or unknown ids: 400), with the notice version shown.',
        'With `event_id` it completes that link\'s request: unknown event 404; a `dp_id` other than the request\'s 400; a completed request 409; an expired or superseded link 410. Nothing is recorded on any error.',
        'A refused required purpose makes the action `declined`. Scope: `consent` or `admin`.',
      ].join('\n\n'),
      params: PointParams,
      body: RecordConsentBody,
      response: { 201: ConsentRecord, ...errorResponses(400, 401, 403, 404, 409, 410, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.record(tenantOf(req), req.params.collection_point_id, req.body)),
  });

  r.post('/consent/:collection_point_id/withdraw', {
    config: { access, idempotent: true },
    schema: {
      ...common,
      summary: 'Withdraw a consent',
      description:
        'Appends a record with action `revoked` and every purpose refused; the latest completed consent link request of that data principal there shows `consent_action: revoked`. 404 when nothing is on record; 409 when already withdrawn. Scope: `consent` or `admin`.',
      params: PointParams,
      body: WithdrawConsentBody,
      response: { 201: ConsentRecord, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.withdraw(tenantOf(req), req.params.collection_point_id, req.body.dp_id)),
  });

  r.get('/consent/:collection_point_id/consent', {
    config: { access },
    schema: {
      ...common,
      summary: "A data principal's current consent",
      description:
        'Per purpose of the collection point, what the latest record says (`granted` false for purposes added since), with the notice version it was given under and the current one. 404 when nothing is on record. Scope: `consent` or `admin`.',
      params: PointParams,
      querystring: CurrentConsentQuery,
      response: { 200: CurrentConsent, ...errorResponses(400, 401, 403, 404) },
    },
    handler: (req) => service.current(tenantOf(req), req.params.collection_point_id, req.query.dp_id),
  });
}
