// Consent link SQL: requests, their link instances, the daily rollups and the outbox rows written with
// them. Built from a tenant transaction; org_id is stamped here from it.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { isUuid } from '../../platform/ids.js';
import type { AuditedRow } from '../audit/index.js';
import type { CollectionPointRow } from '../collection-points/index.js';
import type { ConsentAction } from './schemas.js';

export interface RequestRow {
  request_id: string;
  event_id: string;
  collection_point_id: string;
  asset_id: string;
  phone: string;
  dp_id: string | null;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
  consent_action: ConsentAction | null;
  regeneration_count: number;
}

/** What creating a request checked: its collection point and the point's asset status. */
export interface CheckedCollectionPoint {
  id: string;
  display_id: string;
  asset_id: string;
  status: CollectionPointRow['status'];
  asset_status: CollectionPointRow['status'];
  /** Whether the request was created (the point is of the given asset, and both are active). */
  created: boolean;
}

/** The request createRequest wrote, for the audit entry that must exist only with it. */
export function createdRequest(requestId: string): AuditedRow {
  return { table: 'consent_requests', id: requestId, detailColumns: ['asset_id', 'collection_point_id'] };
}

/**
 * The `consent_link.created` event's data: what the caller knows, with the asset and the collection
 * point's UUID read in SQL from the request row just written (the body may name the point by its display
 * id), so the event leaves with the insert (webhooks' recordEventFrom). null, so no event, when the
 * request was not created.
 */
export function createdRequestEvent(requestId: string): { sql: string; params: unknown[] } {
  return {
    sql: `select $4::text::jsonb || jsonb_build_object('asset_id', r.asset_id, 'collection_point_id', r.collection_point_id)
            from consent_requests r where r.org_id = $1::uuid and r.id = $6::uuid`,
    params: [requestId],
  };
}

/** Which of a day's count rows a write adds to: the connection's (migration 0085); reads sum them all. */
const COUNT_SHARD = '(pg_backend_pid() % 16)::smallint';

export interface OutboundMessage {
  id: string;
  channel: 'sms' | 'email';
  recipient: string;
  body: string;
}

/** What the history is filtered by; ids already known to be well-formed. */
export interface HistoryFilter {
  assetId: string;
  collectionPointUuid?: string;
  collectionPointDisplayId?: string;
  eventId?: string;
  dpId?: string;
  from: Date | null;
  /** Inclusive. */
  to: Date;
}

export interface PointCounts {
  collection_point_id: string;
  total: number;
  completed: number;
  active: number;
}

const REQUEST_COLUMNS = `r.id as request_id, r.current_event_id as event_id, r.collection_point_id, r.asset_id, r.phone, r.dp_id,
  r.created_at, r.expires_at, r.completed_at, r.consent_action, r.regeneration_count`;

/** The WHERE clause of a filter, with only the conditions in use (so each shape gets its own plan). */
function whereOf(f: HistoryFilter, params: unknown[], window: { from: Date | null; to: Date | null; toExclusive?: boolean }): string {
  const p = (v: unknown) => `$${params.push(v)}`;
  const parts = ['r.org_id = $1::uuid', `r.asset_id = ${p(f.assetId)}::uuid`];
  if (f.collectionPointUuid) parts.push(`r.collection_point_id = ${p(f.collectionPointUuid)}::uuid`);
  if (f.collectionPointDisplayId) {
    parts.push(`r.collection_point_id = (select id from collection_points where org_id = $1::uuid and display_id = ${p(f.collectionPointDisplayId)}::text)`);
  }
  if (f.eventId) parts.push(`r.id = (select request_id from consent_link_events where org_id = $1::uuid and id = ${p(f.eventId)}::uuid)`);
  if (f.dpId) parts.push(`r.dp_id = ${p(f.dpId)}::text`);
  if (window.from) parts.push(`r.created_at >= ${p(window.from)}::timestamptz`);
  if (window.to) parts.push(`r.created_at ${window.toExclusive ? '<' : '<='} ${p(window.to)}::timestamptz`);
  return parts.join(' and ');
}

export function consentLinkRepo(tx: TenantTx) {
  return {
    /**
     * Looks up the collection point (by UUID or display_id) with its asset, and creates the request only
     * if the point is of asset `assetId` (null: matches none) and both are active: the request, its
     * first link instance, the day's rollup and the outbox rows. One statement, so the checks cost no
     * round trip of their own. Answers the point whether or not it created the request (null: no such
     * point), so the caller can say which check failed.
     */
    async createRequest(r: {
      requestId: string;
      eventId: string;
      collectionPoint: string;
      assetId: string | null;
      dpId: string | null;
      phone: string;
      tokenHash: string;
      at: Date;
      expiresAt: Date;
      messages: OutboundMessage[];
    }): Promise<CheckedCollectionPoint | null> {
      const byId = isUuid(r.collectionPoint);
      const rows = await tx.query<CheckedCollectionPoint>(
        `with point as (
           select cp.id, cp.display_id, cp.asset_id, cp.status, a.status as asset_status
             from collection_points cp join assets a on a.org_id = cp.org_id and a.id = cp.asset_id
            where cp.org_id = $1::uuid and ${byId ? 'cp.id = $4::uuid' : 'cp.display_id = $4::text'}
         ), req as (
           insert into consent_requests (org_id, id, asset_id, collection_point_id, dp_id, phone, current_event_id, created_at, expires_at)
           select $1::uuid, $2::uuid, point.asset_id, point.id, $5::text, $6::text, $7::uuid, $8::timestamptz, $9::timestamptz
             from point
            where point.asset_id = $3::uuid and point.status = 'active' and point.asset_status = 'active'
           returning id, asset_id, collection_point_id
         ), ev as (
           insert into consent_link_events (org_id, id, request_id, token_hash, created_at, expires_at)
           select $1::uuid, $7::uuid, req.id, $10::text, $8::timestamptz, $9::timestamptz from req
         ), daily as (
           -- The connection's own row of the day's counts (migration 0085): no wait on another's commit.
           insert into consent_link_daily_counts (org_id, asset_id, day, collection_point_id, shard, created, completed)
           select $1::uuid, req.asset_id, ($8::timestamptz at time zone 'UTC')::date, req.collection_point_id, ${COUNT_SHARD}, 1, 0 from req
           on conflict (org_id, asset_id, day, collection_point_id, shard) do update set created = consent_link_daily_counts.created + 1
         ), msgs as (
           insert into outbound_messages (org_id, id, channel, recipient, body, request_id, event_id, status, next_attempt_at, created_at)
           select $1::uuid, m.id, m.channel, m.recipient, m.body, req.id, $7::uuid, 'queued', $8::timestamptz, $8::timestamptz
             from req cross join jsonb_to_recordset($11::text::jsonb) as m(id uuid, channel text, recipient text, body text)
         ), contact as (
           -- The link's phone becomes the data principal's phone on file when they have none (contract §7).
           insert into data_principal_contacts as c (org_id, dp_id, phone, created_at, updated_at)
           select $1::uuid, $5::text, $6::text, $8::timestamptz, $8::timestamptz from req where $5::text is not null
           on conflict (org_id, dp_id) do update set phone = excluded.phone, updated_at = excluded.updated_at where c.phone is null
         )
         select point.id, point.display_id, point.asset_id, point.status, point.asset_status, exists (select from req) as created
           from point`,
        [
          tx.orgId,
          r.requestId,
          r.assetId,
          byId ? r.collectionPoint.toLowerCase() : r.collectionPoint,
          r.dpId,
          r.phone,
          r.eventId,
          r.at,
          r.expiresAt,
          r.tokenHash,
          JSON.stringify(r.messages),
        ],
      );
      return rows[0] ?? null;
    },

    async lockRequest(requestId: string): Promise<RequestRow | null> {
      const rows = await tx.query<RequestRow>(`select ${REQUEST_COLUMNS} from consent_requests r where r.org_id = $1::uuid and r.id = $2::uuid for update`, [
        tx.orgId,
        requestId,
      ]);
      return rows[0] ?? null;
    },

    /** Supersedes the current link, issues a new one and counts the regeneration: one statement. */
    async regenerate(r: {
      requestId: string;
      previousEventId: string;
      eventId: string;
      tokenHash: string;
      at: Date;
      expiresAt: Date;
      messages: OutboundMessage[];
    }): Promise<number> {
      const rows = await tx.query<{ regeneration_count: number }>(
        `with old as (
           update consent_link_events set superseded_at = $4::timestamptz where org_id = $1::uuid and id = $3::uuid
         ), ev as (
           insert into consent_link_events (org_id, id, request_id, token_hash, created_at, expires_at)
           values ($1::uuid, $5::uuid, $2::uuid, $6::text, $4::timestamptz, $7::timestamptz)
         ), msgs as (
           insert into outbound_messages (org_id, id, channel, recipient, body, request_id, event_id, status, next_attempt_at, created_at)
           select $1::uuid, m.id, m.channel, m.recipient, m.body, $2::uuid, $5::uuid, 'queued', $4::timestamptz, $4::timestamptz
             from jsonb_to_recordset($8::text::jsonb) as m(id uuid, channel text, recipient text, body text)
         )
         update consent_requests set current_event_id = $5::uuid, expires_at = $7::timestamptz, regeneration_count = regeneration_count + 1
          where org_id = $1::uuid and id = $2::uuid
          returning regeneration_count`,
        [tx.orgId, r.requestId, r.previousEventId, r.at, r.eventId, r.tokenHash, r.expiresAt, JSON.stringify(r.messages)],
      );
      return rows[0]!.regeneration_count;
    },

    /** A link instance with its request, the request locked: what completing a consent needs to check. */
    async lockByEvent(eventId: string): Promise<(RequestRow & { this_event_superseded_at: Date | null; this_event_expires_at: Date }) | null> {
      const rows = await tx.query<RequestRow & { this_event_superseded_at: Date | null; this_event_expires_at: Date }>(
        `select ${REQUEST_COLUMNS}, e.superseded_at as this_event_superseded_at, e.expires_at as this_event_expires_at
           from consent_link_events e
           join consent_requests r on r.org_id = e.org_id and r.id = e.request_id
          where e.org_id = $1::uuid and e.id = $2::uuid
          for update of r`,
        [tx.orgId, eventId],
      );
      return rows[0] ?? null;
    },

    /** Marks the request complete and counts it on its creation day's rollup: one statement. */
    async complete(requestId: string, action: ConsentAction, dpId: string, at: Date): Promise<void> {
      await tx.query(
        `with upd as (
           update consent_requests set completed_at = $3::timestamptz, consent_action = $4::text, dp_id = coalesce(dp_id, $5::text)
            where org_id = $1::uuid and id = $2::uuid and completed_at is null
            returning asset_id, collection_point_id, created_at
         )
         insert into consent_link_daily_counts (org_id, asset_id, day, collection_point_id, shard, created, completed)
         select $1::uuid, asset_id, (created_at at time zone 'UTC')::date, collection_point_id, ${COUNT_SHARD}, 0, 1 from upd
         on conflict (org_id, asset_id, day, collection_point_id, shard) do update set completed = consent_link_daily_counts.completed + 1`,
        [tx.orgId, requestId, at, action, dpId],
      );
    },

    /** A withdrawal shows on the latest completed request of that data principal at that collection point. */
    async markLatestRevoked(collectionPointId: string, dpId: string): Promise<void> {
      await tx.query(
        `update consent_requests set consent_action = 'revoked'
          where org_id = $1::uuid and id = (
            select id from consent_requests
             where org_id = $1::uuid and collection_point_id = $2::uuid and dp_id = $3::text and completed_at is not null
             order by completed_at desc, id desc limit 1)`,
        [tx.orgId, collectionPointId, dpId],
      );
    },

    /** Links created and completed per creation day (UTC), from the rollups. */
    createdPerDay(fromDay: string, toDay: string, assetId: string | null): Promise<{ day: string; created: number; completed: number }[]> {
      return tx.query(
        `select to_char(day, 'YYYY-MM-DD') as day, sum(created)::int as created, sum(completed)::int as completed
           from consent_link_daily_counts
          where org_id = $1::uuid and day between $2::date and $3::date and ($4::uuid is null or asset_id = $4::uuid)
          group by day`,
        [tx.orgId, fromDay, toDay, assetId],
      );
    },

    /** Links still open at `now` per creation day: one range of the open-links index per asset. */
    activePerDay(since: Date, now: Date, assetId: string | null): Promise<{ day: string; active: number }[]> {
      return tx.query(
        `select to_char((r.created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as active
           from assets a cross join lateral (
             select o.created_at from consent_requests o
              where o.org_id = $1::uuid and o.asset_id = a.id and o.completed_at is null and o.expires_at > $3::timestamptz
                and o.created_at >= $2::timestamptz) r
          where a.org_id = $1::uuid and ($4::uuid is null or a.id = $4::uuid)
          group by 1`,
        [tx.orgId, since, now, assetId],
      );
    },

    page(f: HistoryFilter, limit: number, offset: number): Promise<RequestRow[]> {
      const params: unknown[] = [tx.orgId];
      const where = whereOf(f, params, { from: f.from, to: f.to });
      return tx.query<RequestRow>(
        `select ${REQUEST_COLUMNS} from consent_requests r where ${where}
          order by r.created_at desc, r.id desc limit ${'$' + params.push(limit)}::int offset ${'$' + params.push(offset)}::int`,
        params,
      );
    },

    /** Exact counts per collection point over a created_at window (the whole filter when not given). */
    exactCounts(f: HistoryFilter, now: Date, window: { from: Date | null; to: Date | null; toExclusive?: boolean } = { from: f.from, to: f.to }): Promise<PointCounts[]> {
      const params: unknown[] = [tx.orgId];
      const where = whereOf(f, params, window);
      return tx.query<PointCounts>(
        `select r.collection_point_id, count(*)::int as total,
                count(*) filter (where r.completed_at is not null)::int as completed,
                count(*) filter (where r.completed_at is null and r.expires_at > ${'$' + params.push(now)}::timestamptz)::int as active
           from consent_requests r where ${where}
          group by r.collection_point_id`,
        params,
      );
    },

    /** Links still open (not completed, expiring after now) per collection point: a day's worth at most. */
    activeCounts(f: HistoryFilter, now: Date): Promise<{ collection_point_id: string; active: number }[]> {
      const params: unknown[] = [tx.orgId];
      const where = whereOf(f, params, { from: f.from, to: f.to });
      return tx.query(
        `select r.collection_point_id, count(*)::int as active from consent_requests r
          where ${where} and r.completed_at is null and r.expires_at > ${'$' + params.push(now)}::timestamptz
          group by r.collection_point_id`,
        params,
      );
    },

    /** Created and completed links per collection point over whole UTC days [fromDay, toDay). */
    rollupCounts(f: HistoryFilter, fromDay: Date | null, toDay: Date): Promise<{ collection_point_id: string; total: number; completed: number }[]> {
      const params: unknown[] = [tx.orgId, f.assetId];
      const parts = ['d.org_id = $1::uuid', 'd.asset_id = $2::uuid', `d.day < ($${params.push(toDay)}::timestamptz at time zone 'UTC')::date`];
      if (fromDay) parts.push(`d.day >= ($${params.push(fromDay)}::timestamptz at time zone 'UTC')::date`);
      if (f.collectionPointUuid) parts.push(`d.collection_point_id = $${params.push(f.collectionPointUuid)}::uuid`);
      if (f.collectionPointDisplayId) {
        parts.push(`d.collection_point_id = (select id from collection_points where org_id = $1::uuid and display_id = $${params.push(f.collectionPointDisplayId)}::text)`);
      }
      return tx.query(
        `select d.collection_point_id, sum(d.created)::int as total, sum(d.completed)::int as completed
           from consent_link_daily_counts d where ${parts.join(' and ')}
          group by d.collection_point_id`,
        params,
      );
    },
  };
}
