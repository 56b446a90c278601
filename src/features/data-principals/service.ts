// Data principals acting for themselves (contract §7): the organization's record of how to reach them,
// their tokens (minted by the organization's backend, or earned with a one-time code sent to a contact
// on file), their profile, and the organization's contact person. The Rights Center pages and the SDK
// surface call these same functions.
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../platform/db/types.js';
import { principalReads, principalScope, tenantReads, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { ActingContext, TenantContext } from '../../platform/auth/access.js';
import type { Organization } from '../../platform/auth/tenant-host.js';
import { AppError } from '../../platform/http/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { maskPhone, normalisePhone } from '../../platform/phone.js';
import { looksLikeDpToken, looksLikeRightsSession, newDpToken, newRightsSession, sha256Hex } from '../../platform/crypto/opaque-tokens.js';
import { alongsideAudit, recordAudit } from '../audit/index.js';
import { grievancePeriodDays } from '../grievances/service.js';
import { recordEvent, together } from '../../platform/webhooks/events.js';
import { codeRepo, contactPersonRepo, contactRepo, liveDpToken, profileRepo, rightsSessionRepo, tokenRepo, type ContactPersonRow } from './repo.js';
import type { CodeRequestInput, CodeVerifyInput, ContactInput, NomineeCodeVerifyInput } from './schemas.js';
import type { NomineeService } from '../nominees/index.js';

export const CODE_TTL_SECONDS = 600;
export const MAX_WRONG_TRIES = 5;
export const RESEND_AFTER_SECONDS = 30;
export const MAX_SENDS_PER_WINDOW = 3;
export const SEND_WINDOW_SECONDS = 900;
export const CODE_TOKEN_TTL_SECONDS = 3600;
/** Contract §10 makes the period an organization setting; until it exists every organization answers within 30 days. */
export const DEFAULT_GRIEVANCE_PERIOD_DAYS = 30;

export interface DataPrincipalServiceDeps {
  db: Database;
  clock: Clock;
  defaultCountryCode: string;
  publicUrl: URL;
  /** The rule for a nominee acting for the person (issue 33): whom they may act for, and whether the organization allows it. */
  nominees: Pick<NomineeService, 'actingAppointments' | 'actingFor'>;
}

/** The Rights Center of an organization: where every message to a data principal points. */
export function rightsCenterUrl(publicUrl: URL, slug: string): string {
  return `${publicUrl.protocol}//${slug}.${publicUrl.host}/rights`;
}

/** `asha@example.com` → `a***@example.com`: enough to recognise one's own address, not to learn it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

const notFound = () => new AppError('not_found', 'Data principal not found');
const incorrectCode = () => new AppError('incorrect_code', 'Incorrect or expired code');

/** A code is asked for with a phone or an email, exactly one: else 400. */
export function checkOneContact(input: { phone?: string; email?: string }): void {
  if ((input.phone === undefined) === (input.email === undefined)) {
    const message = input.phone === undefined ? 'give a phone or an email' : 'give a phone or an email, not both';
    throw new AppError('validation_failed', `Invalid request body: ${message}`, [{ field: 'phone', message }]);
  }
}

function oneContact(input: { phone?: string; email?: string }, defaultCountryCode: string): { kind: 'phone' | 'email'; value: string } {
  checkOneContact(input);
  return input.phone !== undefined
    ? { kind: 'phone', value: normalisePhone(input.phone, defaultCountryCode) }
    : { kind: 'email', value: input.email!.toLowerCase() };
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The contact person as the API shows it (times as Dates, whichever way the row was read). */
export function contactPersonOf(row: ContactPersonRow | null): ContactPersonRow | null {
  if (!row) return null;
  return {
    ...row,
    appointment_date: row.appointment_date === null ? null : new Date(row.appointment_date),
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  };
}

export interface ContactPersonInput {
  full_name: string;
  email: string;
  phone?: string | null;
  appointment_date?: string | null;
  qualifications?: string | null;
  responsibilities?: string | null;
  working_hours?: string | null;
  response_time?: string | null;
}

/** A nominee's code is kept apart from the same contact's own sign-in code (their limits too). */
const nomineeContactHash = (contact: { kind: 'phone' | 'email'; value: string }) => sha256Hex(`nominee:${contact.kind}:${contact.value}`);

export function createDataPrincipalService({ db, clock, defaultCountryCode, publicUrl, nominees }: DataPrincipalServiceDeps) {
  /** The data principal whose contact the right code was sent to; throws `incorrect_code` otherwise. */
  async function checkCode(org: Organization, input: CodeVerifyInput): Promise<string> {
    const contact = oneContact(input, defaultCountryCode);
    const contactHash = sha256Hex(`${contact.kind}:${contact.value}`);
    const digits = input.code.replace(/[\s-]/g, '');
    const now = clock.now();
    // The wrong try is counted in its own committed transaction, then refused.
    const dpId = await withTenant(db, org.id, async (tx) => {
      const codes = codeRepo(tx);
      const current = await codes.lock(contactHash);
      if (!current || current.expires_at.getTime() <= now.getTime() || current.attempts >= MAX_WRONG_TRIES) return null;
      const right = /^[0-9]{6}$/.test(digits) && sameHex(sha256Hex(`${contactHash}:${digits}`), current.code_hash);
      if (!right || current.dp_id === null) {
        await codes.countWrongTry(contactHash);
        return null;
      }
      // Spent at once: one code never gives two tokens.
      await codes.spend(contactHash, now);
      return current.dp_id;
    });
    if (dpId === null) throw incorrectCode();
    return dpId;
  }

  /**
   * Sends a new code to the contact when `dpId` says it is on file (null: a code nobody receives, through
   * the same steps and limits, so the answer never tells). 429 within 30 s of the last code, or after 3
   * codes in 15 minutes.
   */
  async function sendCode(
    tx: TenantTx,
    contactHash: string,
    contact: { kind: 'phone' | 'email'; value: string },
    owner: string | null | Promise<string | null>,
    text: (code: string, minutes: number) => string,
  ): Promise<void> {
    const now = clock.now();
    const codes = codeRepo(tx);
    const [current, dpId] = await Promise.all([codes.lock(contactHash), owner]);
    let windowStartedAt = now;
    let sends = 1;
    if (current) {
      const waited = (now.getTime() - current.sent_at.getTime()) / 1000;
      if (waited < RESEND_AFTER_SECONDS) {
        const wait = Math.ceil(RESEND_AFTER_SECONDS - waited);
        throw new AppError('too_many_codes', `A code was just sent: ask again in ${wait} seconds`, undefined, { 'retry-after': String(wait) });
      }
      const windowAge = (now.getTime() - current.window_started_at.getTime()) / 1000;
      if (windowAge < SEND_WINDOW_SECONDS) {
        if (current.sends >= MAX_SENDS_PER_WINDOW) {
          const wait = Math.ceil(SEND_WINDOW_SECONDS - windowAge);
          throw new AppError('too_many_codes', `Too many codes were sent to this contact: ask again in ${wait} seconds`, undefined, { 'retry-after': String(wait) });
        }
        windowStartedAt = current.window_started_at;
        sends = current.sends + 1;
      }
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await codes.issue({
      contactHash,
      dpId,
      codeHash: sha256Hex(`${contactHash}:${code}`),
      at: now,
      expiresAt: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
      windowStartedAt,
      sends,
      message: dpId !== null ? { id: uuidv7(), channel: contact.kind === 'phone' ? 'sms' : 'email', recipient: contact.value, body: text(code, CODE_TTL_SECONDS / 60) } : null,
    });
  }

  /** Stores a new token for dp_id (recording the principal if new) with its audit entry. */
  async function issueToken(ctx: TenantContext, dpId: string, ttlSeconds: number, source: 'minted' | 'code') {
    const at = clock.now();
    const { token, hash } = newDpToken();
    const expiresAt = new Date(at.getTime() + ttlSeconds * 1000);
    await withTenant(db, ctx.orgId, async (tx) => {
      const principalId = await tokenRepo(tx).insert({ dpId, newPrincipalId: uuidv7(), tokenHash: hash, source, at, expiresAt });
      // A minted token is the organization's act; a code sign-in is the person's own.
      const actorCtx: TenantContext = source === 'code' ? { ...ctx, actor: { type: 'data_principal', id: principalId, dpId } } : ctx;
      await together(
        recordAudit(tx, actorCtx, at, {
          action: source === 'code' ? 'data_principal.signed_in' : 'data_principal.token_issued',
          targetType: 'data_principal',
          targetId: principalId,
          details: { method: source, expires_in: ttlSeconds },
        }),
        // Signing in with a one-time code is the person's own act: the organization may want to know.
        ...(source === 'code' ? [recordEvent(tx, 'data_principal.signed_in', { dp_id: dpId, method: 'code', expires_at: expiresAt }, at)] : []),
      );
    });
    return { access_token: token, token_type: 'Bearer' as const, expires_in: ttlSeconds, dp_id: dpId };
  }

  return {
    rightsCenterUrl: (slug: string) => rightsCenterUrl(publicUrl, slug),

    /** Creates or changes the organization's record of how to reach dp_id. */
    async putContact(ctx: TenantContext, dpId: string, input: ContactInput) {
      const at = clock.now();
      const changes = {
        phone: input.phone === undefined || input.phone === null ? input.phone : normalisePhone(input.phone, defaultCountryCode),
        email: input.email === undefined || input.email === null ? input.email : input.email.toLowerCase(),
        name: input.name,
      };
      return withTenant(db, ctx.orgId, async (tx) => {
        const { created, changed_fields: fields, ...contact } = await contactRepo(tx).upsert(dpId, changes, at);
        // Field names only: the values are personal data.
        await recordAudit(tx, ctx, at, {
          action: created ? 'data_principal.contact_created' : 'data_principal.contact_updated',
          targetType: 'data_principal',
          targetId: null,
          details: { fields },
        });
        return { created, contact };
      });
    },

    async getContact(ctx: TenantContext, dpId: string) {
      const row = await contactRepo(tenantReads(db, ctx.orgId)).get(dpId);
      if (!row) throw notFound();
      return row;
    },

    /** A token minted by the organization's backend for a person it has signed in itself. */
    mintToken(ctx: TenantContext, dpId: string, ttlSeconds = 3600) {
      return issueToken(ctx, dpId, ttlSeconds, 'minted');
    },

    /**
     * Sends a 6-digit code to a phone or email when it belongs to a data principal of the organization.
     * Unknown contacts go through the same steps and limits (a code nobody receives), so the answer never
     * tells whether the contact is on file. `text` words the message (language, organization).
     */
    async requestCode(org: Organization, input: CodeRequestInput, text: (code: string, minutes: number) => string): Promise<void> {
      const contact = oneContact(input, defaultCountryCode);
      await withTenant(db, org.id, async (tx) => {
        const principal = contactRepo(tx)
          .byContact(contact.kind, contact.value)
          .then((p) => p?.dp_id ?? null);
        await sendCode(tx, sha256Hex(`${contact.kind}:${contact.value}`), contact, principal, text);
      });
    },

    /** The right code (within 10 minutes, before 5 wrong tries) gives a token for the contact's data principal. */
    async verifyCode(org: Organization, input: CodeVerifyInput, requestId: string) {
      const dpId = await checkCode(org, input);
      const ctx: TenantContext = { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'data_principal', id: '', dpId }, requestId };
      return issueToken(ctx, dpId, CODE_TOKEN_TTL_SECONDS, 'code');
    },

    // A nominee acting for the person who appointed them (issue 33; the rule is the nominees service's).

    /**
     * Sends a code to a nominee's own email or mobile (as recorded on their appointment) when they hold a
     * verified appointment: the same limits, and the same answer whether or not they do. 403
     * `nominee_acting_off` when the organization does not let nominees act.
     */
    async requestNomineeCode(org: Organization, input: CodeRequestInput, text: (code: string, minutes: number) => string): Promise<void> {
      const contact = oneContact(input, defaultCountryCode);
      await withTenant(db, org.id, async (tx) => {
        const appointments = await nominees.actingAppointments(tx, contact);
        // The code's row names the first person they may act for (on file); the verification looks again.
        await sendCode(tx, nomineeContactHash(contact), contact, appointments[0]?.dp_id ?? null, text);
      });
    },

    /**
     * The right code gives a nominee a token that acts for one person: the one appointment they hold, or
     * the one `nominee_id` names when they hold several (400 `nominee_id_required` listing them, the code
     * kept for the second try). The nominee is the actor of the sign-in and of everything the token does.
     */
    async verifyNomineeCode(org: Organization, input: NomineeCodeVerifyInput, requestId: string) {
      const contact = oneContact(input, defaultCountryCode);
      const contactHash = nomineeContactHash(contact);
      const digits = input.code.replace(/[\s-]/g, '');
      const chosenId = input.nominee_id?.toLowerCase();
      const now = clock.now();
      // A wrong try is counted in the committed transaction; every refusal is returned, not thrown, so it commits.
      const outcome = await withTenant(db, org.id, async (tx) => {
        const codes = codeRepo(tx);
        const current = await codes.lock(contactHash);
        if (!current || current.expires_at.getTime() <= now.getTime() || current.attempts >= MAX_WRONG_TRIES) return { refused: incorrectCode() };
        const right = /^[0-9]{6}$/.test(digits) && sameHex(sha256Hex(`${contactHash}:${digits}`), current.code_hash);
        if (!right || current.dp_id === null) {
          await codes.countWrongTry(contactHash);
          return { refused: incorrectCode() };
        }
        const appointments = await nominees.actingAppointments(tx, contact);
        const chosen = chosenId === undefined && appointments.length === 1 ? appointments[0] : appointments.find((a) => a.nominee_id === chosenId);
        if (!chosen) {
          if (chosenId !== undefined || appointments.length === 0) return { refused: new AppError('nominee_not_active', "This nominee's appointment is not active: only a verified nominee acts for the person who appointed them") };
          return {
            refused: new AppError(
              'nominee_id_required',
              'You are the nominee of several people: send the code again with the nominee_id of the appointment to act under',
              appointments.map((a) => ({ field: 'nominee_id', message: `${a.nominee_id}: ${a.relationship} of ${a.person_name ?? 'a person'} (verified ${new Date(a.verified_at).toISOString().slice(0, 10)})` })),
            ),
          };
        }
        await codes.spend(contactHash, now);
        const { token, hash } = newDpToken();
        const expiresAt = new Date(now.getTime() + CODE_TOKEN_TTL_SECONDS * 1000);
        const principalId = await tokenRepo(tx).insert({ dpId: chosen.dp_id, newPrincipalId: uuidv7(), tokenHash: hash, source: 'nominee_code', at: now, expiresAt, nomineeId: chosen.nominee_id });
        const ctx: TenantContext = { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'nominee', id: chosen.nominee_id, dpId: chosen.dp_id }, requestId };
        await recordAudit(tx, ctx, now, {
          action: 'nominee.signed_in',
          targetType: 'data_principal',
          targetId: principalId,
          details: { method: 'code', nominee_id: chosen.nominee_id, expires_in: CODE_TOKEN_TTL_SECONDS },
        });
        return { token: { access_token: token, token_type: 'Bearer' as const, expires_in: CODE_TOKEN_TTL_SECONDS, dp_id: chosen.dp_id, nominee_id: chosen.nominee_id } };
      });
      if ('refused' in outcome) throw outcome.refused;
      return outcome.token;
    },

    /**
     * A nominee's token minted by the organization's backend for a nominee it has identified itself: it
     * acts for the appointing person, with the nominee as the actor. The same rule: 404 for no such
     * nominee, 403 `nominee_acting_off` or `nominee_not_active`.
     */
    mintNomineeToken(ctx: TenantContext, nomineeId: string, ttlSeconds = 3600) {
      const at = clock.now();
      const { token, hash } = newDpToken();
      const expiresAt = new Date(at.getTime() + ttlSeconds * 1000);
      return withTenant(db, ctx.orgId, async (tx) => {
        const { dp_id: dpId } = await nominees.actingFor(tx, nomineeId);
        const id = nomineeId.toLowerCase();
        const principalId = await tokenRepo(tx).insert({ dpId, newPrincipalId: uuidv7(), tokenHash: hash, source: 'nominee_minted', at, expiresAt, nomineeId: id });
        await recordAudit(tx, ctx, at, { action: 'nominee.token_issued', targetType: 'data_principal', targetId: principalId, details: { nominee_id: id, expires_in: ttlSeconds } });
        return { access_token: token, token_type: 'Bearer' as const, expires_in: ttlSeconds, dp_id: dpId, nominee_id: id };
      });
    },

    /**
     * The Rights Center's code sign-in: the right code opens a browser session (drs_…, an hour) instead
     * of giving a token, so what the cookie holds is no API credential (issue 35). Audited and announced
     * like a token sign-in.
     */
    async signInRightsCenter(org: Organization, input: CodeVerifyInput, requestId: string): Promise<{ session: string; expiresInSeconds: number }> {
      const dpId = await checkCode(org, input);
      const at = clock.now();
      const expiresAt = new Date(at.getTime() + CODE_TOKEN_TTL_SECONDS * 1000);
      const { session, hash } = newRightsSession();
      await withTenant(db, org.id, async (tx) => {
        const principalId = await rightsSessionRepo(tx).insert({ dpId, newPrincipalId: uuidv7(), sessionHash: hash, source: 'code', at, expiresAt });
        const ctx: TenantContext = { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'data_principal', id: principalId, dpId }, requestId };
        await together(
          recordAudit(tx, ctx, at, { action: 'data_principal.signed_in', targetType: 'data_principal', targetId: principalId, details: { method: 'code', expires_in: CODE_TOKEN_TTL_SECONDS } }),
          recordEvent(tx, 'data_principal.signed_in', { dp_id: dpId, method: 'code', expires_at: expiresAt }, at),
        );
      });
      return { session, expiresInSeconds: CODE_TOKEN_TTL_SECONDS };
    },

    /**
     * A ?token=dpt_… link into the Rights Center: a working token opens a browser session that ends when
     * the token would (the token itself stays the app's, and is never put in the cookie); null otherwise.
     */
    async rightsSessionFromToken(orgId: string, token: string): Promise<{ session: string; expiresInSeconds: number } | null> {
      if (!looksLikeDpToken(token)) return null;
      const at = clock.now();
      return withTenant(db, orgId, async (tx) => {
        const live = await liveDpToken(tx, sha256Hex(token), at);
        if (!live) return null;
        const expiresAt = new Date(live.expires_at);
        const { session, hash } = newRightsSession();
        await rightsSessionRepo(tx).insert({ dpId: live.dp_id, newPrincipalId: uuidv7(), sessionHash: hash, source: 'token', at, expiresAt });
        return { session, expiresInSeconds: Math.max(1, Math.floor((expiresAt.getTime() - at.getTime()) / 1000)) };
      });
    },

    /** Who a Rights Center session acts for, while it lives (not ended, not expired); null otherwise. */
    async rightsSession(orgId: string, session: string): Promise<{ dataPrincipalId: string; dpId: string; expiresAt: Date } | null> {
      if (!looksLikeRightsSession(session)) return null;
      const row = await rightsSessionRepo(tenantReads(db, orgId)).live(sha256Hex(session), clock.now());
      return row ? { dataPrincipalId: row.data_principal_id, dpId: row.dp_id, expiresAt: new Date(row.expires_at) } : null;
    },

    /** Sign-out: the session ends at once, for good (a copy of the cookie no longer works). */
    async endRightsSession(orgId: string, session: string): Promise<void> {
      if (!looksLikeRightsSession(session)) return;
      await withTenant(db, orgId, (tx) => rightsSessionRepo(tx).end(sha256Hex(session), clock.now()));
    },

    /** The principal's own profile: contacts masked, the organization, its contact person. One statement. */
    async profile(ctx: ActingContext) {
      const { contact, person } = await profileRepo(principalReads(db, principalScope(ctx))).get();
      return {
        dp_id: ctx.actor.dpId,
        name: contact?.name ?? null,
        phone: contact?.phone ? maskPhone(contact.phone) : null,
        email: contact?.email ? maskEmail(contact.email) : null,
        organization: { slug: ctx.slug, name: ctx.orgName },
        contact: contactPersonOf(person),
        // The organization's own period (PATCH /api/v1/organization), DEFAULT_GRIEVANCE_PERIOD_DAYS unless changed.
        grievance_period_days: await grievancePeriodDays(db, ctx.orgId),
      };
    },

    /** The organization's contact person (DPDP Rule 9) and its grievance period (contract §10); 404 when no contact person is configured. */
    async contactPerson(ctx: Pick<TenantContext, 'orgId'>) {
      const row = await contactPersonRepo(tenantReads(db, ctx.orgId)).getWithPeriod();
      if (!row) throw new AppError('not_found', 'No contact person configured');
      return row;
    },

    /** The contact person or null: for pages and messages that show it when there is one. */
    async contactPersonOrNull(orgId: string): Promise<ContactPersonRow | null> {
      return contactPersonRepo(tenantReads(db, orgId)).get();
    },

    async setContactPerson(ctx: TenantContext, input: ContactPersonInput) {
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const { created, ...row } = await alongsideAudit(
          tx,
          ctx,
          at,
          { action: 'organization.contact_person_set', targetType: 'organization', targetId: ctx.orgId },
          contactPersonRepo(tx).put(
            {
              id: uuidv7(),
              full_name: input.full_name,
              email: input.email.toLowerCase(),
              phone: input.phone === undefined || input.phone === null ? null : normalisePhone(input.phone, defaultCountryCode),
              appointment_date: input.appointment_date ? new Date(input.appointment_date) : null,
              qualifications: input.qualifications ?? null,
              responsibilities: input.responsibilities ?? null,
              working_hours: input.working_hours ?? null,
              response_time: input.response_time ?? null,
            },
            at,
          ),
        );
        return { created, person: row };
      });
    },
  };
}

export type DataPrincipalService = ReturnType<typeof createDataPrincipalService>;
