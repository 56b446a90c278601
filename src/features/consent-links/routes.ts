// Consent link routes: create and regenerate (consent scope), the history (admin scope, X-Org-Id).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { ConsentLinkService } from './service.js';
import {
  ConsentLinkCreated,
  ConsentLinkDuplicated,
  CreateConsentLinkBody,
  DailyCounts,
  DailyCountsQuery,
  DuplicateConsentLinkBody,
  HistoryEnvelope,
  HistoryHeaders,
  HistoryQuery,
  RequestParams,
} from './schemas.js';

const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const common = { tags: ['Consent links'], security };
// Owners and admins of the organization may use their Bearer token here (original spec §5.3).
const bearer = ['owner', 'admin'] as const;
const BASE = '/api/v1/external/public/consent-link';

export function consentLinkRoutes(app: FastifyInstance, service: ConsentLinkService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(BASE, {
    config: { access: { apiKey: 'consent', bearer }, idempotent: true },
    schema: {
      ...common,
      summary: 'Create a consent link',
      description:
        "Creates a consent request and its first link, on the organization's own subdomain, and queues an SMS to `phone` (unless `send_sms` is false) and an email when `email` is given. `collection_point_id` is a UUID or display_id of an active collection point of `asset_id`. Unknown collection point: 404; inactive, or `asset_id` not its asset: 400. Scope: `consent` or `admin`, or a Bearer token of an owner or admin.",
      body: CreateConsentLinkBody,
      response: { 201: ConsentLinkCreated, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.create(tenantOf(req), req.body)),
  });

  r.post(`${BASE}/duplicate/:request_id`, {
    config: { access: { apiKey: 'consent', bearer }, idempotent: true },
    schema: {
      ...common,
      summary: 'Regenerate a consent link',
      description:
        'Issues a new link (new `event_id`, `expires_at`, `consent_link`) for the same request once the current one has expired; the previous link stops working. The body is optional. Checked in this order: 404 unknown request; 410 consent already given; 409 current link still active; 429 after 5 regenerations. Scope: `consent` or `admin`, or a Bearer token of an owner or admin.',
      params: RequestParams,
      body: DuplicateConsentLinkBody,
      response: { 201: ConsentLinkDuplicated, ...errorResponses(400, 401, 403, 404, 409, 410, 413, 415, 429) },
    },
    // The body is optional here: no body means the defaults.
    preValidation: async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
    handler: async (req, reply) => reply.code(201).send(await service.duplicate(tenantOf(req), req.params.request_id, req.body)),
  });

  r.get('/api/v1/consent-links/daily', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin', 'member'] } },
    schema: {
      ...common,
      summary: 'Consent links per day',
      description:
        "How many consent links were created on each of the last `days` UTC days (default 30, at most 90; today is the last), and of those how many were completed, are still active and expired without consent, with totals: the dashboard's overview chart. Every asset, or one (`asset_id`). Counts only, no link or data principal. An `admin` key, or the Bearer token of any member.",
      querystring: DailyCountsQuery,
      response: { 200: DailyCounts, ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.daily(tenantOf(req), req.query),
  });

  r.get(`${BASE}/history`, {
    config: { access: { apiKey: 'admin', bearer, orgHeader: true } },
    schema: {
      ...common,
      summary: 'Consent link history',
      description: [
        'The organization\'s consent requests for one asset, newest first (`created_at`, then `request_id`, descending), with `count`, `summary` and `collectionPointSummary` over the whole filtered set and `filters` echoing what was applied.',
        'Requires `X-Org-Id` (the organization slug; missing or not this host\'s organization: 400) and an `admin` key or the Bearer token of an owner or admin.',
        'Status is derived: `complete` when consent was given, else `expired` once `expires_at` has passed, else `active`. Phones are masked.',
        '`from`/`to` bound `created_at` inclusively; `from` must not be in the future, `to` (default now) not before `from`. An asset with no links answers 200 with zero counts.',
      ].join('\n\n'),
      headers: HistoryHeaders,
      querystring: HistoryQuery,
      response: { 200: HistoryEnvelope, ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.history(tenantOf(req), req.query),
  });
}
