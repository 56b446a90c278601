// The organization's members, managed by its owners and admins (Bearer only: people manage people).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../platform/crypto/passwords.js';
import { Email, errorResponses, ListOf, Paging, Timestamp } from '../../platform/http/schema-kit.js';
import { ROLES } from './users.js';
import type { MemberService } from './members.js';

const RoleName = Type.Unsafe<(typeof ROLES)[number]>({ type: 'string', enum: [...ROLES] });

const Member = Type.Object(
  { user_id: Type.String({ format: 'uuid' }), email: Type.String(), role: RoleName, created_at: Timestamp('When the user joined') },
  { title: 'Member' },
);
const MemberParams = Type.Object({ user_id: Type.String({ description: "The member's user id; a malformed one is simply not found" }) });

const access = { bearer: ['owner', 'admin'] } as const;
const common = { tags: ['Organization'], security: [{ Bearer: [] }] };
const ownerRule = 'Only owners grant, change or take away the owner role; the last owner can be neither removed nor demoted (409).';

export function memberRoutes(app: FastifyInstance, members: MemberService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/api/v1/members', {
    config: { access },
    schema: {
      ...common,
      summary: 'List members',
      description: 'Members in the order they joined. `limit` 1-200 (default 50), `offset`. Owners and admins.',
      querystring: Type.Object(Paging),
      response: {
        200: ListOf(Member, 'MemberList', 'Members, over all pages'),
        ...errorResponses(400, 401, 403),
      },
    },
    handler: (req) => members.list(tenantOf(req), req.query),
  });

  r.post('/api/v1/members', {
    // The password is taken as typed; the other fields are trimmed below.
    config: { access, trimStrings: false },
    preValidation: async (req) => {
      const body = req.body as Record<string, unknown> | null;
      if (!body || typeof body !== 'object') return;
      for (const field of ['email', 'role']) if (typeof body[field] === 'string') body[field] = body[field].trim();
    },
    schema: {
      ...common,
      summary: 'Add a member',
      description: `Adds an existing user with this role; with \`password\`, creates the user first (409 if one exists). An unknown email without a password: 404. Already a member: 409. ${ownerRule} Owners and admins.`,
      body: Type.Object(
        {
          email: Email(),
          role: RoleName,
          password: Type.Optional(Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, description: 'Only to create a new user' })),
        },
        { additionalProperties: false },
      ),
      response: { 201: Member, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await members.add(tenantOf(req), req.body)),
  });

  r.patch('/api/v1/members/:user_id', {
    config: { access },
    schema: {
      ...common,
      summary: "Change a member's role",
      description: `Takes effect at once. Setting the role a member already has changes nothing. ${ownerRule} Owners and admins.`,
      params: MemberParams,
      body: Type.Object({ role: RoleName }, { additionalProperties: false }),
      response: { 200: Member, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => members.changeRole(tenantOf(req), req.params.user_id, req.body.role),
  });

  r.delete('/api/v1/members/:user_id', {
    config: { access },
    schema: {
      ...common,
      summary: 'Remove a member',
      description: `The user loses access to this organization at once; the user and their other memberships stay. 204. ${ownerRule} Owners and admins.`,
      params: MemberParams,
      response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses(401, 403, 404, 409) },
    },
    handler: async (req, reply) => {
      await members.remove(tenantOf(req), req.params.user_id);
      return reply.code(204).send(null);
    },
  });
}
