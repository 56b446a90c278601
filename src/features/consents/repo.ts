// Consent record SQL: append-only records and the data principals they name.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import type { ConsentAction } from '../consent-links/index.js';

export interface ConsentRecordRow {
  consent_id: string;
  collection_point_id: string;
  dp_id: string;
  consent_action: ConsentAction;
  purposes: { id: string; granted: boolean }[];
  notice_version: number;
  request_id: string | null;
  event_id: string | null;
  created_at: Date;
}

const COLUMNS = 'id as consent_id, collection_point_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, created_at';

export function consentRepo(tx: TenantTx) {
  return {
    /** Records the data principal if new, then appends the consent: one statement. */
    async insert(c: Omit<ConsentRecordRow, 'consent_id' | 'created_at'> & { id: string; dataPrincipalId: string; channel: 'api' | 'link'; at: Date }) {
      const rows = await tx.query<ConsentRecordRow>(
        `with new_dp as (
           insert into data_principals (org_id, id, dp_id, created_at) values ($1::uuid, $2::uuid, $3::text, $4::timestamptz)
           on conflict (org_id, dp_id) do nothing returning id
         ), dp as (
           select id from new_dp union all select id from data_principals where org_id = $1::uuid and dp_id = $3::text
         )
         insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, channel, created_at)
         select $1::uuid, $5::uuid, $6::uuid, (select id from dp limit 1), $3::text, $7::text, $8::text::jsonb, $9::int, $10::uuid, $11::uuid, $12::text, $4::timestamptz
         returning ${COLUMNS}`,
        [tx.orgId, c.dataPrincipalId, c.dp_id, c.at, c.id, c.collection_point_id, c.consent_action, JSON.stringify(c.purposes), c.notice_version, c.request_id, c.event_id, c.channel],
      );
      return rows[0]!;
    },

    async latest(collectionPointId: string, dpId: string): Promise<ConsentRecordRow | null> {
      const rows = await tx.query<ConsentRecordRow>(
        `select ${COLUMNS} from consent_records where org_id = $1::uuid and dp_id = $2::text and collection_point_id = $3::uuid
          order by created_at desc, id desc limit 1`,
        [tx.orgId, dpId, collectionPointId],
      );
      return rows[0] ?? null;
    },
  };
}
