// Fulfilment HTTP routes: the data map (systems, data categories, the s.11 summary), a request's tasks
// and the lease API systems poll. Schema, access rule, one service call each.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actingOf, tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { FulfilmentService } from './service.js';
import {
  CategoryList,
  ClaimBody,
  ClaimResult,
  CompleteBody,
  CreateCategoryBody,
  CreateSystemBody,
  CreateSystemKeyBody,
  DataCategory,
  DataSummary,
  FailBody,
  HeartbeatBody,
  IdParams,
  ListQuery,
  ListTasksQuery,
  System,
  SystemKey,
  SystemList,
  Task,
  TaskList,
  TicketFulfilment,
  TicketParams,
  UpdateCategoryBody,
  UpdateSystemBody,
  AccessPackage,
  PackageParams,
  Part,
  PartFileParams,
  PartFileQuery,
  PartJsonBody,
  ScheduleErasureBody,
} from './schemas.js';
import { AppError } from '../../platform/http/errors.js';

const security: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const readAccess = { apiKey: 'admin', bearer: ['owner', 'admin', 'member'] } as const;
const writeAccess = { apiKey: 'admin', bearer: ['owner', 'admin'] } as const;
const readWho = 'An `admin` key, or the Bearer token of any member.';
const writeWho = 'An `admin` key, or the Bearer token of an owner or admin.';
const map = { tags: ['Data map'], security };
const tasks = { tags: ['Fulfilment'], security };
const Deleted = Type.Object({ message: Type.String() });
const Settings = Type.Object(
  {
    erase_on_withdrawal: Type.Boolean({ description: 'A consent withdrawal files an erasure request for the data held for the withdrawn purposes' }),
    nominees_may_act: Type.Boolean({ description: "A verified nominee may act for the person who appointed them (download their access packages, file and follow their requests)" }),
  },
  { title: 'FulfilmentSettings' },
);
const SettingsChange = Type.Object(
  { erase_on_withdrawal: Type.Optional(Settings.properties.erase_on_withdrawal), nominees_may_act: Type.Optional(Settings.properties.nominees_may_act) },
  { additionalProperties: false, minProperties: 1, title: 'FulfilmentSettingsChange', description: 'The settings to change (at least one); the others are kept' },
);

export function dataMapRoutes(app: FastifyInstance, service: FulfilmentService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/api/v1/data-categories', {
    config: { access: writeAccess, idempotent: true },
    schema: {
      ...map,
      summary: 'Declare a data category',
      description: `A kind of personal data the organization holds (\`key\` unique), what it is used for, and its retention hold: \`retention_days\` with \`retention_basis\` (DPDP Rule 8(3): traffic data and logs at least 365 days; sector law), together or not at all. ${writeWho}`,
      body: CreateCategoryBody,
      response: { 201: DataCategory, ...errorResponses(400, 401, 403, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.createCategory(tenantOf(req), req.body)),
  });

  r.get('/api/v1/data-categories', {
    config: { access: readAccess },
    schema: { ...map, summary: 'List data categories', description: `By key. ${readWho}`, querystring: ListQuery, response: { 200: CategoryList, ...errorResponses(400, 401, 403) } },
    handler: (req) => service.listCategories(tenantOf(req), req.query),
  });

  r.get('/api/v1/data-categories/:id', {
    config: { access: readAccess },
    schema: { ...map, summary: 'Get a data category', description: readWho, params: IdParams, response: { 200: DataCategory, ...errorResponses(401, 403, 404) } },
    handler: (req) => service.getCategory(tenantOf(req), req.params.id),
  });

  r.patch('/api/v1/data-categories/:id', {
    config: { access: writeAccess },
    schema: {
      ...map,
      summary: 'Change a data category',
      description: `Any field but \`key\`; \`null\` clears a nullable one (both retention fields at once). ${writeWho}`,
      params: IdParams,
      body: UpdateCategoryBody,
      response: { 200: DataCategory, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.updateCategory(tenantOf(req), req.params.id, req.body),
  });

  r.delete('/api/v1/data-categories/:id', {
    config: { access: writeAccess },
    schema: {
      ...map,
      summary: 'Remove a data category',
      description: `Only while no system holds it (409 otherwise). ${writeWho}`,
      params: IdParams,
      response: { 200: Deleted, ...errorResponses(401, 403, 404, 409) },
    },
    handler: (req) => service.removeCategory(tenantOf(req), req.params.id),
  });

  r.post('/api/v1/systems', {
    config: { access: writeAccess, idempotent: true },
    schema: {
      ...map,
      summary: 'Register a system',
      description: `A system that holds personal data: its owner, the data categories it holds, the processors it shares them with, and which requests it answers itself (\`can_access\`, \`can_correct\`, \`can_erase\`; otherwise its tasks are manual). Every access, correction or erasure request filed from now on gives it a task. ${writeWho}`,
      body: CreateSystemBody,
      response: { 201: System, ...errorResponses(400, 401, 403, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.createSystem(tenantOf(req), req.body)),
  });

  r.get('/api/v1/systems', {
    config: { access: readAccess },
    schema: { ...map, summary: 'List systems', description: `By name. ${readWho}`, querystring: ListQuery, response: { 200: SystemList, ...errorResponses(400, 401, 403) } },
    handler: (req) => service.listSystems(tenantOf(req), req.query),
  });

  r.get('/api/v1/systems/:id', {
    config: { access: readAccess },
    schema: { ...map, summary: 'Get a system', description: readWho, params: IdParams, response: { 200: System, ...errorResponses(401, 403, 404) } },
    handler: (req) => service.getSystem(tenantOf(req), req.params.id),
  });

  r.patch('/api/v1/systems/:id', {
    config: { access: writeAccess },
    schema: {
      ...map,
      summary: 'Change a system',
      description: `Any field; \`status: "archived"\` stops new tasks (its open tasks stay). ${writeWho}`,
      params: IdParams,
      body: UpdateSystemBody,
      response: { 200: System, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => service.updateSystem(tenantOf(req), req.params.id, req.body),
  });

  r.post('/api/v1/systems/:id/keys', {
    config: { access: writeAccess },
    schema: {
      ...map,
      summary: 'Create a system key',
      description: `An API key with the \`fulfilment\` scope bound to this system: it claims, renews, completes and fails this system's tasks and sees no other system's. The plaintext is shown once; revoke it like any key. ${writeWho}`,
      params: IdParams,
      body: CreateSystemKeyBody,
      response: { 201: SystemKey, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.createSystemKey(tenantOf(req), req.params.id, req.body ?? {})),
  });

  r.get('/api/v1/fulfilment/settings', {
    config: { access: readAccess },
    schema: { ...tasks, summary: 'Fulfilment settings', description: readWho, response: { 200: Settings, ...errorResponses(401, 403) } },
    handler: (req) => service.settings(tenantOf(req)),
  });

  r.put('/api/v1/fulfilment/settings', {
    config: { access: writeAccess },
    schema: {
      ...tasks,
      summary: 'Change fulfilment settings',
      description: `The settings sent are changed, the others kept. \`erase_on_withdrawal\`: a consent withdrawal files an erasure request for the person, with a task for each system holding the data categories whose purposes name a withdrawn purpose (off by default). \`nominees_may_act\`: a nominee whose appointment is verified may act for the person who appointed them, with a token of their own (\`POST /rights/nominee/otp\`, or \`POST /api/v1/nominees/{nominee_id}/tokens\`): download their access packages, file and follow their requests; every act records the nominee (off by default; turning it off stops every nominee's token at once). ${writeWho}`,
      body: SettingsChange,
      response: { 200: Settings, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: (req) => service.changeSettings(tenantOf(req), req.body),
  });

  r.get('/api/v1/data-map/summary', {
    config: { access: readAccess },
    schema: {
      ...map,
      summary: 'The s.11 summary',
      description: `What the organization holds, what for, with whom it is shared and how long it is kept, from the data map: what a data principal is entitled to (DPDP s.11). ${readWho}`,
      response: { 200: DataSummary, ...errorResponses(401, 403) },
    },
    handler: (req) => service.summary(tenantOf(req)),
  });

  r.get('/api/v1/me/data-summary', {
    config: { access: { dataPrincipal: true, nominee: true } },
    schema: {
      tags: ['Data principal (me)'],
      security: [{ DataPrincipal: [] }],
      summary: 'What is held about me (DPDP s.11)',
      description: "The organization's s.11 summary: what is held, what for, with whom it is shared, how long it is kept. `Authorization: Bearer dpt_…`.",
      response: { 200: DataSummary, ...errorResponses(401, 403) },
    },
    handler: (req) => service.summaryMine(actingOf(req)),
  });
}

// Tasks: the organization reads them and does the manual ones; systems take theirs with a system key.
const taskRead = { apiKey: 'fulfilment', bearer: ['owner', 'admin', 'member'] } as const;
const taskReport = { apiKey: 'fulfilment', bearer: ['owner', 'admin'] } as const;
const systemOnly = { apiKey: 'fulfilment' } as const;
const T = '/api/v1/fulfilment/tasks';

export const DEFAULT_PART_MAX_BYTES = 25 * 1024 * 1024;

export function taskRoutes(app: FastifyInstance, service: FulfilmentService, partMaxBytes: number): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get(T, {
    config: { access: taskRead },
    schema: {
      ...tasks,
      summary: 'List tasks',
      description:
        'Newest first, filtered by `status`, `system_id`, `ticket_id`. A system key sees its own system\'s tasks only. A `fulfilment` (or `admin`) key, or the Bearer token of any member.',
      querystring: ListTasksQuery,
      response: { 200: TaskList, ...errorResponses(400, 401, 403) },
    },
    handler: (req) => service.list(tenantOf(req), req.query),
  });

  r.post(`${T}/claim`, {
    config: { access: systemOnly },
    schema: {
      ...tasks,
      security: [{ ApiKey: [] }],
      summary: 'Claim tasks (lease)',
      description:
        'Leases up to `limit` (1-50, default 1) of the system\'s oldest claimable automatic tasks for `lease_seconds` (10-3600, default 300): queued ones, and leased ones whose lease ended (a worker that died). Each comes with a `lease_id`; renew with heartbeat, finish with complete or fail. An empty `data` when there is nothing to do. A system key claims for its own system; an `admin` or unbound `fulfilment` key names `system_id`.',
      body: ClaimBody,
      response: { 200: ClaimResult, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: (req) => service.claim(tenantOf(req), req.body ?? {}),
  });

  r.get(`${T}/:id`, {
    config: { access: taskRead },
    schema: { ...tasks, summary: 'Get a task', description: 'With what blocks it. A `fulfilment` (or `admin`) key, or the Bearer token of any member.', params: IdParams, response: { 200: Task, ...errorResponses(401, 403, 404) } },
    handler: (req) => service.get(tenantOf(req), req.params.id),
  });

  r.post(`${T}/:id/heartbeat`, {
    config: { access: systemOnly },
    schema: {
      ...tasks,
      security: [{ ApiKey: [] }],
      summary: 'Renew a lease',
      description: 'Extends the lease by `lease_seconds` from now. 409 when the lease ended or is no longer yours. A `fulfilment` (or `admin`) key.',
      params: IdParams,
      body: HeartbeatBody,
      response: { 200: Task, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => service.heartbeat(tenantOf(req), req.params.id, req.body),
  });

  r.post(`${T}/:id/complete`, {
    config: { access: taskReport },
    schema: {
      ...tasks,
      summary: 'Report a task done',
      description:
        'With an optional `result` (JSON, kept with the task). A leased task needs its `lease_id` (409 when another claim holds it); a task a webhook announced is completed without one. Manual tasks are reported by members (or an `admin` key), not by system keys. When every task of the request is done, the ticket is resolved. A `fulfilment` (or `admin`) key, or the Bearer token of an owner or admin.',
      params: IdParams,
      body: CompleteBody,
      response: { 200: Task, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => service.complete(tenantOf(req), req.params.id, req.body ?? {}),
  });

  r.post(`${T}/:id/fail`, {
    config: { access: taskReport },
    schema: {
      ...tasks,
      summary: 'Report a task failed',
      description: 'With a `reason` (1-1000 characters) shown on the dashboard. A leased task needs its `lease_id`. A `fulfilment` (or `admin`) key, or the Bearer token of an owner or admin.',
      params: IdParams,
      body: FailBody,
      response: { 200: Task, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: (req) => service.fail(tenantOf(req), req.params.id, req.body),
  });

  r.post(`${T}/:id/retry`, {
    config: { access: writeAccess },
    schema: {
      ...tasks,
      summary: 'Retry a failed task',
      description: `Back to the queue (announced again by \`fulfilment.task_created\`). 409 unless it failed. ${writeWho}`,
      params: IdParams,
      response: { 200: Task, ...errorResponses(401, 403, 404, 409) },
    },
    handler: (req) => service.retry(tenantOf(req), req.params.id),
  });

  r.post(`${T}/:id/parts`, {
    // The person's data is delivered exactly as the system sent it.
    config: { access: taskReport, trimStrings: false, idempotent: true },
    schema: {
      ...tasks,
      summary: 'Attach a JSON part (access requests)',
      description:
        "The system's data for the person, as JSON (`data`, any JSON value, within the 256 KiB body limit; larger data as a file with `PUT …/parts/{name}`). Stored encrypted; it goes into the access package once every task is done. `name` once per task (409 again). A leased task needs its `lease_id`. A `fulfilment` (or `admin`) key, or the Bearer token of an owner or admin.",
      params: IdParams,
      body: PartJsonBody,
      response: { 201: Part, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
    },
    handler: async (req, reply) =>
      reply.code(201).send(
        await service.attachPart(tenantOf(req), req.params.id, { name: req.body.name, contentType: 'application/json', content: Buffer.from(JSON.stringify(req.body.data ?? null)), leaseId: req.body.lease_id }),
      ),
  });

  // Files come as application/octet-stream, up to FULFILMENT_PART_MAX_BYTES: a parser for this route only.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: partMaxBytes }, (_req, body, done) => done(null, body));
    scope.withTypeProvider<TypeBoxTypeProvider>().put(`${T}/:id/parts/:name`, {
      config: { access: taskReport, trimStrings: false },
      schema: {
        ...tasks,
        summary: 'Attach a file part (access requests)',
        description: `The system's data for the person as a file: the body is the file (\`Content-Type: application/octet-stream\`), up to FULFILMENT_PART_MAX_BYTES (default ${DEFAULT_PART_MAX_BYTES} bytes; 413 over it); \`content_type\` says what it is (default application/octet-stream). Stored encrypted, in chunks. A leased task needs \`lease_id\`. A \`fulfilment\` (or \`admin\`) key, or the Bearer token of an owner or admin.`,
        params: PartFileParams,
        querystring: PartFileQuery,
        response: { 201: Part, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
      handler: async (req, reply) => {
        if (!Buffer.isBuffer(req.body)) throw new AppError('unsupported_media_type', 'Send the file as the body with Content-Type: application/octet-stream');
        const part = await service.attachPart(tenantOf(req), req.params.id, {
          name: req.params.name,
          contentType: req.query.content_type ?? 'application/octet-stream',
          content: req.body,
          leaseId: req.query.lease_id,
        });
        return reply.code(201).send(part);
      },
    });
  });

  r.post('/api/v1/fulfilment/erasures', {
    config: { access: writeAccess, idempotent: true },
    schema: {
      ...tasks,
      summary: 'Schedule an erasure',
      description:
        "An erasure the organization decides itself (the purpose is no longer served): `erase_at` at least 48 hours from now (DPDP Rule 8(2); 400 otherwise). Files an erasure request for the person now, tells them on it and by message what will be erased and when, and creates its tasks, which no system can claim or report before `erase_at`. An `admin` key, or the Bearer token of an owner or admin.",
      body: ScheduleErasureBody,
      response: { 201: TicketFulfilment, ...errorResponses(400, 401, 403, 409, 413, 415) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.scheduleErasure(tenantOf(req), req.body)),
  });

  r.get('/api/v1/fulfilment/tickets/:ticket_id', {
    config: { access: { apiKey: 'grievances', bearer: ['owner', 'admin', 'member'] } },
    schema: {
      ...tasks,
      summary: "A request's tasks",
      description:
        "The ticket's tasks (one per system), what blocks each, every transition, and the fulfilment status: `in_progress`, `waiting` (a task failed or waits for a member), `done`, or `none`. A `grievances` (or `admin`) key, or the Bearer token of any member.",
      params: TicketParams,
      response: { 200: TicketFulfilment, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.forTicket(tenantOf(req), req.params.ticket_id),
  });

  r.post('/api/v1/fulfilment/tickets/:ticket_id/start', {
    config: { access: { apiKey: 'grievances', bearer: ['owner', 'admin'] } },
    schema: {
      ...tasks,
      summary: 'Accept a request: create its tasks',
      description:
        'For an access, portability, correction or erasure ticket that has no tasks (filed before its systems were registered): one task per active system holding data categories. 409 when it has tasks, is of another category, or no system qualifies. A `grievances` (or `admin`) key, or the Bearer token of an owner or admin.',
      params: TicketParams,
      response: { 200: TicketFulfilment, ...errorResponses(401, 403, 404, 409) },
    },
    handler: (req) => service.start(tenantOf(req), req.params.ticket_id),
  });
}

/** The person's access packages (contract §7 style: their token, only theirs). */
export function principalPackageRoutes(app: FastifyInstance, service: FulfilmentService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const me = { tags: ['Data principal (me)'], security: [{ DataPrincipal: [] }] };
  r.get('/api/v1/me/packages', {
    config: { access: { dataPrincipal: true, nominee: true } },
    schema: {
      ...me,
      summary: 'My access packages',
      description: 'Newest first: each with its files (from its signed manifest) and whether it can still be downloaded (14 days). `Authorization: Bearer dpt_…`: the person\'s token, or their nominee\'s where the organization lets nominees act.',
      response: { 200: Type.Array(AccessPackage), ...errorResponses(401, 403) },
    },
    handler: (req) => service.myPackages(actingOf(req)),
  });

  app.get<{ Params: { id: string } }>('/api/v1/me/packages/:id/download', {
    config: { access: { dataPrincipal: true, nominee: true } },
    schema: {
      ...me,
      summary: 'Download my access package',
      description:
        'A gzipped tar: summary.json (what is held, why, with whom), each system\'s data under systems/, manifest.json (every file\'s SHA-256) and manifest.jws (the manifest signed with the organization\'s key, verifiable with /.well-known/jwks.json). 410 once its 14 days are over (the content is erased). Every download is recorded, with who downloaded it (the person, or their nominee). `Authorization: Bearer dpt_…`: the person\'s token, or their nominee\'s where the organization lets nominees act.',
      params: PackageParams,
      response: {
        200: { description: 'The package (`Content-Disposition: attachment; filename="access-<ticket_id>.tar.gz"`)', content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } } },
        ...errorResponses(401, 403, 404, 410),
      },
    },
    handler: async (req, reply) => {
      const { filename, stream } = await service.downloadMine(actingOf(req), req.params.id);
      return reply.header('content-type', 'application/gzip').header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'no-store').send(stream);
    },
  });
}
