// Nominee HTTP routes: schema, access rule, one service call each.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf, tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { NomineeService } from './service.js';
import {
  CreateNomineeBody,
  DeletedMessage,
  ListNomineesQuery,
  MyNomineeBody,
  MyNomineeUpdateBody,
  NomineeList,
  NomineeParams,
  UpdateNomineeBody,
  UserNominee,
  UserParams,
} from './schemas.js';

const access = { apiKey: 'nominees' } as const;
const common = { tags: ['Nominees'], security: [{ ApiKey: [] }] };

// Organization management: members read, owners and admins decide; a nominees key does both.
const readAccess = { apiKey: 'nominees', bearer: ['owner', 'admin', 'member'] } as const;
const decideAccess = { apiKey: 'nominees', bearer: ['owner', 'admin'] } as const;
const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const management = { tags: ['Nominees'], security };

export function nomineeRoutes(app: FastifyInstance, service: NomineeService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/nominee/user/:user_id', {
    config: { access },
    schema: {
      ...common,
      summary: "List a data principal's nominees",
      description: 'Newest first (created_at descending); an empty array when there are none. Scope: `nominees` or `admin`.',
      params: UserParams,
      response: { 200: Type.Array(UserNominee), ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.listForUser(tenantOf(req), req.params.user_id),
  });

  r.post('/nominee', {
    config: { access, idempotent: true },
    schema: {
      ...common,
      summary: 'Appoint a nominee',
      description:
        'Status is always `pending` and `verified_at` null on creation. `nominee_email` is stored lower-cased; `nominee_mobile` normalised to E.164 (a bare 10-digit number gets `+91`). Unknown fields are refused. Scope: `nominees` or `admin`.',
      body: CreateNomineeBody,
      response: { 201: UserNominee, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.create(tenantOf(req), req.body)),
  });

  r.put('/nominee/:nominee_id', {
    config: { access },
    schema: {
      ...common,
      summary: 'Update a nominee',
      description:
        'Any of the accepted fields; at least one. `purpose_of_appointment: null` clears it. `verified_at` is set when `status` becomes `verified`, kept while it stays so, and cleared when it leaves. Scope: `nominees` or `admin`.',
      params: NomineeParams,
      body: UpdateNomineeBody,
      response: { 200: UserNominee, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.update(tenantOf(req), req.params.nominee_id, req.body),
  });

  r.delete('/nominee/:nominee_id', {
    config: { access },
    schema: {
      ...common,
      summary: 'Remove a nominee permanently',
      description: 'Cannot be undone. Scope: `nominees` or `admin`.',
      params: NomineeParams,
      response: { 200: DeletedMessage, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.remove(tenantOf(req), req.params.nominee_id),
  });

  r.get('/api/v1/nominees', {
    config: { access: readAccess },
    schema: {
      ...management,
      summary: "The organization's nominees",
      description:
        'Every nominee of the organization, newest first (`created_at`, then `id`, descending), filtered by `status`, `relationship` and `client_user_id` when given. `limit` 1-200 (default 50), `offset` (default 0); `count` is the number of matching nominees. Bearer token of an owner, admin or member, or a `nominees` (or `admin`) key.',
      querystring: ListNomineesQuery,
      response: { 200: NomineeList, ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.list(tenantOf(req), req.query),
  });

  r.post('/api/v1/nominees/:nominee_id/verify', {
    config: { access: decideAccess },
    schema: {
      ...management,
      summary: 'Verify a nominee',
      description:
        'Sets `status` to `verified` (again is accepted); `verified_at` is set now, or kept when the nominee was already verified. No body. Answers the updated nominee. Bearer token of an owner or admin, or a `nominees` (or `admin`) key.',
      params: NomineeParams,
      response: { 200: UserNominee, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.verify(tenantOf(req), req.params.nominee_id),
  });

  r.post('/api/v1/nominees/:nominee_id/reject', {
    config: { access: decideAccess },
    schema: {
      ...management,
      summary: 'Reject a nominee',
      description:
        'Sets `status` to `rejected` (again is accepted); `verified_at` goes back to null. No body. Answers the updated nominee. Bearer token of an owner or admin, or a `nominees` (or `admin`) key.',
      params: NomineeParams,
      response: { 200: UserNominee, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.reject(tenantOf(req), req.params.nominee_id),
  });
}

const principal = { tags: ['Data principal (me)'], security: [{ DataPrincipal: [] }] };

/** A data principal's own nominees, with their token (contract §7): the organization's rules, bound to their dp_id. */
export function principalNomineeRoutes(app: FastifyInstance, service: NomineeService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const access = { dataPrincipal: true } as const;
  // The nominee routes' id parameter, under /api/v1/me.
  const MyNomineeParams = Type.Object({ id: NomineeParams.properties.nominee_id });

  r.get('/api/v1/me/nominees', {
    config: { access },
    schema: {
      ...principal,
      summary: 'My nominees',
      description: 'Newest first; an empty array when there are none. `Authorization: Bearer dpt_…`.',
      response: { 200: Type.Array(UserNominee), ...errorResponses(401, 403) },
    },
    handler: (req) => service.mine(principalOf(req)),
  });

  r.post('/api/v1/me/nominees', {
    config: { access, idempotent: true },
    schema: {
      ...principal,
      summary: 'Appoint a nominee',
      description:
        'A nominee for me (`client_user_id` is the token\'s `dp_id`, never taken from the body): status `pending` until the organization verifies it. `nominee_email` is stored lower-cased, `nominee_mobile` normalised to E.164. `Authorization: Bearer dpt_…`.',
      body: MyNomineeBody,
      response: { 201: UserNominee, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.appointMine(principalOf(req), req.body)),
  });

  r.patch('/api/v1/me/nominees/:id', {
    config: { access },
    schema: {
      ...principal,
      summary: 'Change a nominee of mine',
      description:
        'Any of the fields, at least one; `purpose_of_appointment: null` clears it. `status` is the organization\'s to set (refused here); a change of name, email, mobile or relationship sends a verified or rejected nominee back to `pending`. Another person\'s nominee: 404. `Authorization: Bearer dpt_…`.',
      params: MyNomineeParams,
      body: MyNomineeUpdateBody,
      response: { 200: UserNominee, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.changeMine(principalOf(req), req.params.id, req.body),
  });

  r.delete('/api/v1/me/nominees/:id', {
    config: { access },
    schema: {
      ...principal,
      summary: 'Remove a nominee of mine',
      description: 'Permanently. Another person\'s nominee: 404. `Authorization: Bearer dpt_…`.',
      params: MyNomineeParams,
      response: { 200: DeletedMessage, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.removeMine(principalOf(req), req.params.id),
  });
}
