// Consent record SQL: append-only records and the data principals they name.
import type { PrincipalTx, TenantTx } from '../../platform/db/tenant-tx.js';
import { isUuid } from '../../platform/ids.js';
import type { PurposeRow } from '../collection-points/index.js';
import type { ConsentAction } from '../consent-links/index.js';
import { PRINCIPAL_CTE } from '../data-principals/index.js';

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

export type ConsentChannel = 'api' | 'link' | 'rights_center' | 'sdk';

export interface ReceiptRow {
  consent_id: string;
  receipt: string | null;
}

const COLUMNS = 'id as consent_id, collection_point_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, created_at';

type NewRecord = Omit<ConsentRecordRow, 'consent_id' | 'created_at'> & { id: string; dataPrincipalId: string; channel: ConsentChannel; at: Date; receipt: string };

/** The row the insert below answers, known before it is sent (so its webhook event leaves with it). */
export function newConsentRow(c: NewRecord): ConsentRecordRow {
  return {
    consent_id: c.id,
    collection_point_id: c.collection_point_id,
    dp_id: c.dp_id,
    consent_action: c.consent_action,
    purposes: c.purposes,
    notice_version: c.notice_version,
    request_id: c.request_id,
    event_id: c.event_id,
    created_at: c.at,
  };
}

export function consentRepo(tx: TenantTx) {
  return {
    /** Records the data principal if new, then appends the consent: one statement. */
    async insert(c: NewRecord) {
      const rows = await tx.query<ConsentRecordRow>(
        `with ${PRINCIPAL_CTE}
         insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, channel, created_at, receipt)
         select $1::uuid, $5::uuid, $6::uuid, (select id from dp limit 1), $3::text, $7::text, $8::text::jsonb, $9::int, $10::uuid, $11::uuid, $12::text, $4::timestamptz, $13::text
         returning ${COLUMNS}`,
        [tx.orgId, c.dataPrincipalId, c.dp_id, c.at, c.id, c.collection_point_id, c.consent_action, JSON.stringify(c.purposes), c.notice_version, c.request_id, c.event_id, c.channel, c.receipt],
      );
      return rows[0]!;
    },

    /** A record's receipt (null receipt: recorded before receipts existed); null when no such record. */
    async receipt(consentId: string): Promise<ReceiptRow | null> {
      if (!isUuid(consentId)) return null;
      const rows = await tx.query<ReceiptRow>(
        `select id as consent_id, receipt from consent_records where org_id = $1::uuid and id = $2::uuid`,
        [tx.orgId, consentId.toLowerCase()],
      );
      return rows[0] ?? null;
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

export interface CurrentConsentRow {
  consent_id: string;
  consent_action: ConsentAction;
  choices: { id: string; granted: boolean }[];
  given_at: Date;
  point_id: string;
  display_id: string;
  name: string;
  notice: string;
  notice_version: number;
  point_purposes: PurposeRow[];
}

export interface PrincipalRecordRow {
  consent_id: string;
  collection_point_id: string;
  consent_action: ConsentAction;
  purposes: { id: string; granted: boolean }[];
  notice_version: number;
  channel: ConsentChannel;
  created_at: Date;
}

/** One data principal's consent records: every statement is bound to their dp_id. */
export function principalConsentRepo(tx: PrincipalTx) {
  return {
    /** The latest record at every collection point where they have one, with the point as it is now: one statement. */
    current(): Promise<CurrentConsentRow[]> {
      return tx.query<CurrentConsentRow>(
        `select * from (
           select distinct on (r.collection_point_id)
                  r.id as consent_id, r.consent_action, r.purposes as choices, r.created_at as given_at,
                  p.id as point_id, p.display_id, p.name, p.notice, p.notice_version, p.purposes as point_purposes
             from consent_records r
             join collection_points p on p.org_id = r.org_id and p.id = r.collection_point_id
            where r.org_id = $1::uuid and r.dp_id = $2::text
            order by r.collection_point_id, r.created_at desc, r.id desc
         ) latest
         order by given_at desc, consent_id desc`,
        [tx.orgId, tx.dpId],
      );
    },

    /** One of their records' receipt: another person's record is no record (null). */
    async receipt(consentId: string): Promise<ReceiptRow | null> {
      if (!isUuid(consentId)) return null;
      const rows = await tx.query<ReceiptRow>(
        `select id as consent_id, receipt from consent_records where org_id = $1::uuid and id = $2::uuid and dp_id = $3::text`,
        [tx.orgId, consentId.toLowerCase(), tx.dpId],
      );
      return rows[0] ?? null;
    },

    /** Every record at one collection point (UUID or display_id), newest first. */
    history(idOrDisplayId: string): Promise<PrincipalRecordRow[]> {
      const byId = isUuid(idOrDisplayId);
      return tx.query<PrincipalRecordRow>(
        `select r.id as consent_id, r.collection_point_id, r.consent_action, r.purposes, r.notice_version, r.channel, r.created_at
           from collection_points p
           join consent_records r on r.org_id = p.org_id and r.collection_point_id = p.id and r.dp_id = $3::text
          where p.org_id = $1::uuid and ${byId ? 'p.id = $2::uuid' : 'p.display_id = $2::text'}
          order by r.created_at desc, r.id desc`,
        [tx.orgId, byId ? idOrDisplayId.toLowerCase() : idOrDisplayId, tx.dpId],
      );
    },
  };
}
