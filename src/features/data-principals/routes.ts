// Data principal routes: the organization's record of their contacts and the tokens it mints for them,
// the one-time-code sign-in (public, on the organization's host), the principal's own profile, and the
// organization's contact person.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actingOf, organizationOf, tenantOf, type AccessDeps } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { Email, errorResponses, Nullable, Phone, Text } from '../../platform/http/schema-kit.js';
import type { DataPrincipalService } from './service.js';
import { checkOneContact, CODE_TTL_SECONDS, RESEND_AFTER_SECONDS } from './service.js';
import { CodeRequestBody, CodeSent, CodeVerifyBody, Contact, ContactBody, ContactPerson, Dpo, DpParams, DpToken, Me, MintTokenBody, NomineeCodeVerifyBody, NomineeToken, NomineeTokenParams } from './schemas.js';

const ALL_ROLES = ['owner', 'admin', 'member'] as const;
const OWNER_ADMIN = ['owner', 'admin'] as const;
const orgSecurity: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];
const dpSecurity: Record<string, string[]>[] = [{ DataPrincipal: [] }];

const ContactPersonBody = Type.Object(
  {
    full_name: Text(255),
    email: Email(),
    phone: Type.Optional(Nullable(Phone())),
    appointment_date: Type.Optional(Nullable(Type.String({ format: 'date-time', 'x-message': 'must be an ISO 8601 date-time with a time zone' }))),
    qualifications: Type.Optional(Nullable(Text(1000))),
    responsibilities: Type.Optional(Nullable(Text(2000))),
    working_hours: Type.Optional(Nullable(Text(255))),
    response_time: Type.Optional(Nullable(Text(255))),
  },
  { additionalProperties: false, description: 'The whole record: optional fields left out are cleared' },
);

export function codeMessage(orgName: string, code: string, minutes: number): string {
  return `${code} is your code to sign in to ${orgName}'s Rights Center. It is valid for ${minutes} minutes. Do not share it with anyone.`;
}

export function nomineeCodeMessage(orgName: string, code: string, minutes: number): string {
  return `${code} is your code to act at ${orgName} for the person who appointed you as their nominee. It is valid for ${minutes} minutes. Do not share it with anyone.`;
}

export function dataPrincipalRoutes(app: FastifyInstance, service: DataPrincipalService, deps: Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.put('/api/v1/data-principals/:dp_id', {
    config: { access: { apiKey: 'admin', bearer: OWNER_ADMIN } },
    schema: {
      tags: ['Data principals'],
      security: orgSecurity,
      summary: "Record a data principal's contacts",
      description:
        'Creates (201) or changes (200) how to reach the person your application calls `dp_id`: `phone` (E.164; a 10-digit number gets the default country code), `email` (lower-cased), `name`. Omitted fields are kept; `null` clears one. A one-time sign-in code can be sent only to a contact recorded here (or a consent link\'s phone, recorded when the person has none). Owners and admins, or an `admin` key.',
      params: DpParams,
      body: ContactBody,
      response: { 200: Contact, 201: Contact, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => {
      const { created, contact } = await service.putContact(tenantOf(req), req.params.dp_id, req.body);
      return reply.code(created ? 201 : 200).send(contact);
    },
  });

  r.get('/api/v1/data-principals/:dp_id', {
    config: { access: { apiKey: 'admin', bearer: ALL_ROLES } },
    schema: {
      tags: ['Data principals'],
      security: orgSecurity,
      summary: "A data principal's contacts",
      description:
        'In full (they are the organization\'s own records; the person sees them masked). A person known only from a consent answers with null contacts; one never recorded: 404. Any member, or an `admin` key.',
      params: DpParams,
      response: { 200: Contact, ...errorResponses(400, 401, 403, 404) },
    },
    handler: (req) => service.getContact(tenantOf(req), req.params.dp_id),
  });

  r.post('/api/v1/data-principals/:dp_id/tokens', {
    config: { access: { apiKey: 'consent' } },
    schema: {
      tags: ['Data principals'],
      security: [{ ApiKey: [] }],
      summary: 'Mint a token for a data principal',
      description:
        'For a person your backend has signed in itself: a `dpt_` token that acts for this `dp_id` only, on `/api/v1/me` and the Rights Center (`/rights?token=…`), for `ttl_seconds` (60-3600, default 3600). Hand it to your own client; never ship an organization key in an app. The person is recorded if new. Scope `consent` or `admin`.',
      params: DpParams,
      body: MintTokenBody,
      response: { 201: DpToken, ...errorResponses(400, 401, 403, 413, 415) },
    },
    // The body is optional: no body means the defaults.
    preValidation: async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
    handler: async (req, reply) => reply.code(201).send(await service.mintToken(tenantOf(req), req.params.dp_id, req.body.ttl_seconds)),
  });

  r.post('/rights/otp', {
    config: { access: 'public' },
    schema: {
      tags: ['Data principals'],
      summary: 'Send a one-time sign-in code',
      description: `\`{phone}\` or \`{email}\`: a 6-digit code goes by SMS or email when that contact belongs to a data principal of this organization. The answer is 202 and the same whether or not it does (and on a host that names no organization). On the bare base host (no organization subdomain), \`X-Org-Id\` names the organization. A code lives ${CODE_TTL_SECONDS / 60} minutes and allows 5 tries. At most 3 codes per contact per 15 minutes, and one per ${RESEND_AFTER_SECONDS} seconds: 429 \`too_many_codes\` with \`Retry-After\`.`,
      body: CodeRequestBody,
      response: { 202: CodeSent, ...errorResponses(400, 413, 415, 429) },
    },
    handler: async (req, reply) => {
      const org = await organizationOf(req, deps, { orgHeaderOnBareHost: true });
      if (org) await service.requestCode(org, req.body, (code, minutes) => codeMessage(org.name, code, minutes));
      else checkOneContact(req.body);
      return reply.code(202).send({ message: 'If this contact is on file, a code is on its way', expires_in: CODE_TTL_SECONDS, resend_after: RESEND_AFTER_SECONDS });
    },
  });

  r.post('/rights/otp/verify', {
    config: { access: 'public' },
    schema: {
      tags: ['Data principals'],
      summary: 'Exchange a one-time code for a token',
      description:
        '`{phone|email, code}`: the right code, within its 10 minutes and 5 tries, answers a `dpt_` token for that contact\'s data principal (1 hour). Wrong, expired, used or never sent: 401 `{"error": "Incorrect or expired code"}`. A code works once. On the bare base host (no organization subdomain), `X-Org-Id` names the organization; the token then works on the bare host too.',
      body: CodeVerifyBody,
      response: { 200: DpToken, ...errorResponses(400, 401, 413, 415) },
    },
    handler: async (req) => {
      const org = await organizationOf(req, deps, { orgHeaderOnBareHost: true });
      if (!org) {
        checkOneContact(req.body);
        throw new AppError('incorrect_code', 'Incorrect or expired code');
      }
      return service.verifyCode(org, req.body, req.id);
    },
  });

  r.post('/rights/nominee/otp', {
    config: { access: 'public' },
    schema: {
      tags: ['Data principals'],
      summary: "Send a nominee's one-time code",
      description: `For a nominee acting for the person who appointed them (where the organization allows it: \`nominees_may_act\` in \`PUT /api/v1/fulfilment/settings\`; otherwise 403 \`nominee_acting_off\`). \`{phone}\` or \`{email}\`, as recorded on the appointment: a 6-digit code goes by SMS or email when that contact is a verified nominee. The answer is 202 and the same whether or not it is. On the bare base host, \`X-Org-Id\` names the organization. The limits of \`POST /rights/otp\`, counted apart from the contact's own sign-in.`,
      body: CodeRequestBody,
      response: { 202: CodeSent, ...errorResponses(400, 403, 413, 415, 429) },
    },
    handler: async (req, reply) => {
      const org = await organizationOf(req, deps, { orgHeaderOnBareHost: true });
      if (org) await service.requestNomineeCode(org, req.body, (code, minutes) => nomineeCodeMessage(org.name, code, minutes));
      else checkOneContact(req.body);
      return reply.code(202).send({ message: 'If this contact is a verified nominee, a code is on its way', expires_in: CODE_TTL_SECONDS, resend_after: RESEND_AFTER_SECONDS });
    },
  });

  r.post('/rights/nominee/otp/verify', {
    config: { access: 'public' },
    schema: {
      tags: ['Data principals'],
      summary: "Exchange a nominee's code for a token",
      description:
        "`{phone|email, code, nominee_id?}`: the right code answers a `dpt_` token (1 hour) that acts for the one person whose verified nominee this is, with the nominee as the actor of everything it does. It reaches `GET /api/v1/me`, `/api/v1/me/data-summary`, `/api/v1/me/packages` (and their download) and `/api/v1/me/grievances` (file, follow, converse); elsewhere 403 `nominee_forbidden`. A nominee of several people names the appointment with `nominee_id` (without it: 400 `nominee_id_required`, `details` listing them, the code kept). It stops working at once when the appointment stops being verified or the organization turns `nominees_may_act` off (403 `nominee_not_active`, `nominee_acting_off`). Wrong or expired code: 401 `incorrect_code`.",
      body: NomineeCodeVerifyBody,
      response: { 200: NomineeToken, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req) => {
      const org = await organizationOf(req, deps, { orgHeaderOnBareHost: true });
      if (!org) {
        checkOneContact(req.body);
        throw new AppError('incorrect_code', 'Incorrect or expired code');
      }
      return service.verifyNomineeCode(org, req.body, req.id);
    },
  });

  r.post('/api/v1/nominees/:nominee_id/tokens', {
    config: { access: { apiKey: 'nominees' } },
    schema: {
      tags: ['Nominees'],
      security: [{ ApiKey: [] }],
      summary: 'Mint a token for a nominee',
      description:
        "For a nominee your backend has identified itself: a `dpt_` token that acts for the person who appointed them, with the nominee as the actor, as one earned with `POST /rights/nominee/otp/verify` (same reach, same checks on every request). Only a `verified` nominee, and only where the organization allows it: 403 `nominee_not_active`, `nominee_acting_off`. `ttl_seconds` 60-3600 (default 3600). Scope `nominees` or `admin`.",
      params: NomineeTokenParams,
      body: MintTokenBody,
      response: { 201: NomineeToken, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    preValidation: async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
    handler: async (req, reply) => reply.code(201).send(await service.mintNomineeToken(tenantOf(req), req.params.nominee_id, req.body.ttl_seconds)),
  });

  r.get('/api/v1/me', {
    config: { access: { dataPrincipal: true, nominee: true } },
    schema: {
      tags: ['Data principal (me)'],
      security: dpSecurity,
      summary: 'Who I am here',
      description:
        "The data principal's own profile: `dp_id`, contacts on file (masked), the organization, its contact person (DPDP Rule 9) and its grievance response period. `Authorization: Bearer dpt_…` (the person's, or their nominee's).",
      response: { 200: Me, ...errorResponses(401, 403) },
    },
    handler: (req) => service.profile(actingOf(req)),
  });

  r.get('/dpo', {
    config: { access: { apiKey: 'any', bearer: ALL_ROLES, dataPrincipal: true, nominee: true } },
    schema: {
      tags: ['Organization'],
      security: [{ ApiKey: [] }, { Bearer: [] }, { DataPrincipal: [] }],
      summary: 'The contact person (DPDP Rule 9)',
      description:
        "Whom data principals can contact about their data: the Data Protection Officer or the person the organization names. With it, the organization's grievance response period `grievance_period_days` (contract §10; `PATCH /api/v1/organization` sets it). Any valid key of the organization (any scope), a member's token, or a data principal's token. 404 `No contact person configured` when none is set.",
      response: { 200: Dpo, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => service.contactPerson(tenantOf(req)),
  });

  r.put('/api/v1/organization/dpo', {
    config: { access: { apiKey: 'admin', bearer: OWNER_ADMIN } },
    schema: {
      tags: ['Organization'],
      security: orgSecurity,
      summary: 'Set the contact person',
      description:
        'Sets the whole record (201 the first time, then 200): `full_name` and `email` required; `phone`, `appointment_date` (ISO 8601 with a time zone), `qualifications`, `responsibilities`, `working_hours`, `response_time` optional, and cleared when left out. Shown by `GET /dpo`, `GET /api/v1/me`, the consent page and every message about a ticket. Owners and admins, or an `admin` key.',
      body: ContactPersonBody,
      response: { 200: ContactPerson, 201: ContactPerson, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => {
      const { created, person } = await service.setContactPerson(tenantOf(req), req.body);
      return reply.code(created ? 201 : 200).send(person);
    },
  });
}

