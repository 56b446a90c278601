// Nominee SQL. Built from a tenant transaction; org_id is stamped here from it, never taken from input.
import type { PrincipalTx, TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import type { NOMINEE_STATUSES, RELATIONSHIPS } from './schemas.js';

export type NomineeStatus = (typeof NOMINEE_STATUSES)[number];

export interface NomineeRow {
  id: string;
  client_user_id: string;
  nominee_name: string;
  nominee_email: string;
  nominee_mobile: string;
  relationship: (typeof RELATIONSHIPS)[number];
  purpose_of_appointment: string | null;
  status: NomineeStatus;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status, verified_at, created_at, updated_at';

/** What a new nominee is, as the insert below writes it and answers it. */
export interface NewNominee {
  id: string;
  clientUserId: string;
  name: string;
  email: string;
  mobile: string;
  relationship: string;
  purpose: string | null;
  at: Date;
}

/** The row the insert answers, known before it is sent (its webhook event leaves with it). */
export function newNomineeRow(n: NewNominee): NomineeRow {
  return {
    id: n.id,
    client_user_id: n.clientUserId,
    nominee_name: n.name,
    nominee_email: n.email,
    nominee_mobile: n.mobile,
    relationship: n.relationship as NomineeRow['relationship'],
    purpose_of_appointment: n.purpose,
    status: 'pending',
    verified_at: null,
    created_at: n.at,
    updated_at: n.at,
  };
}

const N_COLUMNS = COLUMNS.split(', ').map((c) => `n.${c}`).join(', ');

/** What an update replaced: the status before, and the fields whose value really changed. */
export interface NomineeChange {
  previous_status: NomineeStatus;
  changed_fields: string[];
}

export interface NomineeChanges {
  nominee_name?: string;
  nominee_email?: string;
  nominee_mobile?: string;
  relationship?: string;
  purpose_of_appointment?: string | null;
  status?: string;
}

/**
 * The nominee statements. With an `owner` (a data principal's dp_id) every statement that reads or
 * changes a nominee is bound to that person's nominees: another person's nominee does not exist.
 */
export function nomineeRepo(tx: TenantTx, owner: string | null = null) {
  const mine = owner === null ? '' : 'and client_user_id = $12::text';
  return {
    /** One page of the organization's nominees, newest first, and how many match in all. */
    list(f: { status?: NomineeStatus; relationship?: string; clientUserId?: string; limit: number; offset: number }): Promise<{ data: NomineeRow[]; count: number }> {
      const params: unknown[] = [tx.orgId];
      const where = ['org_id = $1::uuid'];
      if (f.status) where.push(`status = $${params.push(f.status)}::text`);
      if (f.relationship) where.push(`relationship = $${params.push(f.relationship)}::text`);
      if (f.clientUserId !== undefined) where.push(`client_user_id = $${params.push(f.clientUserId)}::text`);
      return selectPage<NomineeRow>(tx, { columns: COLUMNS, from: 'nominees', where: where.join(' and '), params, orderBy: 'created_at desc, id desc', limit: f.limit, offset: f.offset });
    },

    listByClientUser(clientUserId: string): Promise<NomineeRow[]> {
      return tx.query<NomineeRow>(
        `select ${COLUMNS} from nominees where org_id = $1 and client_user_id = $2 order by created_at desc, id desc`,
        [tx.orgId, clientUserId],
      );
    },

    async insert(n: NewNominee): Promise<NomineeRow> {
      const rows = await tx.query<NomineeRow>(
        `insert into nominees (org_id, id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship,
                               purpose_of_appointment, status, verified_at, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, 'pending', null, $9::timestamptz, $9::timestamptz)
         returning ${COLUMNS}`,
        [tx.orgId, n.id, n.clientUserId, n.name, n.email, n.mobile, n.relationship, n.purpose, n.at],
      );
      return rows[0]!;
    },

    /**
     * Applies the given fields; verified_at follows status (set on becoming verified, kept, cleared on
     * leaving). Answers the nominee with its previous status and the names of the fields whose value changed.
     */
    async update(id: string, c: NomineeChanges, at: Date, reverify = false): Promise<(NomineeRow & NomineeChange) | null> {
      const rows = await tx.query<NomineeRow & NomineeChange>(
        `with prev as (
           select id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status
             from nominees where org_id = $1::uuid and id = $2::uuid ${mine} for update
         ), next as (
           -- A change of who the nominee is, made with reverify, sends them back to pending.
           select case when $11::boolean and (coalesce($3::text, prev.nominee_name) is distinct from prev.nominee_name
                                              or coalesce($4::text, prev.nominee_email) is distinct from prev.nominee_email
                                              or coalesce($5::text, prev.nominee_mobile) is distinct from prev.nominee_mobile
                                              or coalesce($6::text, prev.relationship) is distinct from prev.relationship)
                       then 'pending' else coalesce($9::text, prev.status) end as status
             from prev
         )
         update nominees n set
            nominee_name = coalesce($3::text, n.nominee_name),
            nominee_email = coalesce($4::text, n.nominee_email),
            nominee_mobile = coalesce($5::text, n.nominee_mobile),
            relationship = coalesce($6::text, n.relationship),
            purpose_of_appointment = case when $7::boolean then $8::text else n.purpose_of_appointment end,
            status = next.status,
            verified_at = case when next.status = 'verified' then coalesce(n.verified_at, $10::timestamptz) end,
            updated_at = $10::timestamptz
           from prev, next
          where n.org_id = $1::uuid and n.id = prev.id
          returning ${N_COLUMNS}, prev.status as previous_status,
                    array_remove(array[
                      case when n.nominee_name is distinct from prev.nominee_name then 'nominee_name' end,
                      case when n.nominee_email is distinct from prev.nominee_email then 'nominee_email' end,
                      case when n.nominee_mobile is distinct from prev.nominee_mobile then 'nominee_mobile' end,
                      case when n.relationship is distinct from prev.relationship then 'relationship' end,
                      case when n.purpose_of_appointment is distinct from prev.purpose_of_appointment then 'purpose_of_appointment' end,
                      case when n.status is distinct from prev.status then 'status' end
                    ], null) as changed_fields`,
        [
          tx.orgId,
          id,
          c.nominee_name ?? null,
          c.nominee_email ?? null,
          c.nominee_mobile ?? null,
          c.relationship ?? null,
          c.purpose_of_appointment !== undefined,
          c.purpose_of_appointment ?? null,
          c.status ?? null,
          at,
          reverify,
          ...(owner === null ? [] : [owner]),
        ],
      );
      return rows[0] ?? null;
    },

    async remove(id: string): Promise<boolean> {
      const rows = await tx.query(
        `delete from nominees where org_id = $1::uuid and id = $2::uuid ${owner === null ? '' : 'and client_user_id = $3::text'} returning id`,
        [tx.orgId, id, ...(owner === null ? [] : [owner])],
      );
      return rows.length > 0;
    },
  };
}

/** One data principal's nominees: every statement is bound to their dp_id (the nominee's client_user_id). */
export function principalNomineeRepo(tx: PrincipalTx) {
  const repo = nomineeRepo(tx, tx.dpId);
  return {
    list: () => repo.listByClientUser(tx.dpId),
    insert: (n: Omit<Parameters<typeof repo.insert>[0], 'clientUserId'>) => repo.insert({ ...n, clientUserId: tx.dpId }),
    update: repo.update,
    remove: repo.remove,
  };
}

/** A verified appointment a nominee may act under: whom for, as what, since when. */
export interface ActingAppointment {
  nominee_id: string;
  dp_id: string;
  relationship: string;
  verified_at: Date;
  /** The appointing person's name when the organization has it on file. */
  person_name: string | null;
}

/**
 * A nominee acting for the person (issue 33): the organization's choice (fulfilment_settings) and the
 * appointments, read together so the rule is decided on one snapshot.
 */
export function actingRepo(tx: TenantTx) {
  const allowed = `coalesce((select s.nominees_may_act from fulfilment_settings s where s.org_id = $1::uuid), false)`;
  return {
    /** Whether the organization lets nominees act, and the appointment (whose it is, its status); null when there is none. */
    async check(nomineeId: string): Promise<{ allowed: boolean; appointment: { dp_id: string; status: NomineeStatus } | null }> {
      const rows = await tx.query<{ allowed: boolean; appointment: { dp_id: string; status: NomineeStatus } | null }>(
        `select ${allowed} as allowed,
                (select json_build_object('dp_id', n.client_user_id, 'status', n.status) from nominees n where n.org_id = $1::uuid and n.id = $2::uuid) as appointment`,
        [tx.orgId, nomineeId],
      );
      return rows[0] ?? { allowed: false, appointment: null };
    },

    /** Whether the organization lets nominees act, and the verified appointments of the nominee with this email or mobile, oldest first. */
    async appointments(kind: 'phone' | 'email', value: string): Promise<{ allowed: boolean; appointments: ActingAppointment[] }> {
      const [setting, appointments] = await Promise.all([
        tx.query<{ allowed: boolean }>(`select ${allowed} as allowed`, [tx.orgId]),
        tx.query<ActingAppointment>(
          `select n.id as nominee_id, n.client_user_id as dp_id, n.relationship, n.verified_at, c.name as person_name
             from nominees n left join data_principal_contacts c on c.org_id = n.org_id and c.dp_id = n.client_user_id
            where n.org_id = $1::uuid and n.${kind === 'phone' ? 'nominee_mobile' : 'nominee_email'} = $2::text and n.status = 'verified'
            order by n.verified_at, n.id`,
          [tx.orgId, value],
        ),
      ]);
      return { allowed: setting[0]?.allowed ?? false, appointments };
    },
  };
}
