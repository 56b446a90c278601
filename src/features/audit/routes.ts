// GET /api/v1/audit-log: the organization's audit log for its owners and admins (or an admin key).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses, ListOf, Nullable, Paging, Timestamp } from '../../platform/http/schema-kit.js';
import type { AuditService } from './service.js';

const TIMESTAMP = { format: 'date-time', 'x-message': 'must be an ISO 8601 date-time with a time zone' };

const AuditEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    at: Timestamp(),
    actor: Type.Object({
      type: Type.Unsafe<'api_key' | 'user' | 'data_principal' | 'nominee'>({ type: 'string', enum: ['api_key', 'user', 'data_principal', 'nominee'] }),
      id: Type.String({ format: 'uuid', description: 'The API key id, the user id, or (data_principal, on the consent page) the link event_id' }),
    }),
    action: Type.String({ description: '`<record>.<verb>`, e.g. grievance.status_changed' }),
    target: Type.Object({ type: Type.String(), id: Nullable(Type.String()) }),
    request_id: Nullable(Type.String({ description: 'The X-Request-Id of the change' })),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'Ids, statuses and changed field names; never personal data' }),
    seq: Nullable(Type.Integer({ minimum: 1 }), {
      description: "The entry's place in the organization's hash chain and Merkle tree (1, 2, ...); null in the moment before the sequencer seals it (a read seals what is committed first, so only an entry committed during the read shows null)",
    }),
    prev_hash: Nullable(Type.String(), { description: 'SHA-256 (hex, 64 characters) of the previous entry; 64 zeros for the first; null until sealed' }),
    hash: Nullable(Type.String(), { description: 'SHA-256 (hex, 64 characters) of prev_hash followed by the canonical content of this entry; null until sealed' }),
  },
  { title: 'AuditEntry' },
);

export function auditRoutes(app: FastifyInstance, service: AuditService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/api/v1/audit-log', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin'] } },
    schema: {
      tags: ['Organization'],
      security: [{ ApiKey: [] }, { Bearer: [] }],
      summary: 'Audit log',
      description:
        'Every change made through the API, newest first. Filters: `action`, `from`/`to` (inclusive, ISO 8601 with zone). `limit` 1-200 (default 50), `offset`. Entries are never changed or deleted. Owners and admins, or an `admin` key.',
      querystring: Type.Object({
        action: Type.Optional(Type.String({ maxLength: 100 })),
        from: Type.Optional(Type.String(TIMESTAMP)),
        to: Type.Optional(Type.String(TIMESTAMP)),
        ...Paging,
      }),
      response: {
        200: ListOf(AuditEntry, 'AuditLog', 'Entries matching the filters, over all pages'),
        ...errorResponses(400, 401, 403),
      },
    },
    handler: (req) => service.list(tenantOf(req), req.query),
  });
}
