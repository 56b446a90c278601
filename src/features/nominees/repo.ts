// Nominee SQL. Built from a tenant transaction; org_id is stamped here from it, never taken from input.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import type { NOMINEE_STATUSES, RELATIONSHIPS } from './schemas.js';

export interface NomineeRow {
  id: string;
  client_user_id: string;
  nominee_name: string;
  nominee_email: string;
  nominee_mobile: string;
  relationship: (typeof RELATIONSHIPS)[number];
  purpose_of_appointment: string | null;
  status: (typeof NOMINEE_STATUSES)[number];
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status, verified_at, created_at, updated_at';

export interface NomineeChanges {
  nominee_name?: string;
  nominee_email?: string;
  nominee_mobile?: string;
  relationship?: string;
  purpose_of_appointment?: string | null;
  status?: string;
}

export function nomineeRepo(tx: TenantTx) {
  return {
    listByClientUser(clientUserId: string): Promise<NomineeRow[]> {
      return tx.query<NomineeRow>(
        `select ${COLUMNS} from nominees where org_id = $1 and client_user_id = $2 order by created_at desc, id desc`,
        [tx.orgId, clientUserId],
      );
    },

    async insert(n: {
      id: string;
      clientUserId: string;
      name: string;
      email: string;
      mobile: string;
      relationship: string;
      purpose: string | null;
      at: Date;
    }): Promise<NomineeRow> {
      const rows = await tx.query<NomineeRow>(
        `insert into nominees (org_id, id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship,
                               purpose_of_appointment, status, verified_at, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, 'pending', null, $9::timestamptz, $9::timestamptz)
         returning ${COLUMNS}`,
        [tx.orgId, n.id, n.clientUserId, n.name, n.email, n.mobile, n.relationship, n.purpose, n.at],
      );
      return rows[0]!;
    },

    /** Applies the given fields; verified_at follows status (set on becoming verified, kept, cleared on leaving). */
    async update(id: string, c: NomineeChanges, at: Date): Promise<NomineeRow | null> {
      const rows = await tx.query<NomineeRow>(
        `update nominees set
            nominee_name = coalesce($3::text, nominee_name),
            nominee_email = coalesce($4::text, nominee_email),
            nominee_mobile = coalesce($5::text, nominee_mobile),
            relationship = coalesce($6::text, relationship),
            purpose_of_appointment = case when $7::boolean then $8::text else purpose_of_appointment end,
            status = coalesce($9::text, status),
            verified_at = case when coalesce($9::text, status) = 'verified' then coalesce(verified_at, $10::timestamptz) end,
            updated_at = $10::timestamptz
          where org_id = $1::uuid and id = $2::uuid
          returning ${COLUMNS}`,
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
        ],
      );
      return rows[0] ?? null;
    },

    async remove(id: string): Promise<boolean> {
      const rows = await tx.query('delete from nominees where org_id = $1::uuid and id = $2::uuid returning id', [tx.orgId, id]);
      return rows.length > 0;
    },
  };
}
