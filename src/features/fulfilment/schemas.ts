// Fulfilment schemas: the data map (systems, data categories, the s.11 summary) and the tasks of a
// rights request with their lease API. One schema per route part; they drive validation,
// serialization and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { ListOf, Nullable, NullableTimestamp, Paging, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const TASK_KINDS = ['access', 'correction', 'erasure'] as const;
export const TASK_STATUSES = ['queued', 'leased', 'done', 'failed'] as const;
export const TASK_MODES = ['automatic', 'manual'] as const;
export const SYSTEM_STATUSES = ['active', 'archived'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];

const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options });
const Names = (max: number, description: string) => Type.Array(Text(255), { maxItems: max, uniqueItems: true, description });

// ---- Data categories -------------------------------------------------------------------------------

const CategoryKey = Type.String({
  minLength: 2,
  maxLength: 63,
  pattern: '^[a-z][a-z0-9_]{1,62}$',
  'x-message': 'must be 2-63 characters of a-z, 0-9 and _, starting with a letter',
  examples: ['contact_details'],
});

export const DataCategory = Type.Object(
  {
    id: Uuid(),
    key: Type.String({ description: 'Your stable name for the category (unique in the organization)' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    purposes: Type.Array(Type.String(), { description: 'What the data is used for (DPDP s.11(1)(a))' }),
    retention_days: Nullable(Type.Integer(), { description: 'Retention hold: an erasure keeps the data this many days after the request (DPDP Rule 8(3), sector law); null: no hold' }),
    retention_basis: Nullable(Type.String(), { description: 'Why the data is kept (shown to the person)' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'DataCategory' },
);

const categoryFields = {
  name: Text(255),
  description: Type.Optional(Nullable(Text(2000))),
  purposes: Type.Optional(Names(50, 'What the data is used for')),
  retention_days: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 36500 }))),
  retention_basis: Type.Optional(Nullable(Text(500))),
};

export const CreateCategoryBody = Type.Object({ key: CategoryKey, ...categoryFields }, { additionalProperties: false });
export type CreateCategoryInput = Static<typeof CreateCategoryBody>;

export const UpdateCategoryBody = Type.Object(
  {
    name: Type.Optional(categoryFields.name),
    description: categoryFields.description,
    purposes: categoryFields.purposes,
    retention_days: categoryFields.retention_days,
    retention_basis: categoryFields.retention_basis,
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateCategoryInput = Static<typeof UpdateCategoryBody>;

export const CategoryList = ListOf(DataCategory, 'DataCategoryList');
export const ListQuery = Type.Object(Paging, { additionalProperties: false });

// ---- Systems -----------------------------------------------------------------------------------------

export const System = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    owner: Type.String({ description: 'Who answers for it (a team or a person)' }),
    description: Nullable(Type.String()),
    category_ids: Type.Array(Uuid(), { description: 'The data categories it holds' }),
    processors: Type.Array(Type.String(), { description: 'The processors it shares the data with (DPDP s.11(1)(b))' }),
    can_access: Type.Boolean({ description: 'It answers access requests itself (otherwise its access tasks are manual)' }),
    can_correct: Type.Boolean({ description: 'It answers correction requests itself' }),
    can_erase: Type.Boolean({ description: 'It answers erasure requests itself' }),
    status: Type.Unsafe<(typeof SYSTEM_STATUSES)[number]>({ type: 'string', enum: [...SYSTEM_STATUSES], description: 'archived: no new tasks' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'System' },
);

const systemFields = {
  owner: Text(255),
  description: Type.Optional(Nullable(Text(2000))),
  category_ids: Type.Optional(Type.Array(Uuid(), { maxItems: 100, uniqueItems: true })),
  processors: Type.Optional(Names(50, 'Processors it shares the data with')),
  can_access: Type.Optional(Type.Boolean()),
  can_correct: Type.Optional(Type.Boolean()),
  can_erase: Type.Optional(Type.Boolean()),
};

export const CreateSystemBody = Type.Object({ name: Text(255), ...systemFields }, { additionalProperties: false });
export type CreateSystemInput = Static<typeof CreateSystemBody>;

export const UpdateSystemBody = Type.Object(
  {
    name: Type.Optional(Text(255)),
    owner: Type.Optional(systemFields.owner),
    description: systemFields.description,
    category_ids: systemFields.category_ids,
    processors: systemFields.processors,
    can_access: systemFields.can_access,
    can_correct: systemFields.can_correct,
    can_erase: systemFields.can_erase,
    status: Type.Optional(Type.Unsafe<(typeof SYSTEM_STATUSES)[number]>({ type: 'string', enum: [...SYSTEM_STATUSES] })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateSystemInput = Static<typeof UpdateSystemBody>;

export const SystemList = ListOf(System, 'SystemList');
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const CreateSystemKeyBody = Type.Object({ name: Type.Optional(Text(255)) }, { additionalProperties: false });
export const SystemKey = Type.Object(
  {
    id: Uuid({ description: 'The API key id (revoke it like any key)' }),
    key: Type.String({ description: 'The plaintext key, shown once: send it as X-API-Key' }),
    prefix: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    system_id: Uuid(),
    created_at: Timestamp(),
  },
  { title: 'SystemKey' },
);

// ---- The s.11 summary --------------------------------------------------------------------------------

export const DataSummary = Type.Object(
  {
    organization: Type.Object({ slug: Type.String(), name: Type.String() }),
    categories: Type.Array(
      Type.Object({
        key: Type.String(),
        name: Type.String(),
        description: Nullable(Type.String()),
        purposes: Type.Array(Type.String()),
        systems: Type.Array(Type.String(), { description: 'Names of the systems that hold it' }),
        shared_with: Type.Array(Type.String(), { description: 'Processors those systems share it with' }),
        retention: Nullable(Type.Object({ days: Type.Integer(), basis: Type.String() })),
      }),
    ),
    shared_with: Type.Array(Type.String(), { description: 'Every processor, once' }),
    generated_at: Timestamp(),
  },
  { title: 'DataSummary', description: 'What is held, what it is used for, and with whom it is shared (DPDP s.11)' },
);

// ---- Tasks -------------------------------------------------------------------------------------------

export const Task = Type.Object(
  {
    id: Uuid(),
    ticket_id: Type.String({ description: 'The rights request (grievance ticket) it belongs to' }),
    system_id: Uuid(),
    system_name: Type.String(),
    kind: Type.Unsafe<TaskKind>({ type: 'string', enum: [...TASK_KINDS] }),
    dp_id: Type.String({ description: 'The data principal the request is about' }),
    category_keys: Type.Array(Type.String(), { description: "The data categories the system holds (what to look for)" }),
    mode: Type.Unsafe<(typeof TASK_MODES)[number]>({ type: 'string', enum: [...TASK_MODES], description: 'automatic: the system takes it; manual: a member does it' }),
    status: Type.Unsafe<TaskStatus>({
      type: 'string',
      enum: [...TASK_STATUSES],
      description: '`leased` only while its lease runs: a task whose lease ended is shown `queued` (it is claimable again)',
    }),
    attempts: Type.Integer({ description: 'How many times it was claimed' }),
    lease_expires_at: NullableTimestamp('While leased: when the lease ends unless renewed'),
    result: Nullable(Type.Object({}, { additionalProperties: true }), { description: 'What the system reported when it completed the task' }),
    failure_reason: Nullable(Type.String()),
    holds: Type.Array(
      Type.Object({ category_key: Type.String(), category_name: Type.String(), until: Timestamp(), basis: Type.String() }),
      { description: 'Erasure: data the system keeps under a retention hold (DPDP Rule 8(3), sector law), and until when; erase the rest' },
    ),
    not_before: NullableTimestamp('A scheduled erasure: not claimable or reported before this time (the person was told at least 48 hours ahead)'),
    blocked_by: Nullable(Type.String({ description: 'What the task waits for, in words: the system, a member, or a retry' })),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    completed_at: NullableTimestamp(),
  },
  { title: 'FulfilmentTask' },
);

export const LeasedTask = Type.Object(
  { ...Task.properties, lease_id: Type.String({ description: 'Send it with heartbeat, complete and fail: it proves the lease is still yours' }) },
  { title: 'LeasedTask' },
);

export const ClaimBody = Type.Object(
  {
    system_id: Type.Optional(Uuid({ description: "The system claiming; a system key's own system when omitted (required with any other key)" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 1 })),
    lease_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, default: 300 })),
  },
  { additionalProperties: false },
);
export type ClaimInput = Static<typeof ClaimBody>;
export const ClaimResult = Type.Object({ data: Type.Array(LeasedTask) }, { title: 'ClaimResult' });

const LeaseId = Type.String({ minLength: 1, maxLength: 64, pattern: '^lse_[A-Za-z0-9]+$', 'x-message': 'must be the lease_id the claim returned', examples: ['lse_0b5e6f3a9c2d4e1f8a7b6c5d4e3f2a1b'] });

export const HeartbeatBody = Type.Object(
  { lease_id: LeaseId, lease_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, default: 300 })) },
  { additionalProperties: false },
);
export type HeartbeatInput = Static<typeof HeartbeatBody>;

export const CompleteBody = Type.Object(
  {
    lease_id: Type.Optional(LeaseId),
    result: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'What was done or found (free JSON, kept with the task)' })),
  },
  { additionalProperties: false },
);
export type CompleteInput = Static<typeof CompleteBody>;

export const FailBody = Type.Object({ lease_id: Type.Optional(LeaseId), reason: Text(1000) }, { additionalProperties: false });
export type FailInput = Static<typeof FailBody>;

export const ListTasksQuery = Type.Object(
  {
    status: Type.Optional(Type.Unsafe<TaskStatus>({ type: 'string', enum: [...TASK_STATUSES] })),
    system_id: Type.Optional(Uuid()),
    ticket_id: Type.Optional(Type.String({ maxLength: 64 })),
    ...Paging,
  },
  { additionalProperties: false },
);
export type ListTasksInput = Static<typeof ListTasksQuery>;
export const TaskList = ListOf(Task, 'FulfilmentTaskList');

export const ScheduleErasureBody = Type.Object(
  {
    dp_id: Text(255, { description: 'The data principal whose data is erased' }),
    erase_at: Type.String({ format: 'date-time', description: 'When: at least 48 hours from now (DPDP Rule 8(2)); the person is told now' }),
    reason: Text(1000, { description: 'Why, in words the person reads (e.g. the purpose is no longer served)' }),
  },
  { additionalProperties: false },
);
export type ScheduleErasureInput = Static<typeof ScheduleErasureBody>;

export const TicketParams = Type.Object({ ticket_id: Type.String({ maxLength: 64 }) });

export const Transition = Type.Object(
  {
    task_id: Uuid(),
    system_id: Uuid(),
    action: Type.String(),
    status: Type.String(),
    actor: Type.Object({ type: Type.String(), id: Type.String() }),
    detail: Nullable(Type.String()),
    at: Timestamp(),
  },
  { title: 'FulfilmentTransition' },
);

const PART_NAME = {
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]*$',
  'x-message': 'must be 1-100 characters of A-Z, a-z, 0-9, ., _ and -, not starting with a dot',
  examples: ['orders.json'],
};

export const Part = Type.Object(
  {
    id: Uuid(),
    task_id: Uuid(),
    ticket_id: Type.String(),
    system_id: Uuid(),
    system_name: Type.String(),
    name: Type.String(),
    content_type: Type.String(),
    size: Type.Integer({ description: 'Bytes' }),
    sha256: Type.String({ description: 'SHA-256 (hex) of the content as attached' }),
    created_at: Timestamp(),
    erased_at: NullableTimestamp('When the content was erased (14 days after its package was made)'),
  },
  { title: 'FulfilmentPart' },
);

export const PartJsonBody = Type.Object(
  {
    name: Type.String(PART_NAME),
    data: Type.Unknown({ description: 'The JSON to deliver (any JSON value)' }),
    lease_id: Type.Optional(LeaseId),
  },
  { additionalProperties: false },
);
export type PartJsonInput = Static<typeof PartJsonBody>;

export const PartFileParams = Type.Object({ id: Type.String({ maxLength: 64 }), name: Type.String(PART_NAME) });
export const PartFileQuery = Type.Object(
  {
    lease_id: Type.Optional(LeaseId),
    content_type: Type.Optional(Type.String({ maxLength: 127, pattern: '^[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+$', 'x-message': 'must be a MIME type such as text/csv' })),
  },
  { additionalProperties: false },
);

export const AccessPackage = Type.Object(
  {
    id: Uuid(),
    ticket_id: Type.String(),
    status: Type.Unsafe<'available' | 'expired'>({ type: 'string', enum: ['available', 'expired'], description: 'expired: past its 14 days, content erased' }),
    created_at: Timestamp(),
    expires_at: Timestamp(),
    erased_at: NullableTimestamp(),
    downloads: Type.Integer(),
    files: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer(), sha256: Type.String() }), { description: 'As in the signed manifest' }),
  },
  { title: 'AccessPackage' },
);
export const PackageParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const TicketFulfilment = Type.Object(
  {
    ticket_id: Type.String(),
    status: Type.Unsafe<'none' | 'in_progress' | 'waiting' | 'done'>({
      type: 'string',
      enum: ['none', 'in_progress', 'waiting', 'done'],
      description: 'none: no tasks; in_progress: systems are working; waiting: a task failed or waits for a member; done: every task is done',
    }),
    tasks: Type.Array(Task),
    transitions: Type.Array(Transition, { description: 'Every task transition, oldest first' }),
    parts: Type.Array(Part, { description: "The systems' parts of an access request (content never shown here)" }),
    retention_holds: Type.Array(
      Type.Object({ category_key: Type.String(), category_name: Type.String(), until: Timestamp(), basis: Type.String(), systems: Type.Array(Type.String()) }),
      { description: 'Erasure: what is kept, where, until when and why (the person is told the same on the ticket)' },
    ),
    package: Nullable(AccessPackage, { description: 'The access package, once every task is done' }),
  },
  { title: 'TicketFulfilment' },
);
