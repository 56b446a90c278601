// Consent routes (consent scope): record, withdraw, read the current consent of a data principal.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf, tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { ConsentService } from './service.js';
import { Type } from 'typebox';
import {
  ConsentIdParams,
  ConsentReceiptAnswer,
  ConsentRecord,
  CurrentConsent,
  CurrentConsentQuery,
  MyConsent,
  MyConsentBody,
  MyConsentRecord,
  PointParams,
  RecordConsentBody,
  WithdrawConsentBody,
} from './schemas.js';

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

  r.get('/api/v1/consents/:consent_id/receipt', {
    config: { access },
    schema: {
      ...common,
      summary: "A consent record's signed receipt",
      description:
        "The receipt signed when the record was made (a consent or a withdrawal): a compact JWS with the organization's Ed25519 key, verifiable offline with `/.well-known/jwks.json` alone. A record made before receipts existed has a late receipt once the backfill has signed it (its document says `issued_late: true` and `issued_at`), and answers 404 until then. Unknown id (or another organization's): 404. Scope: `consent` or `admin`.",
      params: ConsentIdParams,
      response: { 200: ConsentReceiptAnswer, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.receipt(tenantOf(req), req.params.consent_id),
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

const principal = { tags: ['Data principal (me)'], security: [{ DataPrincipal: [] }] };

/** The data principal's own consents, with their token (contract §7): the same records and rules as the organization's routes. */
export function principalConsentRoutes(app: FastifyInstance, service: ConsentService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const access = { dataPrincipal: true } as const;

  r.get('/api/v1/me/consents', {
    config: { access },
    schema: {
      ...principal,
      summary: 'My consents',
      description:
        'For every collection point where I have a consent on record, its current state: the latest record\'s action and choices, per purpose of the collection point as it is now (`granted` false for a purpose added since), newest first. An empty array when there is none. `Authorization: Bearer dpt_…`.',
      response: { 200: Type.Array(MyConsent), ...errorResponses(401, 403) },
    },
    handler: (req) => service.mine(principalOf(req)),
  });

  r.get('/api/v1/me/consents/:collection_point_id/history', {
    config: { access },
    schema: {
      ...principal,
      summary: 'My consent history at a collection point',
      description:
        'Every record of mine at this collection point (UUID or display_id), newest first, with its channel. 404 when I have none there (or there is no such collection point). `Authorization: Bearer dpt_…`.',
      params: PointParams,
      response: { 200: Type.Array(MyConsentRecord), ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.myHistory(principalOf(req), req.params.collection_point_id),
  });

  r.get('/api/v1/me/consents/:consent_id/receipt', {
    config: { access },
    schema: {
      ...principal,
      summary: 'The signed receipt of one of my consent records',
      description:
        "The receipt of a record of mine (`consent_id` from my consents or their history): a compact JWS with the organization's key, verifiable offline with `/.well-known/jwks.json`. Another person's record, or an unknown id: 404. `Authorization: Bearer dpt_…`.",
      params: ConsentIdParams,
      response: { 200: ConsentReceiptAnswer, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.myReceipt(principalOf(req), req.params.consent_id),
  });

  r.post('/api/v1/me/consents/:collection_point_id', {
    config: { access, idempotent: true },
    schema: {
      ...principal,
      summary: 'Give or change my consent',
      description: [
        'Appends a consent record for me (`dp_id` is the token\'s), channel `rights_center`, under the collection point\'s current notice version: every purpose of the collection point exactly once (missing, repeated or unknown ids: 400).',
        'A refused required purpose makes the action `declined`. Unknown collection point 404; an inactive one 400. `Authorization: Bearer dpt_…`.',
      ].join('\n\n'),
      params: PointParams,
      body: MyConsentBody,
      response: { 201: ConsentRecord, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.giveMine(principalOf(req), req.params.collection_point_id, req.body.purposes)),
  });

  r.post('/api/v1/me/consents/:collection_point_id/withdraw', {
    config: { access, idempotent: true },
    schema: {
      ...principal,
      summary: 'Withdraw my consent',
      description:
        'One call, no body: appends a record with action `revoked` and every purpose refused, channel `rights_center`. 404 when I have no consent on record there; 409 when it is already withdrawn. `Authorization: Bearer dpt_…`.',
      params: PointParams,
      response: { 201: ConsentRecord, ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.withdrawMine(principalOf(req), req.params.collection_point_id)),
  });
}
