// Grievance tickets: creation (status open, a GRV- id), updates that keep an append-only status history,
// and the organization's own view of all its tickets. Every change appends an audit entry with it.
import type { Database } from '../../platform/db/types.js';
import { principalReads, principalScope, tenantReads, withPrincipal, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { ActingContext, TenantContext } from '../../platform/auth/access.js';
import { AppError, type ErrorDetail } from '../../platform/http/errors.js';
import { randomCode, UPPER_ALNUM, uuidv7 } from '../../platform/ids.js';
import { alongsideAudit, recordAudit } from '../audit/index.js';
import { DEFAULT_GRIEVANCE_PERIOD_DAYS } from '../data-principals/service.js';
import { recordEvent, recordEventFrom, settled, together } from '../../platform/webhooks/events.js';
import { queueTicketNotice, rightsCenterUrl } from '../data-principals/index.js';
import {
  filedTicketEvent,
  grievanceMessageRepo,
  grievanceRepo,
  principalGrievanceRepo,
  type GrievanceRow,
  type MessageRow,
  type PreviousValues,
  type PrincipalStatusChangeRow,
  type StatusChangeRow,
} from './repo.js';
import {
  GRIEVANCE_CATEGORIES,
  GRIEVANCE_STATUSES,
  OPEN_STATUSES,
  TIMESTAMP_MESSAGE,
  type GrievanceCategory,
  type GrievanceStatus,
  type CreateGrievanceInput,
  type ListGrievancesInput,
  type MessageInput,
  type PrincipalGrievanceInput,
  type StatusChangeInput,
  type UpdateGrievanceInput,
} from './schemas.js';

const TICKET_ID = /^GRV-[A-Z0-9]{8}$/;
const notFound = () => new AppError('not_found', 'Grievance ticket not found');

/** Thrown inside the creating transaction when the drawn ticket_id is taken: rolls back its audit entry too. */
class TicketIdTaken extends Error {}

export interface GrievanceServiceDeps {
  db: Database;
  clock: Clock;
  /** The service's public URL: messages to a data principal link to their Rights Center on the organization's host. */
  publicUrl: URL;
  /** Called in the creating transaction of every ticket (fulfilment creates its tasks there). */
  onFiled?: (tx: TenantTx, ctx: TenantContext, ticket: Pick<GrievanceRow, 'ticket_id' | 'category' | 'client_user_id'>, at: Date) => Promise<void>;
}

const statusWords = (status: GrievanceStatus) => status.replace('_', ' ');

/** The system message a status change adds to the conversation (no note: notes are internal). */
export function statusMessage(status: GrievanceStatus, previous: GrievanceStatus): string {
  return `Status changed from ${statusWords(previous)} to ${statusWords(status)}`;
}

/**
 * The change a system message records, read back from its stored text (statusMessage's exact output),
 * so a reader's page can say it in the reader's language; null for any other text. Messages are stored
 * once, in English (the API's language), and translated at display time.
 */
export function parseStatusMessage(text: string): { status: GrievanceStatus; previous: GrievanceStatus } | null {
  for (const status of GRIEVANCE_STATUSES) for (const previous of GRIEVANCE_STATUSES) if (statusMessage(status, previous) === text) return { status, previous };
  return null;
}

/**
 * What the data principal is sent about their ticket (SMS or email, through the outbox): never the
 * conversation itself, only that there is news, where to read it, and whom to contact. `{contact}` is
 * filled in by the statement that queues it: the contact person, or `ticketNoticeNoContact`.
 */
export function ticketNoticeText(n: { orgName: string; ticketId: string; url: string; status?: GrievanceStatus }): string {
  const news =
    n.status === undefined
      ? `${n.orgName} has replied to your request ${n.ticketId}.`
      : `Your request ${n.ticketId} to ${n.orgName} is now ${statusWords(n.status)}.`;
  return `${news} Read it and answer at ${n.url} {contact}`;
}

/** Whom to contact when the organization has named no contact person (DPDP Rule 9): its Rights Center. */
export function ticketNoticeNoContact(n: { orgName: string; url: string }): string {
  return `To contact ${n.orgName}, use its Rights Center: ${n.url}`;
}

/** The ticket as the API shows it, without what the update replaced. */
function ticketOf({ previous_status: _s, previous_attachment_url: _u, ...row }: GrievanceRow & PreviousValues): GrievanceRow {
  return row;
}

const DAY_MS = 86_400_000;
const FINISHED_STATUSES: readonly GrievanceStatus[] = ['resolved', 'rejected', 'closed'];

export interface TicketClock {
  days_left: number | null;
  overdue: boolean;
}

/**
 * The ticket's clock as of `now` (contract §10): whole days to due_at, a started day counted as one;
 * while on hold the clock stands at the pause's start; finished tickets have none.
 */
export function clockOf(row: Pick<GrievanceRow, 'status' | 'due_at' | 'paused'>, now: Date): TicketClock {
  if (FINISHED_STATUSES.includes(row.status)) return { days_left: null, overdue: false };
  const running = row.status === 'on_hold' ? row.paused.at(-1) : undefined;
  const asOf = running && running.to === null ? new Date(running.from).getTime() : now.getTime();
  const left = new Date(row.due_at).getTime() - asOf;
  // Days still to go count a started day as one (due in 2.5 days: 3); late, a started day counts too
  // (an hour late: -1), so days_left is negative exactly when the ticket is overdue.
  return { days_left: left >= 0 ? Math.ceil(left / DAY_MS) : Math.floor(left / DAY_MS), overdue: left < 0 };
}

export function withClock<T extends Pick<GrievanceRow, 'status' | 'due_at' | 'paused'>>(row: T, now: Date): T & TicketClock {
  return { ...row, ...clockOf(row, now) };
}

export function createGrievanceService({ db, clock, publicUrl, onFiled }: GrievanceServiceDeps) {
  /** Queues the message to the ticket's data principal (nothing when they have no contact on file). */
  function notify(tx: TenantTx, ctx: TenantContext, ticketId: string, at: Date, status?: GrievanceStatus): Promise<void> {
    const url = rightsCenterUrl(publicUrl, ctx.slug);
    return queueTicketNotice(tx, { ticketId, messageId: uuidv7(), at, text: ticketNoticeText({ orgName: ctx.orgName, ticketId, url, status }), noContact: ticketNoticeNoContact({ orgName: ctx.orgName, url }) });
  }

  /** A status change's system message and the notice to the data principal, sent beside its audit entry. */
  function afterStatusChange(tx: TenantTx, ctx: TenantContext, row: GrievanceRow & PreviousValues, at: Date): Promise<unknown>[] {
    return [
      grievanceMessageRepo(tx).addMessage({
        id: uuidv7(),
        ticketId: row.ticket_id,
        sender: 'system',
        message: statusMessage(row.status, row.previous_status),
        attachmentUrl: null,
        actor: ctx.actor,
        at: row.updated_at,
      }),
      notify(tx, ctx, row.ticket_id, at, row.status),
    ];
  }

  /**
   * Files a ticket under a freshly drawn ticket_id: the row and its first history entry, the audit entry
   * and the webhook event (its data read in SQL from the row just written: the due date and the person's
   * id come from the store) leave in one batch, with `also`'s first statements after them. null when the
   * id was taken: the insert wrote nothing, and the entry and the event, written only with the row,
   * neither.
   */
  async function file(
    tx: TenantTx,
    ctx: TenantContext,
    input: CreateGrievanceInput,
    at: Date,
    also?: (ticket: Pick<GrievanceRow, 'ticket_id' | 'category' | 'client_user_id'>) => Promise<void>,
  ): Promise<GrievanceRow | null> {
    const id = uuidv7();
    const ticketId = 'GRV-' + randomCode(UPPER_ALNUM, 8);
    const filed = {
      id,
      ticketId,
      clientUserId: input.client_user_id,
      subject: input.subject,
      description: input.description,
      category: input.category,
      attachmentUrl: input.attachment_url ?? null,
      at,
    };
    const inserting = grievanceRepo(tx).insert({ ...filed, historyId: uuidv7(), actor: ctx.actor });
    const entry = { action: 'grievance.created', targetType: 'grievance', targetId: ticketId, details: { category: input.category, status: 'open' }, onlyWith: { table: 'grievances', id } };
    const event = filedTicketEvent(filed);
    const ticket = { ticket_id: ticketId, category: input.category, client_user_id: input.client_user_id };
    const [row] = await settled(
      alongsideAudit(tx, ctx, at, entry, inserting),
      recordEventFrom(tx, 'grievance.created', at, event.known, event.sql, event.params),
      also?.(ticket),
    );
    return row ? withClock(row, at) : null;
  }

  const service = {
    listForUser(ctx: TenantContext, clientUserId: string): Promise<GrievanceRow[]> {
      // One statement: sent with its transaction in a single round trip (the hot read of this API).
      return grievanceRepo(tenantReads(db, ctx.orgId))
        .listByClientUser(clientUserId)
        .then((rows) => rows.map((r) => withClock(r, clock.now())));
    },

    async create(ctx: TenantContext, input: CreateGrievanceInput): Promise<GrievanceRow> {
      // 36^8 ids per organization: a collision is rare, and retried with a fresh id in a fresh transaction.
      for (let attempt = 0; attempt < 5; attempt++) {
        const at = clock.now();
        try {
          return await withTenant(db, ctx.orgId, async (tx) => {
            // The fulfilment's first reads (its systems) join the filing's batch: filing is two round
            // trips, that batch and COMMIT, when the organization has no system to give tasks to. If the
            // drawn id was taken, the throw rolls back whatever they wrote.
            const row = await file(tx, ctx, input, at, onFiled && ((ticket) => onFiled(tx, ctx, ticket, at)));
            if (!row) throw new TicketIdTaken();
            return row;
          });
        } catch (e) {
          if (!(e instanceof TicketIdTaken)) throw e;
        }
      }
      throw new AppError('internal', 'Could not allocate a ticket id');
    },

    update(ctx: TenantContext, ticketId: string, input: UpdateGrievanceInput): Promise<GrievanceRow> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await grievanceRepo(tx).update({
          ticketId,
          status: input.status,
          attachmentUrl: input.attachment_url,
          at,
          historyId: uuidv7(),
          actor: ctx.actor,
          note: null,
        });
        if (!row) throw notFound();
        // The entry names what really changed, which only the update knows: one more statement after it.
        const statusChanged = row.status !== row.previous_status;
        const fields = [
          ...(statusChanged ? ['status'] : []),
          ...(input.attachment_url !== undefined && row.attachment_url !== row.previous_attachment_url ? ['attachment_url'] : []),
        ];
        const ticket = ticketOf(row);
        await together(
          recordAudit(tx, ctx, at, {
            action: 'grievance.updated',
            targetType: 'grievance',
            targetId: ticketId,
            details: { fields, ...(statusChanged ? { status: row.status, previous_status: row.previous_status } : {}) },
          }),
          ...(statusChanged ? [recordEvent(tx, 'grievance.status_changed', { ticket, status: row.status, previous_status: row.previous_status, note: null }, at)] : []),
          ...(statusChanged ? afterStatusChange(tx, ctx, row, at) : []),
        );
        return withClock(ticket, at);
      });
    },

    /** The management API's status change: its note goes into the history entry. Same status: 409, nothing changes. */
    changeStatus(ctx: TenantContext, ticketId: string, input: StatusChangeInput): Promise<GrievanceRow> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await grievanceRepo(tx).update({
          ticketId,
          status: input.status,
          attachmentUrl: undefined,
          at,
          historyId: uuidv7(),
          actor: ctx.actor,
          note: input.note ?? null,
        });
        if (!row) throw notFound();
        // Throwing rolls the update back: a note is never silently dropped with a change that changed nothing.
        if (row.previous_status === input.status) throw new AppError('conflict', `The ticket is already ${input.status}`);
        const ticket = ticketOf(row);
        await together(
          recordAudit(tx, ctx, at, {
            action: 'grievance.status_changed',
            targetType: 'grievance',
            targetId: ticketId,
            details: { status: row.status, previous_status: row.previous_status, with_note: input.note !== undefined },
          }),
          recordEvent(tx, 'grievance.status_changed', { ticket, status: row.status, previous_status: row.previous_status, note: input.note ?? null }, at),
          ...afterStatusChange(tx, ctx, row, at),
        );
        return withClock(ticket, at);
      });
    },

    /**
     * Moves a ticket's status from inside another feature's transaction (fulfilment: the ticket follows
     * its tasks), with what every status change brings (history entry with the note, system message,
     * notice to the person, audit entry, event); nothing when the ticket's status is not one of `onlyFrom`.
     */
    async moveStatusIn(tx: TenantTx, ctx: TenantContext, m: { ticketId: string; status: GrievanceStatus; note: string; at: Date; onlyFrom: readonly GrievanceStatus[] }): Promise<boolean> {
      const current = await grievanceRepo(tx).get(m.ticketId);
      if (!current || !m.onlyFrom.includes(current.status) || current.status === m.status) return false;
      const row = await grievanceRepo(tx).update({ ticketId: m.ticketId, status: m.status, attachmentUrl: undefined, at: m.at, historyId: uuidv7(), actor: ctx.actor, note: m.note });
      if (!row) return false;
      const ticket = ticketOf(row);
      await together(
        recordAudit(tx, ctx, m.at, {
          action: 'grievance.status_changed',
          targetType: 'grievance',
          targetId: m.ticketId,
          details: { status: row.status, previous_status: row.previous_status, with_note: true, by: 'fulfilment' },
        }),
        recordEvent(tx, 'grievance.status_changed', { ticket, status: row.status, previous_status: row.previous_status, note: m.note }, m.at),
        ...afterStatusChange(tx, ctx, row, m.at),
      );
      return true;
    },

    /**
     * Files a ticket from inside another feature's transaction (fulfilment: an erasure after a consent
     * withdrawal), with the history, audit entry and event of a filing; the caller creates its tasks. A
     * drawn ticket_id that is taken is drawn again in the same transaction (the insert wrote nothing).
     */
    async fileIn(tx: TenantTx, ctx: TenantContext, input: CreateGrievanceInput, at: Date): Promise<GrievanceRow> {
      for (let attempt = 0; attempt < 5; attempt++) {
        const row = await file(tx, ctx, input, at);
        if (row) return row;
      }
      throw new AppError('internal', 'Could not allocate a ticket id');
    },

    /** A system message on a ticket from inside another feature's transaction (fulfilment), with the notice to the person. */
    async addSystemMessageIn(tx: TenantTx, ctx: TenantContext, m: { ticketId: string; text: string; at: Date }): Promise<void> {
      await Promise.all([
        grievanceMessageRepo(tx).addMessage({ id: uuidv7(), ticketId: m.ticketId, sender: 'system', message: m.text, attachmentUrl: null, actor: ctx.actor, at: m.at }),
        notify(tx, ctx, m.ticketId, m.at),
      ]);
    },

    history(ctx: TenantContext, ticketId: string): Promise<StatusChangeRow[]> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const rows = await grievanceRepo(tx).history(ticketId);
        // Every ticket has its creation entry, so no rows means no ticket.
        if (rows.length === 0) throw notFound();
        return rows;
      });
    },

    /** A ticket with its whole status history (oldest first): two statements, sent together. */
    get(ctx: TenantContext, ticketId: string): Promise<GrievanceRow & { history: StatusChangeRow[] }> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = grievanceRepo(tx);
        const [ticket, history] = await Promise.all([repo.get(ticketId), repo.history(ticketId)]);
        if (!ticket) throw notFound();
        return { ...withClock(ticket, clock.now()), history };
      });
    },

    /** Counts for the overview: every ticket per status, and the open ones per category. */
    async summary(ctx: TenantContext) {
      const reads = grievanceRepo(tenantReads(db, ctx.orgId));
      const [rows, clocks, period] = await Promise.all([reads.summary(), reads.clockSummary(clock.now()), grievancePeriodDays(db, ctx.orgId)]);
      const byStatus = Object.fromEntries(GRIEVANCE_STATUSES.map((s) => [s, 0])) as Record<GrievanceStatus, number>;
      const openByCategory = Object.fromEntries(GRIEVANCE_CATEGORIES.map((c) => [c, 0])) as Record<GrievanceCategory, number>;
      for (const { status, category, n } of rows) {
        byStatus[status] += n;
        if (OPEN_STATUSES.includes(status)) openByCategory[category] += n;
      }
      const total = rows.reduce((sum, r) => sum + r.n, 0);
      const open = OPEN_STATUSES.reduce((sum, s) => sum + byStatus[s], 0);
      return {
        total,
        open,
        by_status: byStatus,
        open_by_category: openByCategory,
        overdue: clocks.overdue,
        due_this_week: clocks.due_this_week,
        median_time_to_resolve_seconds: clocks.median_seconds_to_resolve === null ? null : Math.round(clocks.median_seconds_to_resolve),
        grievance_period_days: period,
      };
    },

    /** The organization's tickets, newest first unless asked otherwise, filtered; `to` before `from` is refused. */
    list(ctx: TenantContext, q: ListGrievancesInput) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const from = q.from === undefined ? undefined : new Date(q.from);
      const to = q.to === undefined ? undefined : new Date(q.to);
      const dueBefore = q.due_before === undefined ? undefined : new Date(q.due_before);
      const problems: ErrorDetail[] = [];
      // The schema's date-time admits forms a Date cannot hold (a leap second, an hour-only offset).
      if (dueBefore && Number.isNaN(dueBefore.getTime())) problems.push({ field: 'due_before', message: TIMESTAMP_MESSAGE });
      if (from && Number.isNaN(from.getTime())) problems.push({ field: 'from', message: TIMESTAMP_MESSAGE });
      if (to && Number.isNaN(to.getTime())) problems.push({ field: 'to', message: TIMESTAMP_MESSAGE });
      if (from && to && to.getTime() < from.getTime()) problems.push({ field: 'to', message: 'must not be before from' });
      if (problems.length > 0) {
        return Promise.reject(new AppError('validation_failed', `Invalid request query: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems));
      }
      const now = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const page = await grievanceRepo(tx).list({
          overdue: q.overdue,
          dueBefore,
          now,
          status: q.status,
          category: q.category,
          clientUserId: q.client_user_id,
          from,
          to,
          sort: q.sort ?? 'created_at',
          order: q.order ?? 'desc',
          limit,
          offset,
        });
        return { ...page, data: page.data.map((r) => withClock(r, now)), limit, offset };
      });
    },

    /** The conversation on a ticket, oldest first (the organization's view). */
    async messages(ctx: TenantContext, ticketId: string): Promise<MessageRow[]> {
      if (!TICKET_ID.test(ticketId)) throw notFound();
      const rows = await grievanceMessageRepo(tenantReads(db, ctx.orgId)).messages(ticketId);
      if (!rows) throw notFound();
      return rows;
    },

    /** The organization answers on a ticket (sender agent); the data principal is told by SMS or email. */
    postMessage(ctx: TenantContext, ticketId: string, input: MessageInput): Promise<MessageRow> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      const at = clock.now();
      const id = uuidv7();
      return withTenant(db, ctx.orgId, async (tx) => {
        const [row] = await Promise.all([
          grievanceMessageRepo(tx).addMessage({ id, ticketId, sender: 'agent', message: input.message, attachmentUrl: input.attachment_url ?? null, actor: ctx.actor, at }),
          notify(tx, ctx, ticketId, at),
          recordAudit(tx, ctx, at, { action: 'grievance.message_added', targetType: 'grievance', targetId: ticketId, details: { message_id: id, sender: 'agent' } }),
        ]);
        // No ticket: nothing was written by the message, and the throw rolls back the rest.
        if (!row) throw notFound();
        await recordEvent(tx, 'grievance.message_created', { ticket_id: ticketId, message: row }, at);
        return row;
      });
    },

    // A data principal's own tickets (contract §7): client_user_id is always their dp_id, and another
    // person's ticket is a ticket that does not exist (404). Their nominee, where allowed, files and follows
    // them too (issue 33), recorded as the actor.

    /** Their tickets, newest first. */
    async mine(ctx: ActingContext): Promise<(GrievanceRow & TicketClock)[]> {
      const now = clock.now();
      return (await principalGrievanceRepo(principalReads(db, principalScope(ctx))).list()).map((r) => withClock(r, now));
    },

    /** Files a ticket for themselves: the organization's creation, with their dp_id as client_user_id. */
    fileMine(ctx: ActingContext, input: PrincipalGrievanceInput): Promise<GrievanceRow> {
      return service.create(ctx, { ...input, client_user_id: ctx.actor.dpId });
    },

    /** One of their tickets with its status history (no actors, no notes). */
    async getMine(ctx: ActingContext, ticketId: string): Promise<GrievanceRow & TicketClock & { history: PrincipalStatusChangeRow[] }> {
      if (!TICKET_ID.test(ticketId)) throw notFound();
      const row = await principalGrievanceRepo(principalReads(db, principalScope(ctx))).get(ticketId);
      if (!row) throw notFound();
      return withClock(row, clock.now());
    },

    /** The conversation on one of their tickets, oldest first. */
    async myMessages(ctx: ActingContext, ticketId: string): Promise<MessageRow[]> {
      if (!TICKET_ID.test(ticketId)) throw notFound();
      const rows = await principalGrievanceRepo(principalReads(db, principalScope(ctx))).messages(ticketId);
      if (!rows) throw notFound();
      return rows;
    },

    /** The data principal writes on their ticket (sender user). */
    postMyMessage(ctx: ActingContext, ticketId: string, input: MessageInput): Promise<MessageRow> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      const at = clock.now();
      const id = uuidv7();
      return withPrincipal(db, principalScope(ctx), async (tx) => {
        const [row] = await Promise.all([
          principalGrievanceRepo(tx).addMessage({ id, ticketId, sender: 'user', message: input.message, attachmentUrl: input.attachment_url ?? null, actor: ctx.actor, at }),
          recordAudit(tx, ctx, at, { action: 'grievance.message_added', targetType: 'grievance', targetId: ticketId, details: { message_id: id, sender: 'user' } }),
        ]);
        if (!row) throw notFound();
        await recordEvent(tx, 'grievance.message_created', { ticket_id: ticketId, message: row }, at);
        return row;
      });
    },
  };
  return service;
}

/** The organization's response period (contract §10): 1-90 days, 30 unless changed. */
export async function grievancePeriodDays(db: Database, orgId: string): Promise<number> {
  const rows = await db.tenantQuery<{ grievance_period_days: number }>(orgId, 'select grievance_period_days from organizations where id = $1::uuid', [orgId]);
  return rows[0]?.grievance_period_days ?? DEFAULT_GRIEVANCE_PERIOD_DAYS;
}

export type GrievanceService = ReturnType<typeof createGrievanceService>;
