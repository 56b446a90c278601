// Grievance HTTP routes: schema, access rule, one service call each.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { GrievanceService } from './service.js';
import { CreateGrievanceBody, GrievanceTicket, StatusChange, TicketParams, UpdateGrievanceBody, UserParams } from './schemas.js';

const access = { apiKey: 'grievances' } as const;
const common = { tags: ['Grievances'], security: [{ ApiKey: [] }] };

export function grievanceRoutes(app: FastifyInstance, service: GrievanceService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/grievance/user/:user_id', {
    config: { access },
    schema: {
      ...common,
      summary: "List a user's grievance tickets",
      description: 'All tickets filed for this client_user_id, newest first (created_at descending); an empty array when there are none. Scope: `grievances` or `admin`.',
      params: UserParams,
      response: { 200: Type.Array(GrievanceTicket), ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.listForUser(tenantOf(req), req.params.user_id),
  });

  r.post('/grievance', {
    config: { access },
    schema: {
      ...common,
      summary: 'Create a grievance ticket',
      description: 'The service generates `ticket_id` and sets `status` to `open` (a `status` in the body is refused). Unknown fields are refused. Scope: `grievances` or `admin`.',
      body: CreateGrievanceBody,
      response: { 201: GrievanceTicket, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.create(tenantOf(req), req.body)),
  });

  r.put('/grievance/:ticket_id', {
    config: { access },
    schema: {
      ...common,
      summary: 'Update a grievance ticket',
      description: 'Change `status` (any status may move to any other) and/or `attachment_url` (`null` clears it). At least one is required; omitted fields are kept; `updated_at` always changes. A status change is appended to the ticket history. Scope: `grievances` or `admin`.',
      params: TicketParams,
      body: UpdateGrievanceBody,
      response: { 200: GrievanceTicket, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.update(tenantOf(req), req.params.ticket_id, req.body),
  });

  r.get('/grievance/:ticket_id/history', {
    config: { access },
    schema: {
      ...common,
      summary: "A ticket's status history",
      description: 'Every status the ticket has had, oldest first, with who changed it. Creation is the first entry (`previous_status` null). Append-only. Scope: `grievances` or `admin`.',
      params: TicketParams,
      response: { 200: Type.Array(StatusChange), ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.history(tenantOf(req), req.params.ticket_id),
  });
}
