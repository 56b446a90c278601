// Signing key SQL (table signing_keys, migration 0018): the current key, the public keys, rotation.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { isUuid } from '../../platform/ids.js';
import type { NewSigningKey, SigningPublicJwk } from '../../platform/crypto/signing-keys.js';

export interface SigningContextRow {
  slug: string;
  name: string;
  kid: string | null;
  private_key_enc: string | null;
  previous_id: string | null;
}

export interface SigningKeyRow {
  kid: string;
  public_jwk: SigningPublicJwk;
  created_at: Date;
  retired_at: Date | null;
}

const KEY_COLUMNS = 'kid, public_jwk, created_at, retired_at';

/** A consent record without a receipt, with what its late receipt needs (see unsignedRecords). */
export interface UnsignedRecordRow {
  id: string;
  collection_point_id: string;
  dp_id: string;
  consent_action: 'approved' | 'partial_consent' | 'declined' | 'revoked';
  purposes: { id: string; granted: boolean }[];
  notice_version: number;
  request_id: string | null;
  event_id: string | null;
  channel: 'api' | 'link' | 'rights_center' | 'sdk';
  created_at: Date;
  previous_id: string | null;
  display_id: string;
  point_name: string;
  /** The notice version the record was given under, when it was kept (notice_versions). */
  version_notice: string | null;
  version_purposes: { id: string; name: string; required: boolean }[] | null;
  /** The point's current purposes: names for purposes of versions that were not kept. */
  point_purposes: { id: string; name: string; required: boolean }[];
}

export function signingKeyRepo(tx: TenantTx) {
  return {
    /**
     * Everything signing a record needs that the service does not have yet, in one statement: the
     * organization's name, its current key (null when it has none yet) and, when asked, the previous
     * record of this data principal at this collection point (UUID or display_id).
     */
    async context(previousOf: { collectionPoint: string; dpId: string } | null): Promise<SigningContextRow> {
      const byId = previousOf !== null && isUuid(previousOf.collectionPoint);
      const rows = await tx.query<SigningContextRow>(
        `select o.slug, o.name, k.kid, k.private_key_enc,
                ${
                  previousOf === null
                    ? 'null::uuid'
                    : `(select r.id from collection_points cp
                          join consent_records r on r.org_id = cp.org_id and r.collection_point_id = cp.id and r.dp_id = $3::text
                         where cp.org_id = $1::uuid and ${byId ? 'cp.id = $2::uuid' : 'cp.display_id = $2::text'}
                         order by r.created_at desc, r.id desc limit 1)`
                } as previous_id
           from organizations o
           left join signing_keys k on k.org_id = o.id and k.retired_at is null
          where o.id = $1::uuid`,
        previousOf === null
          ? [tx.orgId]
          : [tx.orgId, byId ? previousOf.collectionPoint.toLowerCase() : previousOf.collectionPoint, previousOf.dpId],
      );
      return rows[0]!;
    },

    /** Adds a first key unless one appeared meanwhile; returns the current key either way. */
    async addFirst(key: NewSigningKey, at: Date): Promise<{ kid: string; private_key_enc: string }> {
      const rows = await tx.query<{ kid: string; private_key_enc: string }>(
        // A key added by a concurrent first use is past this statement's snapshot: the conflict waits for
        // it and the no-op update returns it (do nothing then a select answered no row: issue 34).
        `with current_key as (
           select kid, private_key_enc from signing_keys where org_id = $1::uuid and retired_at is null
         ), added as (
           insert into signing_keys as k (org_id, kid, public_jwk, private_key_enc, created_at)
           select $1::uuid, $2::text, $3::text::jsonb, $4::text, $5::timestamptz where not exists (select 1 from current_key)
           on conflict (org_id) where retired_at is null do update set retired_at = k.retired_at
           returning kid, private_key_enc
         )
         select kid, private_key_enc from current_key
         union all
         select kid, private_key_enc from added`,
        [tx.orgId, key.kid, JSON.stringify(key.public_jwk), key.private_key_enc, at],
      );
      return rows[0]!;
    },

    /**
     * Retires the current key (if any) and makes `key` current: two statements, in this order, so the
     * partial unique index (one current key) never sees two. A concurrent rotation fails on that index.
     */
    async rotate(key: NewSigningKey, at: Date): Promise<{ added: SigningKeyRow; retired: string | null }> {
      const retired = await tx.query<{ kid: string }>(
        `update signing_keys set retired_at = $2::timestamptz where org_id = $1::uuid and retired_at is null returning kid`,
        [tx.orgId, at],
      );
      const rows = await tx.query<SigningKeyRow>(
        `insert into signing_keys (org_id, kid, public_jwk, private_key_enc, created_at)
         values ($1::uuid, $2::text, $3::text::jsonb, $4::text, $5::timestamptz)
         returning ${KEY_COLUMNS}`,
        [tx.orgId, key.kid, JSON.stringify(key.public_jwk), key.private_key_enc, at],
      );
      return { added: rows[0]!, retired: retired[0]?.kid ?? null };
    },

    /**
     * Up to `limit` records without a receipt after `after` (keyset on id, from the partial index of
     * migration 0024), each with its previous record (this person, this point, the one before it in
     * time: what the record's own receipt would have named), the notice version it was given under and
     * the collection point's names.
     */
    unsignedRecords(after: string, limit: number): Promise<UnsignedRecordRow[]> {
      return tx.query<UnsignedRecordRow>(
        `select r.id, r.collection_point_id, r.dp_id, r.consent_action, r.purposes, r.notice_version, r.request_id, r.event_id, r.channel, r.created_at,
                (select p.id from consent_records p
                  where p.org_id = r.org_id and p.dp_id = r.dp_id and p.collection_point_id = r.collection_point_id
                    and (p.created_at, p.id) < (r.created_at, r.id)
                  order by p.created_at desc, p.id desc limit 1) as previous_id,
                cp.display_id, cp.name as point_name, nv.notice as version_notice, nv.purposes as version_purposes, cp.purposes as point_purposes
           from consent_records r
           join collection_points cp on cp.org_id = r.org_id and cp.id = r.collection_point_id
           left join notice_versions nv on nv.org_id = r.org_id and nv.collection_point_id = r.collection_point_id and nv.version = r.notice_version
          where r.org_id = $1::uuid and r.receipt is null and r.id > $2::uuid
          order by r.id
          limit $3::integer`,
        [tx.orgId, after, limit],
      );
    },

    /** Sets the receipts of records that still have none; returns the ids it set (a record signed meanwhile is left as it is). */
    async setReceipts(receipts: { id: string; receipt: string }[]): Promise<string[]> {
      if (receipts.length === 0) return [];
      const rows = await tx.query<{ id: string }>(
        `update consent_records r set receipt = v.receipt
           from unnest($2::uuid[], $3::text[]) as v (id, receipt)
          where r.org_id = $1::uuid and r.id = v.id and r.receipt is null
          returning r.id`,
        [tx.orgId, receipts.map((x) => x.id), receipts.map((x) => x.receipt)],
      );
      return rows.map((r) => r.id);
    },

    /** Takes the organization's backfill lock for this transaction: false when another transaction holds it (try), else waits. */
    async backfillLock(lockClass: number, wait: boolean): Promise<boolean> {
      if (wait) {
        await tx.query('select 1 from (select pg_advisory_xact_lock($1::integer, hashtext($2::text))) l', [lockClass, tx.orgId]);
        return true;
      }
      const [row] = await tx.query<{ locked: boolean }>('select pg_try_advisory_xact_lock($1::integer, hashtext($2::text)) as locked', [lockClass, tx.orgId]);
      return row!.locked === true;
    },

    /** Every key the organization ever had, oldest first (public parts only). */
    list(): Promise<SigningKeyRow[]> {
      return tx.query<SigningKeyRow>(`select ${KEY_COLUMNS} from signing_keys where org_id = $1::uuid order by created_at, kid`, [tx.orgId]);
    },
  };
}
