// Grievance SQL. Built from a tenant transaction; org_id is stamped here from it, never taken from input.
import type { PrincipalTx, TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import type { Actor } from '../../platform/auth/access.js';
import type { GrievanceCategory, GrievanceStatus } from './schemas.js';

export interface GrievanceRow {
  id: string;
  ticket_id: string;
  client_user_id: string;
  user_id: string | null;
  subject: string;
  description: string;
  category: GrievanceCategory;
  status: GrievanceStatus;
  attachment_url: string | null;
  created_at: Date;
  updated_at: Date;
  due_at: Date;
  paused: PauseInterval[];
  resolved_at: Date | null;
}

/** A stretch of time the ticket spent on hold: its clock stood still; `to` null while it still does. */
export interface PauseInterval {
  from: string;
  to: string | null;
  reason: string | null;
}

export interface StatusChangeRow {
  status: GrievanceStatus;
  previous_status: GrievanceStatus | null;
  changed_at: Date;
  actor: { type: 'api_key' | 'user' | 'data_principal' | 'nominee'; id: string };
  note: string | null;
}

const COLUMNS = 'id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at, due_at, paused, resolved_at';

const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
/** Statuses in which the organization has answered: the clock has stopped for good. */
const FINISHED = `('resolved', 'rejected', 'closed')`;
const G_COLUMNS = COLUMNS.split(', ').map((c) => `g.${c}`).join(', ');

/** A ticket being filed, as the caller gives it. */
export interface FiledTicket {
  id: string;
  ticketId: string;
  clientUserId: string;
  subject: string;
  description: string;
  category: string;
  attachmentUrl: string | null;
  at: Date;
}

/**
 * The `grievance.created` event's data, `{ticket}`: the filed row as the insert answers it. What the
 * caller knows is sent as JSON; the person's id and the due date, which the insert reads from the store,
 * are read in SQL from the row just written (webhooks' recordEventFrom), so the event leaves with the
 * insert. null when no row has that id (a ticket_id already taken: the insert wrote nothing).
 */
export function filedTicketEvent(t: FiledTicket): { known: Record<string, unknown>; sql: string; params: unknown[] } {
  const ticket = {
    id: t.id,
    ticket_id: t.ticketId,
    client_user_id: t.clientUserId,
    subject: t.subject,
    description: t.description,
    category: t.category,
    status: 'open',
    attachment_url: t.attachmentUrl,
    created_at: t.at,
    updated_at: t.at,
    paused: [],
    resolved_at: null,
  };
  return {
    known: { ticket },
    sql: `select jsonb_build_object('ticket', ($4::text::jsonb -> 'ticket') || jsonb_build_object('user_id', g.user_id, 'due_at', to_char(g.due_at at time zone 'UTC', ${ISO_MS})))
            from grievances g where g.org_id = $1::uuid and g.id = $6::uuid`,
    params: [t.id],
  };
}

/** What an update replaced, so the caller can tell what really changed. */
export interface PreviousValues {
  previous_status: GrievanceStatus;
  previous_attachment_url: string | null;
}

export interface GrievanceFilter {
  status?: GrievanceStatus;
  category?: GrievanceCategory;
  clientUserId?: string;
  from?: Date;
  /** Inclusive. */
  to?: Date;
  /** Unfinished tickets past their due date (the clock running or stopped late), as of `now`. */
  overdue?: boolean;
  dueBefore?: Date;
  now: Date;
  sort: 'created_at' | 'updated_at' | 'due_at';
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export function grievanceRepo(tx: TenantTx) {
  return {
    /** One page of the organization's tickets, newest first, and how many match in all. */
    list(f: GrievanceFilter): Promise<{ data: GrievanceRow[]; count: number }> {
      const params: unknown[] = [tx.orgId];
      // Only the conditions in use, so each shape of filter gets its own plan.
      const where = ['org_id = $1::uuid'];
      if (f.status) where.push(`status = $${params.push(f.status)}::text`);
      if (f.category) where.push(`category = $${params.push(f.category)}::text`);
      if (f.clientUserId !== undefined) where.push(`client_user_id = $${params.push(f.clientUserId)}::text`);
      if (f.from) where.push(`created_at >= $${params.push(f.from)}::timestamptz`);
      if (f.to) where.push(`created_at <= $${params.push(f.to)}::timestamptz`);
      if (f.dueBefore) where.push(`due_at < $${params.push(f.dueBefore)}::timestamptz`);
      if (f.overdue !== undefined) {
        const late = `(status not in ${FINISHED} and due_at < coalesce(paused_at, $${params.push(f.now)}::timestamptz))`;
        where.push(f.overdue ? late : `not ${late}`);
      }
      // sort and order are the schema's enums, never free text.
      return selectPage<GrievanceRow>(tx, { columns: COLUMNS, from: 'grievances', where: where.join(' and '), params, orderBy: `${f.sort} ${f.order}, id ${f.order}`, limit: f.limit, offset: f.offset });
    },

    /** Tickets per (status, category): the overview's counts, one grouped scan. */
    summary(): Promise<{ status: GrievanceStatus; category: GrievanceCategory; n: number }[]> {
      return tx.query(`select status, category, count(*)::int as n from grievances where org_id = $1::uuid group by status, category`, [tx.orgId]);
    },

    /** The clock counts as of `now`: overdue, due within the week, and the median time to resolve (seconds). */
    async clockSummary(now: Date): Promise<{ overdue: number; due_this_week: number; median_seconds_to_resolve: number | null; resolved: number }> {
      const rows = await tx.query<{ overdue: number; due_this_week: number; median_seconds_to_resolve: number | null; resolved: number }>(
        `select count(*) filter (where status not in ${FINISHED} and due_at < coalesce(paused_at, $2::timestamptz))::int as overdue,
                count(*) filter (where status not in ${FINISHED} and paused_at is null and due_at >= $2::timestamptz and due_at < $2::timestamptz + interval '7 days')::int as due_this_week,
                (percentile_cont(0.5) within group (order by extract(epoch from resolved_at - created_at)) filter (where resolved_at is not null))::float8 as median_seconds_to_resolve,
                count(resolved_at)::int as resolved
           from grievances where org_id = $1::uuid`,
        [tx.orgId, now],
      );
      return rows[0]!;
    },

    async get(ticketId: string): Promise<GrievanceRow | null> {
      const rows = await tx.query<GrievanceRow>(`select ${COLUMNS} from grievances where org_id = $1::uuid and ticket_id = $2::text`, [tx.orgId, ticketId]);
      return rows[0] ?? null;
    },

    listByClientUser(clientUserId: string): Promise<GrievanceRow[]> {
      return tx.query<GrievanceRow>(
        `select ${COLUMNS} from grievances where org_id = $1 and client_user_id = $2 order by created_at desc, id desc`,
        [tx.orgId, clientUserId],
      );
    },

    /** Inserts the ticket and its first history entry in one statement; null when the ticket_id was taken. */
    async insert(t: FiledTicket & { historyId: string; actor: Actor }): Promise<GrievanceRow | null> {
      const rows = await tx.query<GrievanceRow>(
        `with g as (
           insert into grievances (org_id, id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at, due_at)
           values ($1::uuid, $2::uuid, $3::text, $4::text,
                   (select id from data_principals where org_id = $1::uuid and dp_id = $4::text),
                   $5::text, $6::text, $7::text, 'open', $8::text, $9::timestamptz, $9::timestamptz,
                   $9::timestamptz + (select grievance_period_days from organizations where id = $1::uuid) * interval '1 day')
           on conflict (org_id, ticket_id) do nothing
           returning ${COLUMNS}
         ), h as (
           insert into grievance_status_changes (org_id, id, grievance_id, status, previous_status, changed_at, actor_type, actor_id, note)
           select $1::uuid, $10::uuid, g.id, 'open', null, $9::timestamptz, $11::text, $12::uuid, null from g
         )
         select ${COLUMNS} from g`,
        [tx.orgId, t.id, t.ticketId, t.clientUserId, t.subject, t.description, t.category, t.attachmentUrl, t.at, t.historyId, t.actor.type, t.actor.id],
      );
      return rows[0] ?? null;
    },

    /**
     * Applies the given fields, bumps updated_at, and appends a history entry when the status changed,
     * in one statement; answers the ticket with the values it had before. null when no ticket has that ticket_id.
     *
     * The time of a change is never earlier than the ticket's last one: a concurrent request may read the
     * clock first and get the row lock second, and history is read in order of time. The locked row is
     * the latest version, so `old` holds the status and time this change really follows.
     */
    async update(u: {
      ticketId: string;
      status: GrievanceStatus | undefined;
      attachmentUrl: string | null | undefined;
      at: Date;
      historyId: string;
      actor: Actor;
      note: string | null;
    }): Promise<(GrievanceRow & PreviousValues) | null> {
      const rows = await tx.query<GrievanceRow & PreviousValues>(
        `with old as (
           select id, status, attachment_url, updated_at, paused_at,
                  coalesce($3::text, status) as new_status,
                  greatest($6::timestamptz, updated_at + interval '1 microsecond') as at
             from grievances where org_id = $1::uuid and ticket_id = $2::text for update
         ), upd as (
           -- The clock: entering on_hold starts a pause (the note is its reason); leaving it ends the pause
           -- and pushes due_at by its length; entering a finished status stamps resolved_at.
           update grievances g
              set status = old.new_status,
                  attachment_url = case when $4::boolean then $5::text else g.attachment_url end,
                  updated_at = old.at,
                  due_at = case when old.status = 'on_hold' and old.new_status <> 'on_hold' and old.paused_at is not null
                                then g.due_at + (old.at - old.paused_at) else g.due_at end,
                  paused_at = case when old.new_status <> 'on_hold' then null
                                   when old.status = 'on_hold' then g.paused_at else old.at end,
                  paused = case
                             when old.status <> 'on_hold' and old.new_status = 'on_hold'
                               then g.paused || jsonb_build_array(jsonb_build_object('from', to_char(old.at at time zone 'UTC', ${ISO_MS}), 'to', null, 'reason', $10::text))
                             when old.status = 'on_hold' and old.new_status <> 'on_hold' and jsonb_array_length(g.paused) > 0
                               then jsonb_set(g.paused, array[(jsonb_array_length(g.paused) - 1)::text, 'to'], to_jsonb(to_char(old.at at time zone 'UTC', ${ISO_MS})))
                             else g.paused end,
                  resolved_at = case when old.new_status not in ${FINISHED} then null
                                     when old.status in ${FINISHED} then g.resolved_at else old.at end
             from old
            where g.org_id = $1::uuid and g.id = old.id
           returning ${G_COLUMNS}, old.status as previous_status, old.attachment_url as previous_attachment_url
         ), h as (
           insert into grievance_status_changes (org_id, id, grievance_id, status, previous_status, changed_at, actor_type, actor_id, note)
           select $1::uuid, $7::uuid, upd.id, upd.status, upd.previous_status, upd.updated_at, $8::text, $9::uuid, $10::text
             from upd where upd.status <> upd.previous_status
         )
         select ${COLUMNS}, previous_status, previous_attachment_url from upd`,
        [
          tx.orgId,
          u.ticketId,
          u.status ?? null,
          u.attachmentUrl !== undefined,
          u.attachmentUrl ?? null,
          u.at,
          u.historyId,
          u.actor.type,
          u.actor.id,
          u.note,
        ],
      );
      return rows[0] ?? null;
    },

    /** The ticket's status history, oldest first; empty when no ticket has that ticket_id. */
    history(ticketId: string): Promise<StatusChangeRow[]> {
      return tx.query<StatusChangeRow>(
        `select h.status, h.previous_status, h.changed_at,
                json_build_object('type', h.actor_type, 'id', h.actor_id) as actor, h.note
           from grievances g
           join grievance_status_changes h on h.org_id = g.org_id and h.grievance_id = g.id
          where g.org_id = $1::uuid and g.ticket_id = $2::text
          order by h.changed_at, h.id`,
        [tx.orgId, ticketId],
      );
    },
  };
}

export interface MessageRow {
  id: string;
  sender: 'user' | 'agent' | 'system';
  message: string;
  created_at: Date;
  attachment_url: string | null;
}

export interface NewMessage {
  id: string;
  ticketId: string;
  sender: MessageRow['sender'];
  message: string;
  attachmentUrl: string | null;
  actor: Actor;
  at: Date;
}

const M_COLUMNS = 'm.id, m.sender, m.message, m.created_at, m.attachment_url';

/** The conversation on a ticket: statements shared by the organization's repo and the principal's. */
function messageStatements(tx: TenantTx, owner: string | null) {
  // A principal's statements carry their dp_id: another person's ticket is a ticket that does not exist.
  const mine = owner === null ? '' : 'and g.client_user_id = $3::text';
  const ownerParam = owner === null ? [] : [owner];
  return {
    /** The messages oldest first; null when there is no such ticket (for this principal). */
    async messages(ticketId: string): Promise<MessageRow[] | null> {
      const rows = await tx.query<MessageRow & { ticket: string }>(
        `select g.id as ticket, ${M_COLUMNS}
           from grievances g
           left join grievance_messages m on m.org_id = g.org_id and m.grievance_id = g.id
          where g.org_id = $1::uuid and g.ticket_id = $2::text ${mine}
          order by m.created_at, m.id`,
        [tx.orgId, ticketId, ...ownerParam],
      );
      if (rows.length === 0) return null;
      return rows.filter((r) => r.id !== null).map(({ ticket: _t, ...m }) => m);
    },

    /** Appends a message to the ticket; null when there is no such ticket (for this principal). */
    async addMessage(m: NewMessage): Promise<MessageRow | null> {
      const at = owner === null ? 3 : 4;
      const rows = await tx.query<MessageRow>(
        `insert into grievance_messages (org_id, id, grievance_id, sender, message, attachment_url, actor_type, actor_id, created_at)
         select $1::uuid, $${at}::uuid, g.id, $${at + 1}::text, $${at + 2}::text, $${at + 3}::text, $${at + 4}::text, $${at + 5}::uuid, $${at + 6}::timestamptz
           from grievances g where g.org_id = $1::uuid and g.ticket_id = $2::text ${mine}
         returning id, sender, message, created_at, attachment_url`,
        [tx.orgId, m.ticketId, ...ownerParam, m.id, m.sender, m.message, m.attachmentUrl, m.actor.type, m.actor.id, m.at],
      );
      return rows[0] ?? null;
    },
  };
}

export function grievanceMessageRepo(tx: TenantTx) {
  return messageStatements(tx, null);
}

/** What a data principal sees of a ticket's status history: no actor ids, no internal notes. */
export interface PrincipalStatusChangeRow {
  status: GrievanceStatus;
  previous_status: GrievanceStatus | null;
  changed_at: Date;
}

/** One data principal's tickets: every statement is bound to their dp_id (the ticket's client_user_id). */
export function principalGrievanceRepo(tx: PrincipalTx) {
  return {
    ...messageStatements(tx, tx.dpId),

    list(): Promise<GrievanceRow[]> {
      return tx.query<GrievanceRow>(
        `select ${COLUMNS} from grievances where org_id = $1 and client_user_id = $2 order by created_at desc, id desc`,
        [tx.orgId, tx.dpId],
      );
    },

    /** The ticket and its status history (oldest first) in one statement; null when it is not theirs. */
    async get(ticketId: string): Promise<(GrievanceRow & { history: PrincipalStatusChangeRow[] }) | null> {
      const rows = await tx.query<GrievanceRow & { history: PrincipalStatusChangeRow[] }>(
        `select ${G_COLUMNS},
                coalesce((select json_agg(json_build_object('status', h.status, 'previous_status', h.previous_status, 'changed_at', h.changed_at) order by h.changed_at, h.id)
                            from grievance_status_changes h where h.org_id = g.org_id and h.grievance_id = g.id), '[]') as history
           from grievances g
          where g.org_id = $1::uuid and g.ticket_id = $2::text and g.client_user_id = $3::text`,
        [tx.orgId, ticketId, tx.dpId],
      );
      const row = rows[0];
      if (!row) return null;
      return { ...row, history: row.history.map((h) => ({ ...h, changed_at: new Date(h.changed_at) })) };
    },
  };
}
