// Nominee schemas: one per route part; they drive validation, serialization and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { Email, ListOf, Nullable, NullableTimestamp, Paging, PathText, Phone, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const RELATIONSHIPS = ['spouse', 'parent', 'child', 'sibling', 'legal_guardian', 'power_of_attorney', 'other'] as const;
export const NOMINEE_STATUSES = ['pending', 'verified', 'rejected'] as const;

const RelationshipEnum = Type.Unsafe<(typeof RELATIONSHIPS)[number]>({ type: 'string', enum: [...RELATIONSHIPS] });
const StatusEnum = Type.Unsafe<(typeof NOMINEE_STATUSES)[number]>({
  type: 'string',
  enum: [...NOMINEE_STATUSES],
  description: 'Verification status; any status may move to any other',
});

export const UserNominee = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    client_user_id: Type.String({ description: "Your application's identifier for the data principal" }),
    nominee_name: Type.String(),
    nominee_email: Type.String({ description: 'Stored lower-cased' }),
    nominee_mobile: Type.String({ description: 'E.164; the organization\'s own data, returned in full' }),
    relationship: RelationshipEnum,
    purpose_of_appointment: Nullable(Type.String()),
    status: StatusEnum,
    verified_at: NullableTimestamp('Set when status becomes verified, kept while it stays verified, null otherwise'),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'UserNominee' },
);

export const CreateNomineeBody = Type.Object(
  {
    user_id: Text(255, { description: "Your identifier for the data principal; stored as client_user_id" }),
    nominee_name: Text(255),
    nominee_email: Email(),
    nominee_mobile: Phone({ description: 'E.164 (+ then 8-15 digits); a bare 10-digit number gets DEFAULT_COUNTRY_CODE (+91)' }),
    relationship: RelationshipEnum,
    purpose_of_appointment: Type.Optional(Nullable(Text(1000))),
  },
  { additionalProperties: false },
);
export type CreateNomineeInput = Static<typeof CreateNomineeBody>;

export const UpdateNomineeBody = Type.Object(
  {
    nominee_name: Type.Optional(Text(255)),
    nominee_email: Type.Optional(Email()),
    nominee_mobile: Type.Optional(Phone()),
    relationship: Type.Optional(RelationshipEnum),
    purpose_of_appointment: Type.Optional(Nullable(Text(1000), { description: 'null clears it' })),
    status: Type.Optional(StatusEnum),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateNomineeInput = Static<typeof UpdateNomineeBody>;

export const UserParams = Type.Object({ user_id: PathText({ description: 'The client_user_id of the data principal' }) });
export const NomineeParams = Type.Object({ nominee_id: Type.String({ description: 'UUID of the nominee; a malformed one is simply not found' }) });
export const DeletedMessage = Type.Object({ message: Type.String() });

// Organization management (Bearer owners, admins and members, or a nominees key).
export const ListNomineesQuery = Type.Object({
  status: Type.Optional(StatusEnum),
  relationship: Type.Optional(RelationshipEnum),
  client_user_id: Type.Optional(PathText({ maxLength: 255, description: 'Only the nominees of this data principal' })),
  ...Paging,
});
export type ListNomineesInput = Static<typeof ListNomineesQuery>;

export const NomineeList = ListOf(UserNominee, 'NomineeList', 'Nominees matching the filter, over all pages');

// The data principal's own nominees (contract §7): they appoint and change them; the status is the organization's.

export const MyNomineeBody = Type.Object(
  {
    nominee_name: Text(255),
    nominee_email: Email(),
    nominee_mobile: Phone({ description: 'E.164 (+ then 8-15 digits); a bare 10-digit number gets DEFAULT_COUNTRY_CODE (+91)' }),
    relationship: RelationshipEnum,
    purpose_of_appointment: Type.Optional(Nullable(Text(1000))),
  },
  { additionalProperties: false, description: "The nominee is always the token's data principal's; status starts pending" },
);
export type MyNomineeInput = Static<typeof MyNomineeBody>;

export const MyNomineeUpdateBody = Type.Object(
  {
    nominee_name: Type.Optional(Text(255)),
    nominee_email: Type.Optional(Email()),
    nominee_mobile: Type.Optional(Phone()),
    relationship: Type.Optional(RelationshipEnum),
    purpose_of_appointment: Type.Optional(Nullable(Text(1000), { description: 'null clears it' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'At least one field; status is the organization\'s to set' },
);
export type MyNomineeUpdateInput = Static<typeof MyNomineeUpdateBody>;
