// The truConsent SDK surface (contract §8): every call the React Native and Flutter SDKs make, under
// /api/v1/internal/, answered in the shape they read. Each route maps the SDK's values (mapping.ts),
// checks the result against the contract's own schema where there is one, and calls the same service
// the contract's endpoint calls: no rule lives here. Who may call: an `sdk` key for what a banner needs
// (banner, settings, contact person, recording consent, starting a code sign-in); one person's records
// only with that person's token, and only for them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf, tenantOf, type PrincipalContext, type TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import { checkBody } from '../../platform/http/validation.js';
import type { CollectionPointService } from '../collection-points/index.js';
import { RecordConsentBody, type ConsentService, type RecordConsentInput } from '../consents/index.js';
import { CodeRequestBody, CodeVerifyBody, codeMessage, Dpo, type CodeRequestInput, type CodeVerifyInput, type DataPrincipalService } from '../data-principals/index.js';
import { MessageBody, PrincipalGrievanceBody, type GrievanceService, type MessageInput, type PrincipalGrievanceInput } from '../grievances/index.js';
import { MyNomineeBody, MyNomineeUpdateBody, type MyNomineeInput, type MyNomineeUpdateInput, type NomineeService } from '../nominees/index.js';
import { actionFromSdk, blankToUndefined, categoryFromSdk, grantedFromSdk, phoneFromSdk, relationshipFromSdk } from './mapping.js';
import { RightsCenterSettings, RightsCenterSettingsPatch, type RightsCenterSettingsService } from './settings.js';
import {
  bannerOf,
  consentGroupOf,
  consentStatusOf,
  messageOf,
  nomineeOf,
  SdkBanner,
  SdkConsentGroup,
  SdkGrievanceMessage,
  SdkGrievanceTicket,
  SdkNominee,
  SdkOk,
  SdkUserConsentStatus,
  ticketOf,
} from './shapes.js';

export interface SdkSurfaceServices {
  collectionPoints: CollectionPointService;
  consents: ConsentService;
  dataPrincipals: DataPrincipalService;
  grievances: GrievanceService;
  nominees: NomineeService;
  settings: RightsCenterSettingsService;
}

const P = '/api/v1/internal';
const tags = ['truConsent SDKs'];
/** What a banner needs: an `sdk` key (or `admin`), or the person's own token (Flutter sends one or the other). */
const bannerAccess = { apiKey: 'sdk', dataPrincipal: true } as const;
/** One person's records: their token only (the SDK's key, sent alongside, is not what admits the call). */
const personAccess = { dataPrincipal: true } as const;
const bannerSecurity: Record<string, string[]>[] = [{ ApiKey: [] }, { DataPrincipal: [] }];
const personSecurity: Record<string, string[]>[] = [{ DataPrincipal: [] }];

/** The SDKs send extra fields (metadata, assetId, source, ...): their bodies are open, and read field by field. */
const SdkBody = (title: string, properties: Parameters<typeof Type.Object>[0] = {}) => Type.Object(properties, { title, additionalProperties: true });
type Body = Record<string, unknown>;

const otherPerson = () => new AppError('dp_token_other_person', 'This token acts for another data principal');

/** The user the request names (path, body, X-User-Id), when it names one, must be the token's person. */
function samePerson(req: FastifyRequest, ctx: TenantContext, ...named: unknown[]): void {
  if (ctx.actor.type !== 'data_principal') return;
  const header = req.headers['x-user-id'];
  for (const n of [...named, Array.isArray(header) ? header[0] : header]) {
    const v = blankToUndefined(n);
    if (v !== undefined && v !== ctx.actor.dpId) throw otherPerson();
  }
}

function person(req: FastifyRequest, ...named: unknown[]): PrincipalContext {
  const ctx = principalOf(req);
  samePerson(req, ctx, ...named);
  return ctx;
}

/** Undefined fields left out, so the contract's schema sees exactly what was given. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const asString = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : typeof v === 'string' ? v : String(v));

export function sdkSurfaceRoutes(app: FastifyInstance, s: SdkSurfaceServices): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  // ─── Banner ────────────────────────────────────────────────────────────────

  async function banner(req: FastifyRequest, bannerId: string, assetId: string | undefined, userId: unknown) {
    const ctx = tenantOf(req);
    samePerson(req, ctx, userId);
    const point = await s.collectionPoints.getCollectionPoint(ctx, bannerId);
    // Another asset's collection point, or one that collects nothing now: no banner to show.
    if ((assetId !== undefined && point.asset_id !== assetId.toLowerCase()) || point.status !== 'active') {
      throw new AppError('not_found', 'Collection point not found');
    }
    const asset = await s.collectionPoints.getAsset(ctx, point.asset_id);
    return bannerOf(point, asset, { name: ctx.orgName });
  }

  const BannerQuery = Type.Object({ userId: Type.Optional(Type.String()) }, { additionalProperties: true });
  const bannerDescription =
    'A collection point (by id or display_id) with its notice and purposes, in the shape both SDKs read. The SDK sends `Content-Type: application/json` and no body. An `sdk` key, or the person\'s token (then `userId` and `X-User-Id`, when sent, must be theirs).';

  r.get(`${P}/consent/:assetId/:bannerId`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Banner of a collection point under an asset (SDK)',
      description: `${bannerDescription} 404 when the collection point is not under that asset.`,
      params: Type.Object({ assetId: Type.String(), bannerId: Type.String() }),
      querystring: BannerQuery,
      response: { 200: SdkBanner, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => banner(req, req.params.bannerId, req.params.assetId, req.query.userId),
  });

  r.get(`${P}/consent/:collectionPointId`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Banner of a collection point (SDK)',
      description: bannerDescription,
      params: Type.Object({ collectionPointId: Type.String({ description: 'The banner: a collection point id or display_id' }) }),
      querystring: BannerQuery,
      response: { 200: SdkBanner, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => banner(req, req.params.collectionPointId, undefined, req.query.userId),
  });

  r.get(`${P}/consent`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Every banner (SDK)',
      description:
        "The organization's active collection points, each in the banner's shape (React Native 0.1.3's Rights Center reads its purposes from this list; later versions read `consent/user/{userId}`). `asset_id` keeps one asset's (an id that is no asset's: an empty list). At most 200. An `sdk` key, or a person's token. The SDK sends `Content-Type: application/json` and no body.",
      querystring: Type.Object({ asset_id: Type.Optional(Type.String()) }, { additionalProperties: true }),
      response: { 200: Type.Array(SdkBanner), ...errorResponses(401, 403) },
    },
    handler: async (req) => {
      const ctx = tenantOf(req);
      const assetId = blankToUndefined(req.query.asset_id);
      if (assetId !== undefined && !isUuid(assetId)) return [];
      const { data } = await s.collectionPoints.listCollectionPoints(ctx, { asset_id: assetId?.toLowerCase(), status: 'active', limit: 200 });
      const assets = new Map(await Promise.all([...new Set(data.map((p) => p.asset_id))].map(async (id) => [id, await s.collectionPoints.getAsset(ctx, id)] as const)));
      return data.map((point) => bannerOf(point, assets.get(point.asset_id)!, { name: ctx.orgName }));
    },
  });

  r.post(`${P}/consent/:collectionPointId`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Record what a banner submitted (SDK)',
      description:
        "The SDKs' banner submission: `userId`, `purposes: [{purposeId, consented: accepted|declined|shown}]`, `action` (React Native `approved`, `partial_consent`, ...; Flutter `Approved`, `Partially Consented`, ...). A decision becomes an append-only consent record (channel `sdk`) through the same service as `POST /consent/{collection_point_id}`: a purpose counts as granted only when `accepted`, purposes the SDK left out as not granted, and the record's action is worked out from the choices. `no_action` (the banner closed) and `notice_shown` are not decisions: nothing is recorded (201 with `recorded: false`). An `sdk` key, or the person's token.",
      params: Type.Object({ collectionPointId: Type.String() }),
      body: SdkBody('SdkConsentSubmission', { userId: Type.Optional(Type.String()), purposes: Type.Array(Type.Object({}, { additionalProperties: true })), action: Type.String() }),
      response: { 201: SdkBody('SdkConsentRecorded', { success: Type.Boolean(), recorded: Type.Boolean() }), ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => {
      const ctx = tenantOf(req);
      const body = req.body as Body;
      samePerson(req, ctx, body.userId);
      const dpId = ctx.actor.type === 'data_principal' ? ctx.actor.dpId : blankToUndefined(body.userId);
      if (dpId === undefined) throw new AppError('validation_failed', 'Invalid request body: userId is required', [{ field: 'userId', message: 'is required' }]);
      const action = actionFromSdk(body.action);
      if (action === 'no_action' || action === 'notice_shown') {
        return reply.code(201).send({ success: true, recorded: false, action, message: 'Not a decision: no consent recorded' });
      }
      const point = await s.collectionPoints.getCollectionPoint(ctx, req.params.collectionPointId);
      const sent = new Map<string, boolean>();
      for (const p of req.body.purposes as Body[]) {
        const id = asString(p.purposeId ?? p.purpose_id ?? p.id);
        if (id !== undefined) sent.set(id.toLowerCase(), grantedFromSdk(p.consented));
      }
      const known = new Set(point.purposes.map((p) => p.id));
      const purposes = [
        ...point.purposes.map((p) => ({ id: p.id, granted: sent.get(p.id) ?? false })),
        // Ids that are no purpose of this point go on to the service, which refuses them by name.
        ...[...sent].filter(([id]) => !known.has(id)).map(([id, granted]) => ({ id, granted })),
      ];
      const input = checkBody<RecordConsentInput>(RecordConsentBody, { dp_id: dpId, purposes });
      const record = await s.consents.record(ctx, point.id, input, 'sdk');
      return reply.code(201).send({ success: true, recorded: true, ...record });
    },
  });

  r.post(`${P}/consent/suppression`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Declined purposes after a banner (SDK)',
      description:
        'The SDKs send `{userId, declinedPurposeIds}` after a banner where purposes were declined (fire and forget). The declines are already in the consent record the submission made, which is what every reader consults: this answers 200 and records nothing more.',
      body: SdkBody('SdkSuppression', { userId: Type.Optional(Type.String()), declinedPurposeIds: Type.Array(Type.String()) }),
      response: { 200: SdkOk, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: (req) => {
      samePerson(req, tenantOf(req), (req.body as Body).userId);
      return { success: true, message: 'Declines are kept in the consent record', suppressed: (req.body.declinedPurposeIds as unknown[]).length };
    },
  });

  // ─── Rights Center: settings, contact person, code sign-in ─────────────────

  r.get(`${P}/rights-center/settings/global`, {
    config: { access: bannerAccess },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'Rights Center settings (SDK)',
      description:
        "The organization's Rights Center settings (colours, sections shown, grievance mode, access mode `sso` / `non_sso`); the SDKs' defaults for whatever was never set. Set with `PUT /api/v1/organization/rights-center-settings` or in the dashboard. `asset_id` is accepted and not used: the settings are the organization's.",
      querystring: Type.Object({ asset_id: Type.Optional(Type.String()) }, { additionalProperties: true }),
      response: { 200: RightsCenterSettings, ...errorResponses(401, 403) },
    },
    handler: (req) => s.settings.get(tenantOf(req)),
  });

  r.get(`${P}/dpo`, {
    config: { access: { apiKey: 'any', dataPrincipal: true } },
    schema: {
      tags,
      security: bannerSecurity,
      summary: 'The contact person (SDK)',
      description: 'As `GET /dpo` (the contact person and `grievance_period_days`): any key of the organization (an `sdk` key included) or the person\'s token; 404 when none is configured.',
      response: { 200: Dpo, ...errorResponses(401, 403, 404) },
    },
    handler: (req) => s.dataPrincipals.contactPerson(tenantOf(req)),
  });

  r.post(`${P}/rights-center-access/send-otp`, {
    config: { access: { apiKey: 'sdk' } },
    schema: {
      tags,
      security: [{ ApiKey: [] }],
      summary: 'Send a sign-in code (SDK)',
      description:
        'The Rights Center\'s `non_sso` sign-in: `{phone, countryCode}` (or `{email}`) as `POST /rights/otp` takes them (`countryCode` `+91` and `9876543210` make `+919876543210`). Same limits, and the same 202 whether or not the contact is on file. An `sdk` key.',
      body: SdkBody('SdkSendCode', { phone: Type.Optional(Type.String()), countryCode: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }),
      response: { 202: SdkBody('SdkCodeSent', { success: Type.Boolean(), message: Type.String() }), ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
    handler: async (req, reply) => {
      const ctx = tenantOf(req);
      const input = checkBody<CodeRequestInput>(CodeRequestBody, contactOf(req.body as Body));
      await s.dataPrincipals.requestCode({ id: ctx.orgId, slug: ctx.slug, name: ctx.orgName }, input, (code, minutes) => codeMessage(ctx.orgName, code, minutes));
      return reply.code(202).send({ success: true, message: 'If this contact is on file, a code is on its way' });
    },
  });

  r.post(`${P}/rights-center-access/verify-otp`, {
    config: { access: { apiKey: 'sdk' } },
    schema: {
      tags,
      security: [{ ApiKey: [] }],
      summary: 'Exchange a sign-in code for a token (SDK)',
      description:
        '`{phone, countryCode, otp}`: as `POST /rights/otp/verify`, answering camelCase `accessToken` and `dataPrincipalId` (and the contract\'s snake_case fields). The SDK then sends `Authorization: Bearer <accessToken>`. Wrong or expired code: 401 `incorrect_code`. An `sdk` key.',
      body: SdkBody('SdkVerifyCode', { phone: Type.Optional(Type.String()), countryCode: Type.Optional(Type.String()), otp: Type.String() }),
      response: {
        200: SdkBody('SdkSignedIn', { accessToken: Type.String(), dataPrincipalId: Type.String(), access_token: Type.String(), expires_in: Type.Integer() }),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    },
    handler: async (req) => {
      const ctx = tenantOf(req);
      const body = req.body as Body;
      const input = checkBody<CodeVerifyInput>(CodeVerifyBody, { ...contactOf(body), code: asString(body.otp ?? body.code) ?? '' });
      const token = await s.dataPrincipals.verifyCode({ id: ctx.orgId, slug: ctx.slug, name: ctx.orgName }, input, req.id);
      return { accessToken: token.access_token, dataPrincipalId: token.dp_id, data_principal_id: token.dp_id, ...token };
    },
  });

  // ─── One person's consents ─────────────────────────────────────────────────

  r.get(`${P}/consent/user/:userId`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: "The person's consents by collection point (SDK)",
      description:
        'Every collection point where the person has a consent on record, each purpose with `consented: accepted|declined` (the current state, as `GET /api/v1/me/consents`). The person\'s token only, and `userId` must be theirs (401 otherwise).',
      params: Type.Object({ userId: Type.String() }),
      response: { 200: Type.Array(SdkConsentGroup), ...errorResponses(401, 403) },
    },
    handler: async (req) => (await s.consents.mine(person(req, req.params.userId))).map(consentGroupOf),
  });

  r.get(`${P}/consent/user-consent-status`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: "The person's latest consent at each collection point (SDK)",
      description: '`{collectionPoints: [{latest_consent: {timestamp, purpose_consents: [{purpose_id, status}]}}]}`. The person\'s token only, for themselves.',
      querystring: Type.Object({ userId: Type.Optional(Type.String()) }, { additionalProperties: true }),
      response: { 200: SdkUserConsentStatus, ...errorResponses(401, 403) },
    },
    handler: async (req) => {
      const ctx = person(req, req.query.userId);
      return consentStatusOf(ctx.actor.dpId, await s.consents.mine(ctx));
    },
  });

  r.post(`${P}/consent/rights-center`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: "Save the person's consent changes from the Rights Center (SDK)",
      description:
        "`{userId, purposes: [{id, consented: accepted|declined}], action}`: only the purposes that changed. Each collection point they belong to gets a new record through the same service as `POST /api/v1/me/consents/{id}` (channel `rights_center`); the purposes not sent keep their current choice; a point left with nothing granted is withdrawn (action `revoked`), as `.../withdraw` does. The person's token only.",
      body: SdkBody('SdkRightsCenterSave', { userId: Type.Optional(Type.String()), purposes: Type.Array(Type.Object({}, { additionalProperties: true })) }),
      response: { 200: SdkBody('SdkRightsCenterSaved', { success: Type.Boolean(), updated: Type.Array(Type.Object({}, { additionalProperties: true })) }), ...errorResponses(400, 401, 403, 409, 413, 415) },
    },
    handler: async (req) => {
      const ctx = person(req, (req.body as Body).userId);
      const mine = await s.consents.mine(ctx);
      const changes = new Map<string, Map<string, boolean>>();
      (req.body.purposes as Body[]).forEach((p, i) => {
        const id = asString(p.id ?? p.purposeId ?? p.purpose_id)?.toLowerCase();
        const group = mine.find((c) => c.purposes.some((q) => q.id === id));
        if (!id || !group) {
          throw new AppError('validation_failed', `Invalid request body: purposes.${i}.id is not a purpose you have a consent for`, [
            { field: `purposes.${i}.id`, message: 'is not a purpose you have a consent for' },
          ]);
        }
        const point = changes.get(group.collection_point.id) ?? new Map<string, boolean>();
        point.set(id, grantedFromSdk(p.consented));
        changes.set(group.collection_point.id, point);
      });
      const updated = [];
      for (const [pointId, changed] of changes) {
        const group = mine.find((c) => c.collection_point.id === pointId)!;
        const purposes = group.purposes.map((p) => ({ id: p.id, granted: changed.get(p.id) ?? p.granted }));
        const record = purposes.some((p) => p.granted)
          ? await s.consents.giveMine(ctx, pointId, purposes)
          : group.consent_action === 'revoked'
            ? null
            : await s.consents.withdrawMine(ctx, pointId);
        updated.push({ collection_point_id: pointId, consent_id: record?.consent_id ?? group.consent_id, consent_action: record?.consent_action ?? group.consent_action });
      }
      return { success: true, updated };
    },
  });

  // ─── One person's nominees ─────────────────────────────────────────────────
  // Through the person-side services /api/v1/me/nominees uses: the token's person only (another
  // person's nominee is a nominee that does not exist), the status stays the organization's, and a
  // change of who the nominee is sends a verified nominee back to pending.

  r.get(`${P}/nominee/user/:userId`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: "The person's nominees (SDK)",
      description: 'Newest first, as `GET /api/v1/me/nominees`; `relationship` as the SDK dropdown shows it (`Spouse`, ..., `Other`). The person\'s token only, and `userId` must be theirs (401 otherwise).',
      params: Type.Object({ userId: Type.String() }),
      response: { 200: Type.Array(SdkNominee), ...errorResponses(401, 403) },
    },
    handler: async (req) => (await s.nominees.mine(person(req, req.params.userId))).map(nomineeOf),
  });

  r.post(`${P}/nominee`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'Appoint a nominee (SDK)',
      description:
        '`{nominee_name, relationship (Spouse|Parent|Child|Sibling|Other), nominee_email, nominee_mobile, purpose_of_appointment ("" for none), client_user_id}`: as `POST /api/v1/me/nominees`, for the token\'s person (`client_user_id`, when sent, must be theirs). Answers the whole nominee (201).',
      body: SdkBody('SdkNomineeInput'),
      response: { 201: SdkNominee, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => {
      const b = req.body as Body;
      const ctx = person(req, b.client_user_id, b.user_id);
      const input = checkBody<MyNomineeInput>(
        MyNomineeBody,
        defined({
          nominee_name: asString(b.nominee_name),
          nominee_email: asString(b.nominee_email),
          nominee_mobile: asString(b.nominee_mobile),
          relationship: relationshipFromSdk(b.relationship),
          purpose_of_appointment: blankToUndefined(b.purpose_of_appointment),
        }),
      );
      return reply.code(201).send(nomineeOf(await s.nominees.appointMine(ctx, input)));
    },
  });

  r.put(`${P}/nominee/:id`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'Change a nominee (SDK)',
      description:
        'The SDK sends the whole form: as `PATCH /api/v1/me/nominees/{id}` with every field given, and a blank or missing `purpose_of_appointment` clears it. `relationship` `Other` keeps a stored relationship the dropdown shows as `Other`. Only the person\'s own nominees (404 otherwise); the status stays the organization\'s. Answers the whole nominee.',
      params: Type.Object({ id: Type.String() }),
      body: SdkBody('SdkNomineeChange'),
      response: { 200: SdkNominee, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req) => {
      const b = req.body as Body;
      const ctx = person(req, b.client_user_id, b.user_id);
      // Only to map the dropdown's `Other` back: whose nominee it is, the service decides.
      const stored = b.relationship === undefined ? undefined : (await s.nominees.mine(ctx)).find((n) => n.id === req.params.id.toLowerCase());
      const input = checkBody<MyNomineeUpdateInput>(
        MyNomineeUpdateBody,
        defined({
          nominee_name: asString(b.nominee_name),
          nominee_email: asString(b.nominee_email),
          nominee_mobile: asString(b.nominee_mobile),
          relationship: b.relationship === undefined ? undefined : relationshipFromSdk(b.relationship, stored?.relationship),
          purpose_of_appointment: blankToUndefined(b.purpose_of_appointment) ?? null,
        }),
      );
      return nomineeOf(await s.nominees.changeMine(ctx, req.params.id, input));
    },
  });

  r.delete(`${P}/nominee/:id`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'Remove a nominee (SDK)',
      description: 'As `DELETE /api/v1/me/nominees/{id}`: only the person\'s own nominees (404 otherwise). The SDK sends `Content-Type: application/json` and no body. Answers JSON.',
      params: Type.Object({ id: Type.String() }),
      response: { 200: SdkOk, ...errorResponses(401, 403, 404) },
    },
    handler: async (req) => {
      const { message } = await s.nominees.removeMine(person(req), req.params.id);
      return { success: true, message, id: req.params.id.toLowerCase() };
    },
  });

  // ─── One person's tickets, rights requests and their conversation ──────────
  // Through the person-side services /api/v1/me/grievances uses: filed for the token's person, and
  // another person's ticket is a ticket that does not exist.

  r.get(`${P}/grievance/user/:userId`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: "The person's tickets (SDK)",
      description: 'Newest first, as `GET /api/v1/me/grievances`; `category` as the SDK dropdown shows it (`Privacy Concern`, `Data Access`, `Other`, or the category in words). The person\'s token only, and `userId` must be theirs (401 otherwise).',
      params: Type.Object({ userId: Type.String() }),
      response: { 200: Type.Array(SdkGrievanceTicket), ...errorResponses(401, 403) },
    },
    handler: async (req) => (await s.grievances.mine(person(req, req.params.userId))).map(ticketOf),
  });

  async function fileTicket(ctx: PrincipalContext, fields: Record<string, unknown>) {
    return ticketOf(await s.grievances.fileMine(ctx, checkBody<PrincipalGrievanceInput>(PrincipalGrievanceBody, defined(fields))));
  }

  r.post(`${P}/grievance`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'File a ticket (SDK)',
      description:
        '`{client_user_id, subject, category (Privacy Concern → complaint, Data Access → data_access, Other → other), description}`: as `POST /api/v1/me/grievances`, for the token\'s person (`client_user_id`, when sent, must be theirs). Answers the whole ticket (201).',
      body: SdkBody('SdkGrievanceInput'),
      response: { 201: SdkGrievanceTicket, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: async (req, reply) => {
      const b = req.body as Body;
      const ctx = person(req, b.client_user_id, b.user_id);
      const ticket = await fileTicket(ctx, {
        subject: asString(b.subject),
        description: asString(b.description),
        category: categoryFromSdk(b.category),
        attachment_url: blankToUndefined(b.attachment_url),
      });
      return reply.code(201).send(ticket);
    },
  });

  const rightsRequest = (kind: 'access' | 'deletion') => ({
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: kind === 'access' ? 'Ask for access to my data (SDK)' : 'Ask for my data to be erased (SDK)',
      description:
        kind === 'access'
          ? '`{user_id, subject?, description?}`: files a ticket with category `data_access` for the token\'s person, as `POST /api/v1/me/grievances`. Answers the ticket (201).'
          : '`{user_id, reason?}`: files a ticket with category `erasure` for the token\'s person, the reason as its description, as `POST /api/v1/me/grievances`. Answers the ticket (201).',
      body: SdkBody(kind === 'access' ? 'SdkAccessRequest' : 'SdkDeletionRequest'),
      response: { 201: SdkGrievanceTicket, ...errorResponses(400, 401, 403, 413, 415) },
    },
  });

  r.post(`${P}/rights-requests/access-request`, {
    ...rightsRequest('access'),
    handler: async (req, reply) => {
      const b = req.body as Body;
      const ctx = person(req, b.user_id, b.userId);
      const ticket = await fileTicket(ctx, {
        subject: blankToUndefined(b.subject) ?? 'Data Access Request',
        description: blankToUndefined(b.description) ?? 'The data principal asked for access to their personal data.',
        category: 'data_access',
      });
      return reply.code(201).send(ticket);
    },
  });

  r.post(`${P}/rights-requests/deletion-request`, {
    ...rightsRequest('deletion'),
    handler: async (req, reply) => {
      const b = req.body as Body;
      const ctx = person(req, b.user_id, b.userId);
      const ticket = await fileTicket(ctx, {
        subject: blankToUndefined(b.subject) ?? 'Data Deletion Request',
        description: blankToUndefined(b.reason ?? b.description) ?? 'The data principal asked for their personal data to be erased.',
        category: 'erasure',
      });
      return reply.code(201).send(ticket);
    },
  });

  const TicketParam = Type.Object({ ticketId: Type.String({ description: 'The ticket_id (GRV-…) the SDK lists' }) });

  r.get(`${P}/grievance/:ticketId/messages`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'The conversation on my ticket (SDK)',
      description:
        'As `GET /api/v1/me/grievances/{ticket_id}/messages`: every message, oldest first (`user`: the person, `agent`: the organization, `system`: status changes). Another person\'s ticket: 404. The person\'s token only. The SDKs poll this every 5 s (their WebSocket, `/ws/grievance/{ticketId}`, is not served: they fall back to polling).',
      params: TicketParam,
      response: { 200: Type.Array(SdkGrievanceMessage), ...errorResponses(401, 403, 404) },
    },
    handler: async (req) => (await s.grievances.myMessages(person(req), req.params.ticketId)).map(messageOf),
  });

  r.post(`${P}/grievance/:ticketId/messages`, {
    config: { access: personAccess },
    schema: {
      tags,
      security: personSecurity,
      summary: 'Write on my ticket (SDK)',
      description:
        '`{sender: "user", message}` as both SDKs send it: as `POST /api/v1/me/grievances/{ticket_id}/messages`, appended with sender `user` (the token decides the sender; a `sender` in the body is not read). 1-5,000 characters. Another person\'s ticket: 404. Answers the whole message (201).',
      params: TicketParam,
      body: SdkBody('SdkMessageInput', { message: Type.String() }),
      response: { 201: SdkGrievanceMessage, ...errorResponses(400, 401, 403, 404, 413, 415) },
    },
    handler: async (req, reply) => {
      const b = req.body as Body;
      const input = checkBody<MessageInput>(MessageBody, defined({ message: asString(b.message), attachment_url: blankToUndefined(b.attachment_url) }));
      return reply.code(201).send(messageOf(await s.grievances.postMyMessage(person(req), req.params.ticketId, input)));
    },
  });

  // ─── The organization's side: its Rights Center settings ───────────────────

  r.get('/api/v1/organization/rights-center-settings', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin', 'member'] } },
    schema: {
      tags: ['Organization'],
      security: [{ ApiKey: [] }, { Bearer: [] }],
      summary: 'Rights Center settings',
      description: 'What the SDKs\' Rights Center widget shows: colours, sections, grievance mode, access mode. Fields never set read as the SDKs\' defaults. Any member, or an `admin` key.',
      response: { 200: RightsCenterSettings, ...errorResponses(401, 403) },
    },
    handler: (req) => s.settings.get(tenantOf(req)),
  });

  r.patch('/api/v1/organization/rights-center-settings', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin'] } },
    schema: {
      tags: ['Organization'],
      security: [{ ApiKey: [] }, { Bearer: [] }],
      summary: 'Change the Rights Center settings',
      description:
        'Any of the fields; those left out keep their value. Colours `#RRGGBB`; `access_mode` `sso` or `non_sso`; `grievance_mode` `truconsent` or `external` (with `grievance_external_url`). Answers every field. Owners and admins, or an `admin` key.',
      body: RightsCenterSettingsPatch,
      response: { 200: RightsCenterSettings, ...errorResponses(400, 401, 403, 413, 415) },
    },
    handler: (req) => s.settings.update(tenantOf(req), req.body),
  });
}

/** The SDK's `{phone, countryCode}` (or `{email}`) as the contract's code request. */
function contactOf(b: Body): { phone?: string; email?: string } {
  const email = blankToUndefined(b.email);
  if (email !== undefined && blankToUndefined(b.phone) === undefined) return { email };
  return { phone: phoneFromSdk(b.phone, b.countryCode ?? b.country_code) };
}
