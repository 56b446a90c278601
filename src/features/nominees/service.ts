// Nominees: people authorised to act for a data principal, with a verification status.
import type { Database } from '../../platform/db/types.js';
import { principalReads, principalScope, tenantReads, withPrincipal, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { PrincipalContext, TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { normalisePhone } from '../../platform/phone.js';
import { alongsideAudit, recordAudit } from '../audit/index.js';
import { recordEvent, settled, together } from '../../platform/webhooks/events.js';
import { actingRepo, newNomineeRow, nomineeRepo, principalNomineeRepo, type ActingAppointment, type NomineeChange, type NomineeRow } from './repo.js';
import type { CreateNomineeInput, ListNomineesInput, MyNomineeInput, MyNomineeUpdateInput, UpdateNomineeInput } from './schemas.js';

const notFound = () => new AppError('not_found', 'Nominee not found');
const actingOff = () => new AppError('nominee_acting_off', 'This organization does not let nominees act for the people who appointed them');
const notActive = () => new AppError('nominee_not_active', "This nominee's appointment is not active: only a verified nominee acts for the person who appointed them");

export interface NomineeServiceDeps {
  db: Database;
  clock: Clock;
  defaultCountryCode: string;
}

/** The nominee as the API shows it, without what the update replaced. */
function nomineeOf({ previous_status: _s, changed_fields: _f, ...row }: NomineeRow & NomineeChange): NomineeRow {
  return row;
}

export function createNomineeService({ db, clock, defaultCountryCode }: NomineeServiceDeps) {
  /** Who the nominee is, as stored: the email lower-cased, the mobile in E.164. */
  const contactOf = (input: MyNomineeInput) => ({
    name: input.nominee_name,
    email: input.nominee_email.toLowerCase(),
    mobile: normalisePhone(input.nominee_mobile, defaultCountryCode),
    relationship: input.relationship,
    purpose: input.purpose_of_appointment ?? null,
  });

  /** A change with the same normalisation. */
  const changesOf = <T extends { nominee_email?: string; nominee_mobile?: string }>(input: T) => ({
    ...input,
    nominee_email: input.nominee_email?.toLowerCase(),
    nominee_mobile: input.nominee_mobile === undefined ? undefined : normalisePhone(input.nominee_mobile, defaultCountryCode),
  });

  // What every appointment, change and removal records, whoever makes it (the organization or the person):
  // the audit entry in the change's own batch, and the webhook event.

  /**
   * The insert, its audit entry and its webhook event leave in one batch. The event's data is the row
   * the insert writes (every value of it comes from here), and an insert that fails rolls the event back.
   */
  async function appointed(tx: TenantTx, ctx: TenantContext, at: Date, nominee: NomineeRow, inserting: Promise<NomineeRow>): Promise<NomineeRow> {
    const [row] = await settled(
      alongsideAudit(tx, ctx, at, { action: 'nominee.created', targetType: 'nominee', targetId: nominee.id, details: { status: 'pending' } }, inserting),
      recordEvent(tx, 'nominee.created', { nominee }, at),
    );
    return row;
  }

  /** The entry names what really changed, which only the update knows: one more statement after it. */
  async function changed(tx: TenantTx, ctx: TenantContext, at: Date, row: NomineeRow & NomineeChange): Promise<NomineeRow> {
    const statusChanged = row.status !== row.previous_status;
    const nominee = nomineeOf(row);
    await together(
      recordAudit(tx, ctx, at, {
        action: 'nominee.updated',
        targetType: 'nominee',
        targetId: row.id,
        details: { fields: row.changed_fields, ...(statusChanged ? { status: row.status, previous_status: row.previous_status } : {}) },
      }),
      ...(row.changed_fields.length > 0 ? [recordEvent(tx, 'nominee.updated', { nominee, changed_fields: row.changed_fields }, at)] : []),
    );
    return nominee;
  }

  /** Not found: the throw rolls the entry back with the transaction. */
  async function removed(tx: TenantTx, ctx: TenantContext, at: Date, id: string, removing: Promise<boolean>): Promise<{ message: string }> {
    const event = { action: 'nominee.deleted', targetType: 'nominee', targetId: id };
    if (!(await alongsideAudit(tx, ctx, at, event, removing))) throw notFound();
    await recordEvent(tx, 'nominee.deleted', { nominee_id: id }, at);
    return { message: 'Nominee deleted' };
  }

  /** Sets the status (verified_at follows it) and records `nominee.verified|rejected`; an unchanged status is accepted. */
  function decide(ctx: TenantContext, nomineeId: string, status: 'verified' | 'rejected'): Promise<NomineeRow> {
    if (!isUuid(nomineeId)) return Promise.reject(notFound());
    const at = clock.now();
    return withTenant(db, ctx.orgId, async (tx) => {
      const row = await nomineeRepo(tx).update(nomineeId, { status }, at);
      if (!row) throw notFound();
      const nominee = nomineeOf(row);
      await together(
        recordAudit(tx, ctx, at, {
          action: `nominee.${status}`,
          targetType: 'nominee',
          targetId: row.id,
          details: { status: row.status, previous_status: row.previous_status },
        }),
        ...(row.status !== row.previous_status ? [recordEvent(tx, 'nominee.updated', { nominee, changed_fields: ['status'] }, at)] : []),
      );
      return nominee;
    });
  }

  return {
    // A nominee acting for the person who appointed them (issue 33): where the organization allows it
    // (PUT /api/v1/fulfilment/settings {nominees_may_act}, off by default), under a verified appointment,
    // for that person only. One rule for the sign-in, the token the organization mints, and every request
    // a nominee's token makes.

    /** Throws 403 `nominee_acting_off` or `nominee_not_active` unless the nominee may act for dpId now. */
    async checkActing(orgId: string, nomineeId: string, dpId: string): Promise<void> {
      const { allowed, appointment } = await actingRepo(tenantReads(db, orgId)).check(nomineeId);
      if (!allowed) throw actingOff();
      if (!appointment || appointment.status !== 'verified' || appointment.dp_id !== dpId) throw notActive();
    },

    /** The person a nominee may act for under this appointment (for the organization's own token): 404, 403 as checkActing. */
    async actingFor(tx: TenantTx, nomineeId: string): Promise<{ dp_id: string }> {
      if (!isUuid(nomineeId)) throw notFound();
      const { allowed, appointment } = await actingRepo(tx).check(nomineeId.toLowerCase());
      if (!appointment) throw notFound();
      if (!allowed) throw actingOff();
      if (appointment.status !== 'verified') throw notActive();
      return { dp_id: appointment.dp_id };
    },

    /**
     * The appointments the nominee with this email or mobile may act under (the code sign-in): verified
     * ones, oldest first; 403 `nominee_acting_off` when the organization does not let nominees act.
     */
    async actingAppointments(tx: TenantTx, contact: { kind: 'phone' | 'email'; value: string }): Promise<ActingAppointment[]> {
      const { allowed, appointments } = await actingRepo(tx).appointments(contact.kind, contact.value);
      if (!allowed) throw actingOff();
      return appointments;
    },

    listForUser(ctx: TenantContext, clientUserId: string): Promise<NomineeRow[]> {
      // One statement: sent with its transaction in a single round trip (the hot read of this API).
      return nomineeRepo(tenantReads(db, ctx.orgId)).listByClientUser(clientUserId);
    },

    /** The organization's nominees, newest first, filtered. */
    list(ctx: TenantContext, q: ListNomineesInput) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const filter = { status: q.status, relationship: q.relationship, clientUserId: q.client_user_id, limit, offset };
      return withTenant(db, ctx.orgId, async (tx) => ({ ...(await nomineeRepo(tx).list(filter)), limit, offset }));
    },

    create(ctx: TenantContext, input: CreateNomineeInput): Promise<NomineeRow> {
      const id = uuidv7();
      const at = clock.now();
      const contact = contactOf(input);
      const n = { id, clientUserId: input.user_id, ...contact, at };
      return withTenant(db, ctx.orgId, (tx) => appointed(tx, ctx, at, newNomineeRow(n), nomineeRepo(tx).insert(n)));
    },

    update(ctx: TenantContext, nomineeId: string, input: UpdateNomineeInput): Promise<NomineeRow> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      const changes = changesOf(input);
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await nomineeRepo(tx).update(nomineeId, changes, at);
        if (!row) throw notFound();
        return changed(tx, ctx, at, row);
      });
    },

    remove(ctx: TenantContext, nomineeId: string): Promise<{ message: string }> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      const id = nomineeId.toLowerCase();
      const at = clock.now();
      return withTenant(db, ctx.orgId, (tx) => removed(tx, ctx, at, id, nomineeRepo(tx).remove(id)));
    },

    verify(ctx: TenantContext, nomineeId: string): Promise<NomineeRow> {
      return decide(ctx, nomineeId, 'verified');
    },

    reject(ctx: TenantContext, nomineeId: string): Promise<NomineeRow> {
      return decide(ctx, nomineeId, 'rejected');
    },

    // A data principal's own nominees (contract §7): appointed, changed and removed by them; the status
    // (verification) stays the organization's to set.

    /** Their nominees, newest first. */
    mine(ctx: PrincipalContext): Promise<NomineeRow[]> {
      return principalNomineeRepo(principalReads(db, principalScope(ctx))).list();
    },

    /** Appoints a nominee for themselves: status pending, like every new nominee. */
    appointMine(ctx: PrincipalContext, input: MyNomineeInput): Promise<NomineeRow> {
      const id = uuidv7();
      const at = clock.now();
      const contact = contactOf(input);
      const n = { id, ...contact, at };
      return withPrincipal(db, principalScope(ctx), (tx) => appointed(tx, ctx, at, newNomineeRow({ ...n, clientUserId: ctx.actor.dpId }), principalNomineeRepo(tx).insert(n)));
    },

    /**
     * Changes one of their nominees. A change of who the nominee is (name, email, mobile, relationship)
     * sends a verified or rejected nominee back to pending: the organization verified someone else.
     * Another person's nominee: 404.
     */
    changeMine(ctx: PrincipalContext, nomineeId: string, input: MyNomineeUpdateInput): Promise<NomineeRow> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      const changes = changesOf(input);
      const at = clock.now();
      return withPrincipal(db, principalScope(ctx), async (tx) => {
        const row = await principalNomineeRepo(tx).update(nomineeId, changes, at, true);
        if (!row) throw notFound();
        return changed(tx, ctx, at, row);
      });
    },

    /** Removes one of their nominees for good; another person's: 404. */
    removeMine(ctx: PrincipalContext, nomineeId: string): Promise<{ message: string }> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      const id = nomineeId.toLowerCase();
      const at = clock.now();
      return withPrincipal(db, principalScope(ctx), (tx) => removed(tx, ctx, at, id, principalNomineeRepo(tx).remove(id)));
    },
  };
}

export type NomineeService = ReturnType<typeof createNomineeService>;
