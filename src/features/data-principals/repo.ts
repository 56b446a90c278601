// Data principal SQL: contacts (the organization's), tokens, sign-in codes, the contact person, and the
// principal's own profile. Built from a tenant transaction (or, for the profile, a principal one).
import type { PrincipalTx, TenantTx } from '../../platform/db/tenant-tx.js';

export interface ContactRow {
  dp_id: string;
  phone: string | null;
  email: string | null;
  name: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ContactPersonRow {
  id: string;
  full_name: string;
  email: string;
  phone: string | null;
  appointment_date: Date | null;
  qualifications: string | null;
  responsibilities: string | null;
  working_hours: string | null;
  response_time: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CodeRow {
  dp_id: string | null;
  code_hash: string;
  sent_at: Date;
  expires_at: Date;
  attempts: number;
  window_started_at: Date;
  sends: number;
}

const CONTACT_COLUMNS = 'dp_id, phone, email, name, created_at, updated_at';
export const CONTACT_PERSON_COLUMNS =
  'id, full_name, email, phone, appointment_date, qualifications, responsibilities, working_hours, response_time, created_at, updated_at';

export function contactRepo(tx: TenantTx) {
  return {
    /**
     * Creates or changes the contact: `undefined` keeps a field, null clears it. Answers the row, whether
     * it was created (xmax is 0 on a row this statement inserted), and the fields whose value changed
     * (`prev` reads the statement's snapshot, before the change): one statement.
     */
    async upsert(dpId: string, c: { phone?: string | null; email?: string | null; name?: string | null }, at: Date) {
      const rows = await tx.query<ContactRow & { created: boolean; changed_fields: string[] }>(
        `with prev as (
           select phone, email, name from data_principal_contacts where org_id = $1::uuid and dp_id = $2::text
         ), up as (
           insert into data_principal_contacts as c (org_id, dp_id, phone, email, name, created_at, updated_at)
           values ($1::uuid, $2::text, $4::text, $6::text, $8::text, $9::timestamptz, $9::timestamptz)
           on conflict (org_id, dp_id) do update set
             phone = case when $3::boolean then excluded.phone else c.phone end,
             email = case when $5::boolean then excluded.email else c.email end,
             name = case when $7::boolean then excluded.name else c.name end,
             updated_at = excluded.updated_at
           returning ${CONTACT_COLUMNS}, (xmax = 0) as created
         )
         select up.*,
                array_remove(array[
                  case when up.phone is distinct from (select phone from prev) then 'phone' end,
                  case when up.email is distinct from (select email from prev) then 'email' end,
                  case when up.name is distinct from (select name from prev) then 'name' end
                ], null) as changed_fields
           from up`,
        [tx.orgId, dpId, c.phone !== undefined, c.phone ?? null, c.email !== undefined, c.email ?? null, c.name !== undefined, c.name ?? null, at],
      );
      return rows[0]!;
    },

    /** The contact, or a bare record when the principal is known only from a consent; null when neither. */
    async get(dpId: string): Promise<ContactRow | null> {
      const rows = await tx.query<ContactRow>(
        `select $2::text as dp_id, c.phone, c.email, c.name,
                coalesce(c.created_at, d.created_at) as created_at, coalesce(c.updated_at, d.created_at) as updated_at
           from (select 1) one
           left join data_principal_contacts c on c.org_id = $1::uuid and c.dp_id = $2::text
           left join data_principals d on d.org_id = $1::uuid and d.dp_id = $2::text
          where c.dp_id is not null or d.id is not null`,
        [tx.orgId, dpId],
      );
      return rows[0] ?? null;
    },

    /** The data principal with this phone or email on file (the earliest recorded, when several share it). */
    async byContact(kind: 'phone' | 'email', value: string): Promise<{ dp_id: string } | null> {
      const rows = await tx.query<{ dp_id: string }>(
        `select dp_id from data_principal_contacts where org_id = $1::uuid and ${kind === 'phone' ? 'phone' : 'email'} = $2::text
          order by created_at, dp_id limit 1`,
        [tx.orgId, value],
      );
      return rows[0] ?? null;
    },
  };
}

/**
 * The data principal of a write, recorded if new, as the CTE `dp` (its `id`), for the start of a `with`:
 * `$1` the organization, `$2` the id a new person gets, `$3` their dp_id, `$4` the time. Used by every
 * statement that may meet a person first (a consent, a token). A request that meets the same new person
 * at once inserted them after this statement's snapshot: the conflict waits for it and the no-op update
 * returns its row (do nothing would return none, and the snapshot cannot see it). Issue 34.
 */
export const PRINCIPAL_CTE = `known as (
           select id from data_principals where org_id = $1::uuid and dp_id = $3::text
         ), new_dp as (
           insert into data_principals as p (org_id, id, dp_id, created_at)
           select $1::uuid, $2::uuid, $3::text, $4::timestamptz where not exists (select 1 from known)
           on conflict (org_id, dp_id) do update set dp_id = p.dp_id returning id
         ), dp as (
           select id from known union all select id from new_dp
         )`;

export function tokenRepo(tx: TenantTx) {
  return {
    /** Records the data principal if new, then stores the token's hash: one statement; answers their internal id. */
    async insert(t: { dpId: string; newPrincipalId: string; tokenHash: string; source: 'minted' | 'code' | 'nominee_minted' | 'nominee_code'; at: Date; expiresAt: Date; nomineeId?: string }): Promise<string> {
      const rows = await tx.query<{ data_principal_id: string }>(
        `with ${PRINCIPAL_CTE}, directory as (
           -- Which organization the token belongs to, for the bare base host (migration 0017).
           insert into dp_token_orgs (token_hash, org_id, expires_at) values ($5::text, $1::uuid, $7::timestamptz)
         )
         insert into dp_tokens (org_id, token_hash, data_principal_id, dp_id, source, created_at, expires_at, nominee_id)
         select $1::uuid, $5::text, (select id from dp limit 1), $3::text, $6::text, $4::timestamptz, $7::timestamptz, $8::uuid
         returning data_principal_id`,
        [tx.orgId, t.newPrincipalId, t.dpId, t.at, t.tokenHash, t.source, t.expiresAt, t.nomineeId ?? null],
      );
      return rows[0]!.data_principal_id;
    },
  };
}

export interface RightsSessionRow {
  data_principal_id: string;
  dp_id: string;
  expires_at: Date;
}

/** The Rights Center's browser sessions (migration 0035): stored by hash, ended at sign-out. */
export function rightsSessionRepo(tx: TenantTx) {
  return {
    /**
     * Records the data principal if new, then the session, and deletes this person's sessions that have
     * expired or were ended (so they never pile up; migration 0036): one statement; answers their internal id.
     */
    async insert(s: { dpId: string; newPrincipalId: string; sessionHash: string; source: 'code' | 'token'; at: Date; expiresAt: Date }): Promise<string> {
      const rows = await tx.query<{ data_principal_id: string }>(
        `with dead as (
           delete from rights_center_sessions
            where org_id = $1::uuid and dp_id = $3::text and (expires_at <= $4::timestamptz or ended_at is not null)
         ), new_dp as (
           insert into data_principals (org_id, id, dp_id, created_at) values ($1::uuid, $2::uuid, $3::text, $4::timestamptz)
           on conflict (org_id, dp_id) do nothing returning id
         ), dp as (
           select id from new_dp union all select id from data_principals where org_id = $1::uuid and dp_id = $3::text
         )
         insert into rights_center_sessions (org_id, session_hash, data_principal_id, dp_id, source, created_at, expires_at)
         select $1::uuid, $5::text, (select id from dp limit 1), $3::text, $6::text, $4::timestamptz, $7::timestamptz
         returning data_principal_id`,
        [tx.orgId, s.newPrincipalId, s.dpId, s.at, s.sessionHash, s.source, s.expiresAt],
      );
      return rows[0]!.data_principal_id;
    },

    /** A live session (not ended, not expired at `now`), or null. */
    async live(sessionHash: string, now: Date): Promise<RightsSessionRow | null> {
      const rows = await tx.query<RightsSessionRow>(
        `select data_principal_id, dp_id, expires_at from rights_center_sessions
          where org_id = $1::uuid and session_hash = $2::text and ended_at is null and expires_at > $3::timestamptz`,
        [tx.orgId, sessionHash, now],
      );
      return rows[0] ?? null;
    },

    async end(sessionHash: string, at: Date): Promise<void> {
      await tx.query('update rights_center_sessions set ended_at = $3::timestamptz where org_id = $1::uuid and session_hash = $2::text and ended_at is null', [
        tx.orgId,
        sessionHash,
        at,
      ]);
    },
  };
}

/**
 * A person's own dpt_ token that still works (not revoked, not expired at `now`): who it acts for and until
 * when. A nominee's token is not one: it never opens the person's Rights Center session.
 */
export async function liveDpToken(tx: TenantTx, tokenHash: string, now: Date): Promise<{ dp_id: string; expires_at: Date } | null> {
  const rows = await tx.query<{ dp_id: string; expires_at: Date }>(
    `select dp_id, expires_at from dp_tokens
      where org_id = $1::uuid and token_hash = $2::text and revoked_at is null and expires_at > $3::timestamptz and nominee_id is null`,
    [tx.orgId, tokenHash, now],
  );
  return rows[0] ?? null;
}

export function codeRepo(tx: TenantTx) {
  return {
    async lock(contactHash: string): Promise<CodeRow | null> {
      const rows = await tx.query<CodeRow>(
        `select dp_id, code_hash, sent_at, expires_at, attempts, window_started_at, sends
           from dp_sign_in_codes where org_id = $1::uuid and contact_hash = $2::text for update`,
        [tx.orgId, contactHash],
      );
      return rows[0] ?? null;
    },

    /** Stores a new code (tries reset) and, for a contact on file, queues its message: one statement. */
    async issue(c: {
      contactHash: string;
      dpId: string | null;
      codeHash: string;
      at: Date;
      expiresAt: Date;
      windowStartedAt: Date;
      sends: number;
      message: { id: string; channel: 'sms' | 'email'; recipient: string; body: string } | null;
    }): Promise<void> {
      await tx.query(
        `with code as (
           insert into dp_sign_in_codes (org_id, contact_hash, dp_id, code_hash, sent_at, expires_at, attempts, window_started_at, sends)
           values ($1::uuid, $2::text, $3::text, $4::text, $5::timestamptz, $6::timestamptz, 0, $7::timestamptz, $8::int)
           on conflict (org_id, contact_hash) do update
             set dp_id = excluded.dp_id, code_hash = excluded.code_hash, sent_at = excluded.sent_at, expires_at = excluded.expires_at,
                 attempts = 0, window_started_at = excluded.window_started_at, sends = excluded.sends
         )
         insert into outbound_messages (org_id, id, channel, recipient, body, status, next_attempt_at, created_at)
         select $1::uuid, $9::uuid, $10::text, $11::text, $12::text, 'queued', $5::timestamptz, $5::timestamptz
          where $9::uuid is not null`,
        [
          tx.orgId,
          c.contactHash,
          c.dpId,
          c.codeHash,
          c.at,
          c.expiresAt,
          c.windowStartedAt,
          c.sends,
          c.message?.id ?? null,
          c.message?.channel ?? null,
          c.message?.recipient ?? null,
          c.message?.body ?? null,
        ],
      );
    },

    async countWrongTry(contactHash: string): Promise<void> {
      await tx.query('update dp_sign_in_codes set attempts = attempts + 1 where org_id = $1::uuid and contact_hash = $2::text', [tx.orgId, contactHash]);
    },

    /** A used code cannot be used again: it expires now. */
    async spend(contactHash: string, at: Date): Promise<void> {
      await tx.query('update dp_sign_in_codes set expires_at = $3::timestamptz where org_id = $1::uuid and contact_hash = $2::text', [tx.orgId, contactHash, at]);
    },
  };
}

export function contactPersonRepo(tx: TenantTx) {
  return {
    async get(): Promise<ContactPersonRow | null> {
      const rows = await tx.query<ContactPersonRow>(`select ${CONTACT_PERSON_COLUMNS} from dpo_contacts where org_id = $1::uuid`, [tx.orgId]);
      return rows[0] ?? null;
    },

    /** The contact person with the organization's grievance period (GET /dpo, contract §10), in one statement; null when none is set. */
    async getWithPeriod(): Promise<(ContactPersonRow & { grievance_period_days: number }) | null> {
      const rows = await tx.query<ContactPersonRow & { grievance_period_days: number }>(
        `select c.*, (select o.grievance_period_days from organizations o where o.id = $1::uuid) as grievance_period_days
           from (select ${CONTACT_PERSON_COLUMNS} from dpo_contacts where org_id = $1::uuid) c`,
        [tx.orgId],
      );
      return rows[0] ?? null;
    },

    /** Sets the contact person (every field: absent optional ones become null); answers whether it was new. */
    async put(p: Omit<ContactPersonRow, 'created_at' | 'updated_at'>, at: Date): Promise<ContactPersonRow & { created: boolean }> {
      const rows = await tx.query<ContactPersonRow & { created: boolean }>(
        `insert into dpo_contacts as d (org_id, id, full_name, email, phone, appointment_date, qualifications, responsibilities, working_hours, response_time, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::timestamptz, $7::text, $8::text, $9::text, $10::text, $11::timestamptz, $11::timestamptz)
         on conflict (org_id) do update set
           full_name = excluded.full_name, email = excluded.email, phone = excluded.phone, appointment_date = excluded.appointment_date,
           qualifications = excluded.qualifications, responsibilities = excluded.responsibilities, working_hours = excluded.working_hours,
           response_time = excluded.response_time, updated_at = excluded.updated_at
         returning ${CONTACT_PERSON_COLUMNS}, (xmax = 0) as created`,
        [tx.orgId, p.id, p.full_name, p.email, p.phone, p.appointment_date, p.qualifications, p.responsibilities, p.working_hours, p.response_time, at],
      );
      return rows[0]!;
    },
  };
}

/** The principal's own profile: their contact and the organization's contact person, one statement. */
export function profileRepo(tx: PrincipalTx) {
  return {
    async get(): Promise<{ contact: Pick<ContactRow, 'phone' | 'email' | 'name'> | null; person: ContactPersonRow | null }> {
      const rows = await tx.query<{ contact: Pick<ContactRow, 'phone' | 'email' | 'name'> | null; person: ContactPersonRow | null }>(
        `select (select json_build_object('phone', phone, 'email', email, 'name', name) from data_principal_contacts
                  where org_id = $1::uuid and dp_id = $2::text) as contact,
                (select row_to_json(d) from (select ${CONTACT_PERSON_COLUMNS} from dpo_contacts where org_id = $1::uuid) d) as person`,
        [tx.orgId, tx.dpId],
      );
      return rows[0] ?? { contact: null, person: null };
    },
  };
}

/**
 * Queues a message about a ticket to the data principal who filed it, by SMS to their phone on file or
 * else by email, in one statement that reads nothing back (so it rides in the batch of the change):
 * nothing is queued when they have no contact on file. `{contact}` in the text becomes the contact person
 * ("Contact person: name, email"), or `noContact` (how to reach the organization) when none is configured.
 */
export async function queueTicketNotice(
  tx: TenantTx,
  n: { ticketId: string; messageId: string; at: Date; text: string; noContact: string },
): Promise<void> {
  await tx.query(
    `insert into outbound_messages (org_id, id, channel, recipient, body, status, next_attempt_at, created_at)
     select $1::uuid, $2::uuid, case when c.phone is not null then 'sms' else 'email' end, coalesce(c.phone, c.email),
            replace($5::text, '{contact}', coalesce((select 'Contact person: ' || d.full_name || ', ' || d.email from dpo_contacts d where d.org_id = $1::uuid), $6::text)),
            'queued', $4::timestamptz, $4::timestamptz
       from grievances g
       join data_principal_contacts c on c.org_id = g.org_id and c.dp_id = g.client_user_id
      where g.org_id = $1::uuid and g.ticket_id = $3::text and (c.phone is not null or c.email is not null)`,
    [tx.orgId, n.messageId, n.ticketId, n.at, n.text, n.noContact],
  );
}
