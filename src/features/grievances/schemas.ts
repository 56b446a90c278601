// Grievance ticket schemas: one per route part; they drive validation, serialization and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { HttpUrl, ListOf, Nullable, NullableTimestamp, Paging, PathText, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const GRIEVANCE_CATEGORIES = [
  'data_access',
  'rectification',
  'erasure',
  'consent_withdrawal',
  'nomination',
  'data_portability',
  'objection',
  'complaint',
  'other',
] as const;

export const GRIEVANCE_STATUSES = ['open', 'in_progress', 'on_hold', 'resolved', 'rejected', 'closed'] as const;

export type GrievanceStatus = (typeof GRIEVANCE_STATUSES)[number];

/** Statuses of a ticket still waiting for the organization: the overview counts these as open. */
export const OPEN_STATUSES: readonly GrievanceStatus[] = ['open', 'in_progress', 'on_hold'];

export type GrievanceCategory = (typeof GRIEVANCE_CATEGORIES)[number];

// Plain `enum` arrays give one clear error ("must be one of: ...") instead of one per literal.
const CategoryEnum = Type.Unsafe<GrievanceCategory>({ type: 'string', enum: [...GRIEVANCE_CATEGORIES], description: 'Kind of rights request' });
const StatusEnum = Type.Unsafe<GrievanceStatus>({ type: 'string', enum: [...GRIEVANCE_STATUSES], description: 'Any status may move to any other' });

export const GrievanceTicket = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Internal UUID of the ticket record' }),
    ticket_id: Type.String({ description: 'Human-readable identifier: GRV- and 8 characters of A-Z0-9', examples: ['GRV-7K2M9QXA'] }),
    client_user_id: Type.String({ description: "Your application's identifier for the user who filed the ticket" }),
    user_id: Nullable(Type.String({ format: 'uuid' }), {
      description: 'Internal id of the data principal with this client_user_id when one was on record at creation; otherwise null',
    }),
    subject: Type.String(),
    description: Type.String(),
    category: CategoryEnum,
    status: StatusEnum,
    attachment_url: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    due_at: Timestamp(
      "When the organization must have answered: created_at + the organization's grievance_period_days at creation, pushed by every pause (on_hold) when it ends",
    ),
    days_left: Type.Optional(
      Nullable(Type.Integer(), { description: 'Days until due_at, a started day counted as one (due in 2.5 days: 3; an hour late: -1; negative exactly when overdue; while on hold, as of the pause); null once resolved, rejected or closed' }),
    ),
    overdue: Type.Optional(Type.Boolean({ description: 'Not yet resolved, rejected or closed, and past due_at (a pause stops the clock)' })),
    paused: Type.Array(
      Type.Object({
        from: Timestamp(),
        to: NullableTimestamp('null while the ticket is still on hold'),
        reason: Nullable(Type.String(), { description: 'The note of the status change to on_hold' }),
      }),
      { description: 'The times the ticket was on hold, oldest first: its clock stood still' },
    ),
    resolved_at: NullableTimestamp('When the ticket last became resolved, rejected or closed; null while unfinished'),
  },
  { title: 'GrievanceTicket' },
);

export const CreateGrievanceBody = Type.Object(
  {
    client_user_id: Text(255, { description: 'User filing the request' }),
    subject: Text(200),
    description: Text(10_000),
    category: CategoryEnum,
    attachment_url: Type.Optional(Nullable(HttpUrl({ description: 'URL of a supporting document; null means not set' }))),
  },
  { additionalProperties: false },
);
export type CreateGrievanceInput = Static<typeof CreateGrievanceBody>;

export const UpdateGrievanceBody = Type.Object(
  {
    status: Type.Optional(StatusEnum),
    attachment_url: Type.Optional(Nullable(HttpUrl({ description: 'null clears it' }))),
  },
  { additionalProperties: false, minProperties: 1, description: 'At least one of status, attachment_url' },
);
export type UpdateGrievanceInput = Static<typeof UpdateGrievanceBody>;

export const UserParams = Type.Object({ user_id: PathText({ description: 'The client_user_id of the user' }) });
export const TicketParams = Type.Object({
  ticket_id: Type.String({ description: 'The GRV- identifier (not the internal UUID); a malformed one is simply not found' }),
});

export const StatusChange = Type.Object(
  {
    status: StatusEnum,
    previous_status: Nullable(StatusEnum),
    changed_at: Timestamp(),
    actor: Type.Object({
      type: Type.Unsafe<'api_key' | 'user' | 'data_principal' | 'nominee'>({ type: 'string', enum: ['api_key', 'user', 'data_principal', 'nominee'] }),
      id: Type.String({ format: 'uuid', description: "The API key id or user id that made the change (a data principal's internal id when they filed the ticket themselves; the nominee's id when their nominee filed it for them)" }),
    }),
    note: Nullable(Type.String(), { description: "Set only through the organization's management API" }),
  },
  { title: 'GrievanceStatusChange' },
);

// Organization management (Bearer owners, admins and members, or a grievances key).

export const TIMESTAMP_MESSAGE = 'must be an ISO 8601 date-time with a time zone';

export const ListGrievancesQuery = Type.Object({
  status: Type.Optional(StatusEnum),
  category: Type.Optional(CategoryEnum),
  from: Type.Optional(Type.String({ format: 'date-time', 'x-message': TIMESTAMP_MESSAGE, description: 'created_at >= from' })),
  to: Type.Optional(Type.String({ format: 'date-time', 'x-message': TIMESTAMP_MESSAGE, description: 'created_at <= to; not before from' })),
  client_user_id: Type.Optional(PathText({ maxLength: 255, description: 'Only tickets filed for this user' })),
  overdue: Type.Optional(Type.Boolean({ description: 'true: only unfinished tickets past their due date; false: only the others' })),
  due_before: Type.Optional(Type.String({ format: 'date-time', 'x-message': TIMESTAMP_MESSAGE, description: 'due_at < due_before' })),
  sort: Type.Optional(
    Type.Unsafe<'created_at' | 'updated_at' | 'due_at'>({
      type: 'string',
      enum: ['created_at', 'updated_at', 'due_at'],
      default: 'created_at',
      description: 'The time to order by',
    }),
  ),
  order: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['desc', 'asc'], default: 'desc', description: '`desc` newest first, `asc` oldest first' })),
  ...Paging,
});
export type ListGrievancesInput = Static<typeof ListGrievancesQuery>;

export const GrievanceList = ListOf(GrievanceTicket, 'GrievanceList', 'Tickets matching the filters, over all pages');

const countsOf = <T extends readonly string[]>(keys: T, description: string) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer()])) as Record<T[number], ReturnType<typeof Type.Integer>>, { description });

export const GrievanceSummary = Type.Object(
  {
    total: Type.Integer({ description: 'Every ticket of the organization' }),
    open: Type.Integer({ description: 'Tickets in open, in_progress or on_hold' }),
    by_status: countsOf(GRIEVANCE_STATUSES, 'Tickets per status (every status, zero included)'),
    open_by_category: countsOf(GRIEVANCE_CATEGORIES, 'Open tickets (open, in_progress, on_hold) per category'),
    overdue: Type.Integer({ description: 'Unfinished tickets past their due date' }),
    due_this_week: Type.Integer({ description: 'Unfinished tickets, not on hold, due within the next 7 days (not yet late)' }),
    median_time_to_resolve_seconds: Nullable(Type.Number(), {
      description: 'Median of resolved_at - created_at over tickets resolved, rejected or closed (seconds, pauses included); null when there are none',
    }),
    grievance_period_days: Type.Integer({ description: "The organization's response period" }),
  },
  { title: 'GrievanceSummary' },
);

export const GrievanceWithHistory = Type.Object(
  { ...GrievanceTicket.properties, history: Type.Array(StatusChange, { description: 'Oldest first' }) },
  { title: 'GrievanceTicketWithHistory' },
);

export const StatusChangeBody = Type.Object(
  {
    status: StatusEnum,
    note: Type.Optional(Text(2000, { description: "Kept in the ticket's history entry for this change" })),
  },
  { additionalProperties: false },
);
export type StatusChangeInput = Static<typeof StatusChangeBody>;

// The conversation on a ticket (contract §7).

export const MESSAGE_SENDERS = ['user', 'agent', 'system'] as const;

export const GrievanceMessage = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    sender: Type.Unsafe<(typeof MESSAGE_SENDERS)[number]>({
      type: 'string',
      enum: [...MESSAGE_SENDERS],
      description: 'user: the data principal; agent: the organization; system: a status change',
    }),
    message: Type.String(),
    created_at: Timestamp(),
    attachment_url: Nullable(Type.String()),
  },
  { title: 'GrievanceMessage' },
);

export const MessageBody = Type.Object(
  {
    message: Text(5000),
    attachment_url: Type.Optional(Nullable(HttpUrl({ description: 'URL of a supporting document; null means none' }))),
  },
  { additionalProperties: false },
);
export type MessageInput = Static<typeof MessageBody>;

// The data principal's own tickets (contract §7): filed for themselves, read with their status history.

export const PrincipalGrievanceBody = Type.Object(
  {
    subject: Text(200),
    description: Text(10_000),
    category: CategoryEnum,
    attachment_url: Type.Optional(Nullable(HttpUrl({ description: 'URL of a supporting document; null means not set' }))),
  },
  { additionalProperties: false, description: 'client_user_id is always the token\'s dp_id, never taken from the body' },
);
export type PrincipalGrievanceInput = Static<typeof PrincipalGrievanceBody>;

export const PrincipalStatusChange = Type.Object(
  { status: StatusEnum, previous_status: Nullable(StatusEnum), changed_at: Timestamp() },
  { title: 'MyGrievanceStatusChange' },
);

export const PrincipalGrievanceWithHistory = Type.Object(
  { ...GrievanceTicket.properties, history: Type.Array(PrincipalStatusChange, { description: 'Oldest first' }) },
  { title: 'MyGrievanceTicket' },
);
