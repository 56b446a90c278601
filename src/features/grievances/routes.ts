// Grievance HTTP routes: schema, access rule, one service call each.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actingOf, tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { GrievanceService } from './service.js';
import {
  CreateGrievanceBody,
  GrievanceList,
  GrievanceSummary,
  GrievanceTicket,
  GrievanceMessage,
  GrievanceWithHistory,
  ListGrievancesQuery,
  MessageBody,
  PrincipalGrievanceBody,
  PrincipalGrievanceWithHistory,
  StatusChange,
  StatusChangeBody,
  TicketParams,
  UpdateGrievanceBody,
  UserParams,
} from './schemas.js';

const access = { apiKey: 'grievances' } as const;
const common = { tags: ['Grievances'], security: [{ ApiKey: [] }] };

// Organization management: members read, owners and admins change; a grievances key does both.
const readAccess = { apiKey: 'grievances', bearer: ['owner', 'admin', 'member'] } as const;
const changeAccess = { apiKey: 'grievances', bearer: ['owner', 'admin'] } as const;
const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const management = { tags: ['Grievances'], security };

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
    config: { access, idempotent: true },
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

  r.get('/api/v1/grievances', {
    config: { access: readAccess },
    schema: {
      ...management,
      summary: "The organization's grievance tickets",
      description:
        'Every ticket of the organization, newest first (`created_at`, then `id`, descending) unless `sort` (`created_at` or `updated_at`) and `order` (`desc` or `asc`) say otherwise. Filters: `status`, `category`, `client_user_id`, `from`/`to` (bound `created_at` inclusively; ISO 8601 with a time zone; `to` before `from`: 400). `limit` 1-200 (default 50), `offset` (default 0); `count` is the number of matching tickets. Bearer token of an owner, admin or member, or a `grievances` (or `admin`) key.',
      querystring: ListGrievancesQuery,
      response: { 200: GrievanceList, ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.list(tenantOf(req), req.query),
  });

  r.get('/api/v1/grievances/summary', {
    config: { access: readAccess },
    schema: {
      ...management,
      summary: 'Ticket counts for the overview',
      description:
        'How many tickets the organization has in each status, and how many open ones (status `open`, `in_progress` or `on_hold`) in each category. Every status and category is listed, zero included. Bearer token of an owner, admin or member, or a `grievances` (or `admin`) key.',
      response: { 200: GrievanceSummary, ...errorResponses(401, 403) },
    },
    handler: (req) => service.summary(tenantOf(req)),
  });

  r.get('/api/v1/grievances/:ticket_id', {
    config: { access: readAccess },
    schema: {
      ...management,
      summary: 'A grievance ticket with its history',
      description: 'The ticket and `history`, its status changes oldest first (with notes). Bearer token of an owner, admin or member, or a `grievances` (or `admin`) key.',
      params: TicketParams,
      response: { 200: GrievanceWithHistory, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.get(tenantOf(req), req.params.ticket_id),
  });

  r.post('/api/v1/grievances/:ticket_id/status', {
    config: { access: changeAccess },
    schema: {
      ...management,
      summary: "Change a ticket's status, with a note",
      description:
        'Any status may move to any other; the change is appended to the ticket history with the optional `note` (at most 2,000 characters). The ticket\'s current status again: 409, nothing changes. Answers the updated ticket. Bearer token of an owner or admin, or a `grievances` (or `admin`) key.',
      params: TicketParams,
      body: StatusChangeBody,
      response: { 200: GrievanceTicket, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => service.changeStatus(tenantOf(req), req.params.ticket_id, req.body),
  });

  // The conversation on a ticket, organization side: a grievances key, or any member's token.
  const conversation = { apiKey: 'grievances', bearer: ['owner', 'admin', 'member'] } as const;

  r.get('/grievance/:ticket_id/messages', {
    config: { access: conversation },
    schema: {
      ...management,
      summary: 'The conversation on a ticket',
      description:
        'Every message, oldest first: `user` from the data principal, `agent` from the organization, `system` for each status change. Append-only. A `grievances` (or `admin`) key, or the Bearer token of any member.',
      params: TicketParams,
      response: { 200: Type.Array(GrievanceMessage), ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.messages(tenantOf(req), req.params.ticket_id),
  });

  r.post('/grievance/:ticket_id/messages', {
    config: { access: conversation, idempotent: true },
    schema: {
      ...management,
      summary: 'Answer on a ticket',
      description:
        '`{message, attachment_url?}` (1-5,000 characters): appended with sender `agent`. The data principal is told by SMS (or email when no phone is on file) with a link to their Rights Center and the contact person; the message itself is not sent. A `grievances` (or `admin`) key, or the Bearer token of any member.',
      params: TicketParams,
      body: MessageBody,
      response: { 201: GrievanceMessage, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.postMessage(tenantOf(req), req.params.ticket_id, req.body)),
  });
}

const principal = { tags: ['Data principal (me)'], security: [{ DataPrincipal: [] }] };

/** A data principal's own tickets and their conversations, with their token (contract §7). */
export function principalGrievanceRoutes(app: FastifyInstance, service: GrievanceService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  // The person's token, or their nominee's acting for them (issue 33): filed and followed for the person, the nominee recorded as the actor.
  const access = { dataPrincipal: true, nominee: true } as const;

  r.get('/api/v1/me/grievances', {
    config: { access },
    schema: {
      ...principal,
      summary: 'My tickets',
      description: 'Every ticket filed for me, newest first; an empty array when there are none. `Authorization: Bearer dpt_…`.',
      response: { 200: Type.Array(GrievanceTicket), ...errorResponses(401, 403) },
    },
    handler: (req) => service.mine(actingOf(req)),
  });

  r.post('/api/v1/me/grievances', {
    config: { access, idempotent: true },
    schema: {
      ...principal,
      summary: 'File a ticket',
      description:
        'A grievance or rights request (access, correction, erasure, nomination, withdrawal are categories) filed by me: `client_user_id` is the token\'s `dp_id`, never taken from the body; status `open`. `Authorization: Bearer dpt_…`.',
      body: PrincipalGrievanceBody,
      response: { 201: GrievanceTicket, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.fileMine(actingOf(req), req.body)),
  });

  r.get('/api/v1/me/grievances/:ticket_id', {
    config: { access },
    schema: {
      ...principal,
      summary: 'One of my tickets, with its history',
      description: 'The ticket and `history`, its status changes oldest first (without who made them or internal notes). Another person\'s ticket: 404. `Authorization: Bearer dpt_…`.',
      params: TicketParams,
      response: { 200: PrincipalGrievanceWithHistory, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.getMine(actingOf(req), req.params.ticket_id),
  });

  r.get('/api/v1/me/grievances/:ticket_id/messages', {
    config: { access },
    schema: {
      ...principal,
      summary: 'The conversation on my ticket',
      description: 'Every message, oldest first (`user`: mine, `agent`: the organization, `system`: status changes). Another person\'s ticket: 404. `Authorization: Bearer dpt_…`.',
      params: TicketParams,
      response: { 200: Type.Array(GrievanceMessage), ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.myMessages(actingOf(req), req.params.ticket_id),
  });

  r.post('/api/v1/me/grievances/:ticket_id/messages', {
    config: { access, idempotent: true },
    schema: {
      ...principal,
      summary: 'Write on my ticket',
      description: '`{message, attachment_url?}` (1-5,000 characters): appended with sender `user`. Another person\'s ticket: 404. `Authorization: Bearer dpt_…`.',
      params: TicketParams,
      body: MessageBody,
      response: { 201: GrievanceMessage, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.postMyMessage(actingOf(req), req.params.ticket_id, req.body)),
  });
}
