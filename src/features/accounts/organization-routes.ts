// The addressed organization and its API keys, managed over HTTP on the organization's own host.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses, NullableTimestamp, Text, Timestamp } from '../../platform/http/schema-kit.js';
import type { AccountsService } from './service.js';
import { MAX_ALLOWED_ORIGINS } from '../../platform/http/cors.js';
import { SCOPES } from './service.js';

const ScopeName = Type.Unsafe<(typeof SCOPES)[number]>({ type: 'string', enum: [...SCOPES] });
const security: Record<string, string[]>[] = [{ Bearer: [] }, { ApiKey: [] }];

const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    slug: Type.String(),
    name: Type.String(),
    created_at: Timestamp(),
    grievance_period_days: Type.Integer({ minimum: 1, maximum: 90, description: 'Days the organization takes at most to answer a grievance (DPDP Rule 14(3): at most 90); new tickets are due this long after creation' }),
    role: Type.Unsafe<'owner' | 'admin' | 'member' | null>({
      type: ['string', 'null'],
      enum: ['owner', 'admin', 'member', null],
      description: "The caller's role; null for an API key",
    }),
    api_rate_limit: Type.Integer({ description: 'Requests allowed per API key per window (60 s unless the operator changed it)' }),
    api_rate_limit_default: Type.Boolean({ description: "true when api_rate_limit is the server's default (RATE_LIMIT_PER_KEY), not the organization's own" }),
    allowed_origins: Type.Array(Type.String(), {
      description: "Browser origins whose pages may call the data principal's surfaces (`/api/v1/me`, `/api/v1/internal/...`, the code sign-in) with CORS; empty: none",
      examples: [['https://shop.example.com']],
    }),
  },
  { title: 'Organization' },
);

const UpdateOrganizationBody = Type.Object(
  {
    grievance_period_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 90, description: 'Days the organization takes at most to answer a grievance, 1-90 (DPDP Rule 14(3)); tickets created afterwards are due that long after creation' }),
    ),
    api_rate_limit: Type.Optional(
      Type.Unsafe<number | null>({
        type: ['integer', 'null'],
        minimum: 1,
        maximum: 1000000,
        description: "Requests per API key per window (1-1,000,000); null goes back to the server's default",
      }),
    ),
    allowed_origins: Type.Optional(
      Type.Array(Type.String({ maxLength: 2048 }), {
        maxItems: MAX_ALLOWED_ORIGINS,
        description: `Browser origins (\`https://shop.example.com\`: scheme, host, optional port; no path) allowed to call the data principal's surfaces with CORS; at most ${MAX_ALLOWED_ORIGINS}; \`[]\` allows none. Replaces the list.`,
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateOrganization' },
);

const apiKeyFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first 12 characters of the key, to recognise it' }),
  scopes: Type.Array(ScopeName),
  created_at: Timestamp(),
  last_used_at: NullableTimestamp('Accurate to within 30 seconds'),
  revoked_at: NullableTimestamp(),
};
const ApiKey = Type.Object(apiKeyFields, { title: 'ApiKey' });
const CreatedApiKey = Type.Object(
  { key: Type.String({ description: 'The key itself: shown this once, stored only as a hash' }), ...apiKeyFields },
  { title: 'CreatedApiKey' },
);

const keyAccess = { apiKey: 'admin', bearer: ['owner', 'admin'] } as const;

export interface OrganizationRouteOptions {
  /** Called after a setting changed (the rate limiter forgets its cached limit). */
  onChanged(orgId: string): void;
  /** RATE_LIMIT_PER_KEY, shown when the organization set no limit of its own. */
  defaultRateLimit: number;
}

export function organizationRoutes(app: FastifyInstance, accounts: AccountsService, options: OrganizationRouteOptions): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const withSettings = async (ctx: ReturnType<typeof tenantOf>) => {
    const [org, settings] = await Promise.all([accounts.organization(ctx), accounts.settings(ctx)]);
    return {
      ...org,
      role: ctx.actor.type === 'user' ? ctx.actor.role : null,
      api_rate_limit: settings.api_rate_limit ?? options.defaultRateLimit,
      api_rate_limit_default: settings.api_rate_limit === null,
      allowed_origins: settings.allowed_origins,
    };
  };

  r.get('/api/v1/organization', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin', 'member'] } },
    schema: {
      tags: ['Organization'],
      security,
      summary: 'The organization',
      description: "The organization of this host and the caller's role in it (`null` for an API key). Any member, or an `admin` key.",
      response: { 200: Organization, ...errorResponses(401, 403) },
    },
    handler: (req) => withSettings(tenantOf(req)),
  });

  r.patch('/api/v1/organization', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin'] } },
    schema: {
      tags: ['Organization'],
      security,
      summary: "Change the organization's settings",
      description:
        "`api_rate_limit`: requests allowed per API key per window (default 500 per 60 s; `null` goes back to the default). Takes effect within 30 seconds in every process. `allowed_origins`: the browser origins whose pages may call the data principal's surfaces (CORS), replacing the list (at most 20, each `http(s)://host[:port]`); within 30 seconds in every process. `grievance_period_days` (1-90; over 90 is refused): the period the organization publishes for answering grievances; tickets created afterwards are due that long after creation, existing tickets keep their due date. Audited (`organization.updated`). Owners and admins, or an `admin` key.",
      body: UpdateOrganizationBody,
      response: { 200: Organization, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req) => {
      const ctx = tenantOf(req);
      const { grievance_period_days, ...settings } = req.body;
      if (grievance_period_days !== undefined) await accounts.updateGrievancePeriod(ctx, { grievance_period_days });
      if (Object.keys(settings).length > 0) {
        await accounts.updateSettings(ctx, settings);
        options.onChanged(ctx.orgId);
      }
      return withSettings(ctx);
    },
  });

  r.get('/api/v1/api-keys', {
    config: { access: keyAccess },
    schema: {
      tags: ['Organization'],
      security,
      summary: 'List API keys',
      description: 'Every key of the organization, revoked ones included, oldest first. The key itself is never shown again. Owners and admins, or an `admin` key.',
      response: { 200: Type.Array(ApiKey), ...errorResponses(401, 403) },
    },
    handler: (req) => accounts.listKeys(tenantOf(req)),
  });

  r.post('/api/v1/api-keys', {
    config: { access: keyAccess },
    schema: {
      tags: ['Organization'],
      security,
      summary: 'Create an API key',
      description: 'A new key with the given scopes (`admin` is everything). The answer holds the key: it is shown this once. Owners and admins, or an `admin` key.',
      body: Type.Object(
        { name: Text(255), scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length }) },
        { additionalProperties: false },
      ),
      response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await accounts.createKey(tenantOf(req), req.body)),
  });

  r.delete('/api/v1/api-keys/:id', {
    config: { access: keyAccess },
    schema: {
      tags: ['Organization'],
      security,
      summary: 'Revoke an API key',
      description: 'The key is refused at once by every process (on PostgreSQL, other processes hear of it through LISTEN/NOTIFY; within 10 seconds at worst if a notification is lost). Revoking a revoked key changes nothing and answers the same. Owners and admins, or an `admin` key.',
      params: Type.Object({ id: Type.String({ description: 'The key id (not the key)' }) }),
      response: { 200: ApiKey, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => accounts.revokeKey(tenantOf(req), req.params.id),
  });
}
