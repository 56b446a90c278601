// Data principal schemas (contract §7): the organization's record of their contacts, their tokens (minted
// or by one-time code), and their own profile.
import { Type, type Static } from 'typebox';
import { Email, Nullable, NullableTimestamp, PathText, Phone, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const DpParams = Type.Object({
  dp_id: PathText({ minLength: 1, maxLength: 255, description: "Your identifier for the data principal (the same as a grievance's client_user_id)" }),
});

export const ContactBody = Type.Object(
  {
    phone: Type.Optional(Nullable(Phone({ description: 'E.164, or a 10-digit national number; null clears it' }))),
    email: Type.Optional(Nullable(Email({ description: 'Stored lower-cased; null clears it' }))),
    name: Type.Optional(Nullable(Text(255, { description: 'How to address them; null clears it' }))),
  },
  { additionalProperties: false, minProperties: 1, description: 'At least one of phone, email, name; omitted fields are kept' },
);
export type ContactInput = Static<typeof ContactBody>;

export const Contact = Type.Object(
  {
    dp_id: Type.String(),
    phone: Nullable(Type.String(), { description: 'E.164, in full (the organization sees its own records whole)' }),
    email: Nullable(Type.String()),
    name: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'DataPrincipalContact' },
);

export const MintTokenBody = Type.Object(
  { ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 3600, default: 3600, description: 'Lifetime of the token, 60-3600 seconds (default 3600)' })) },
  { additionalProperties: false },
);

export const DpToken = Type.Object(
  {
    access_token: Type.String({ description: '`dpt_` and 32 characters; shown once, stored only as a hash' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds' }),
    dp_id: Type.String(),
  },
  { title: 'DataPrincipalToken' },
);

export const CodeRequestBody = Type.Object(
  {
    phone: Type.Optional(Phone({ description: 'A phone on file (give phone or email)' })),
    email: Type.Optional(Email({ description: 'An email on file (give phone or email)' })),
  },
  { additionalProperties: false },
);
export type CodeRequestInput = Static<typeof CodeRequestBody>;

export const CodeVerifyBody = Type.Object(
  {
    phone: Type.Optional(Phone()),
    email: Type.Optional(Email()),
    code: Type.String({ minLength: 1, maxLength: 16, description: 'The 6 digits received (spaces and dashes are ignored)' }),
  },
  { additionalProperties: false },
);
export type CodeVerifyInput = Static<typeof CodeVerifyBody>;

export const CodeSent = Type.Object(
  {
    message: Type.String(),
    expires_in: Type.Integer({ description: 'Seconds a code lives' }),
    resend_after: Type.Integer({ description: 'Seconds before another code may be asked for' }),
  },
  { title: 'SignInCodeRequested' },
);

export const ContactPerson = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    full_name: Type.String(),
    email: Type.String(),
    phone: Nullable(Type.String()),
    appointment_date: NullableTimestamp(),
    qualifications: Nullable(Type.String()),
    responsibilities: Nullable(Type.String()),
    working_hours: Nullable(Type.String()),
    response_time: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'ContactPerson' },
);

/** GET /dpo: the contact person and the organization's grievance response period (contract §10). */
export const Dpo = Type.Object(
  {
    ...ContactPerson.properties,
    grievance_period_days: Type.Integer({
      minimum: 1,
      maximum: 90,
      description: 'Days the organization takes at most to answer a grievance (DPDP Rule 14(3)); set with `PATCH /api/v1/organization`',
    }),
  },
  { title: 'DataProtectionContact' },
);

export const Me = Type.Object(
  {
    dp_id: Type.String(),
    name: Nullable(Type.String()),
    phone: Nullable(Type.String({ description: 'Masked: +********3210' })),
    email: Nullable(Type.String({ description: 'Masked: a***@example.com' })),
    organization: Type.Object({ slug: Type.String(), name: Type.String() }),
    contact: Nullable(ContactPerson, { description: "The organization's contact person (DPDP Rule 9); null when none is configured" }),
    grievance_period_days: Type.Integer({ description: 'Days the organization takes at most to answer a ticket' }),
  },
  { title: 'DataPrincipalProfile' },
);

// A nominee acting for the person who appointed them (issue 33).

const NomineeId = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  'x-message': 'must be the id of one of your appointments',
  description: 'The appointment to act under (the nominee id), when you are the nominee of several people',
  examples: ['0192f4a1-7c3e-7b2a-9d4f-5e6a7b8c9d0e'],
});

export const NomineeCodeVerifyBody = Type.Object(
  {
    phone: Type.Optional(Phone({ description: 'The mobile recorded on your appointment (give phone or email)' })),
    email: Type.Optional(Email({ description: 'The email recorded on your appointment (give phone or email)' })),
    code: Type.String({ minLength: 1, maxLength: 16, description: 'The 6 digits received (spaces and dashes are ignored)' }),
    nominee_id: Type.Optional(NomineeId),
  },
  { additionalProperties: false },
);
export type NomineeCodeVerifyInput = Static<typeof NomineeCodeVerifyBody>;

export const NomineeToken = Type.Object(
  {
    access_token: Type.String({ description: '`dpt_` and 32 characters; shown once, stored only as a hash' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds' }),
    dp_id: Type.String({ description: 'The person the nominee acts for' }),
    nominee_id: Type.String({ format: 'uuid', description: 'The appointment the token acts under: the actor of everything it does' }),
  },
  { title: 'NomineeToken' },
);

export const NomineeTokenParams = Type.Object({ nominee_id: PathText({ maxLength: 255, description: 'UUID of the nominee (the appointment); a malformed one is simply not found' }) });
