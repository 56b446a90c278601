// Webhook endpoints and their deliveries: SQL only, from a tenant transaction.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import type { EventType } from '../../platform/webhooks/events.js';

export interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  attempt: number;
  attempted_at: Date;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

const ENDPOINT = 'id, url, description, events, enabled, disabled_reason, disabled_at, created_at, updated_at';
const DELIVERY = `d.id, d.endpoint_id, d.event_id, ev.type as event_type, d.status, d.attempts,
  case when d.status = 'pending' then d.next_attempt_at end as next_attempt_at, d.last_attempt_at,
  d.last_response_status, d.last_error, d.delivered_at, d.created_at`;
const DELIVERY_FROM = 'webhook_deliveries d join webhook_events ev on ev.org_id = d.org_id and ev.id = d.event_id';

export function webhookRepo(tx: TenantTx) {
  return {
    async insert(e: { id: string; url: string; description: string | null; events: EventType[]; secret: string; at: Date }): Promise<EndpointRow> {
      const [row] = await tx.query<EndpointRow>(
        `insert into webhook_endpoints (org_id, id, url, description, events, secret, enabled, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text[], $6::text, true, $7::timestamptz, $7::timestamptz)
         returning ${ENDPOINT}`,
        [tx.orgId, e.id, e.url, e.description, e.events, e.secret, e.at],
      );
      return row!;
    },

    list(): Promise<EndpointRow[]> {
      return tx.query<EndpointRow>(`select ${ENDPOINT} from webhook_endpoints where org_id = $1::uuid order by created_at, id`, [tx.orgId]);
    },

    /**
     * `lock`: holds the row until the transaction ends (FOR KEY SHARE: a concurrent DELETE waits, and one
     * that committed first leaves no row), so a delivery inserted for it after cannot lose its endpoint.
     */
    async get(id: string, opts: { lock?: boolean } = {}): Promise<EndpointRow | null> {
      const [row] = await tx.query<EndpointRow>(
        `select ${ENDPOINT} from webhook_endpoints where org_id = $1::uuid and id = $2::uuid${opts.lock ? ' for key share' : ''}`,
        [tx.orgId, id],
      );
      return row ?? null;
    },

    /** Changes what is given; `enabled: true` also clears why it was disabled. */
    async update(id: string, u: { url?: string; description?: string | null; events?: EventType[]; enabled?: boolean; at: Date }): Promise<EndpointRow | null> {
      const [row] = await tx.query<EndpointRow>(
        `update webhook_endpoints set
           url = coalesce($3::text, url),
           description = case when $4::boolean then $5::text else description end,
           events = coalesce($6::text[], events),
           enabled = coalesce($7::boolean, enabled),
           disabled_reason = case when $7::boolean is null then disabled_reason when $7::boolean then null else 'Disabled through the API' end,
           disabled_at = case when $7::boolean is null or enabled = $7::boolean then disabled_at when $7::boolean then null else $8::timestamptz end,
           -- Enabled again: its back-off starts afresh (the worker's failure count, migration 0031).
           failures = case when $7::boolean then 0 else failures end,
           failing_since = case when $7::boolean then null else failing_since end,
           retry_at = case when $7::boolean then null else retry_at end,
           updated_at = $8::timestamptz
         where org_id = $1::uuid and id = $2::uuid
         returning ${ENDPOINT}`,
        [tx.orgId, id, u.url ?? null, u.description !== undefined, u.description ?? null, u.events ?? null, u.enabled ?? null, u.at],
      );
      return row ?? null;
    },

    async setSecret(id: string, secret: string, at: Date): Promise<EndpointRow | null> {
      const [row] = await tx.query<EndpointRow>(
        `update webhook_endpoints set secret = $3::text, updated_at = $4::timestamptz where org_id = $1::uuid and id = $2::uuid returning ${ENDPOINT}`,
        [tx.orgId, id, secret, at],
      );
      return row ?? null;
    },

    /** Deletes the endpoint and its deliveries (the events stay, for other endpoints). */
    async remove(id: string): Promise<boolean> {
      const rows = await tx.query(`delete from webhook_endpoints where org_id = $1::uuid and id = $2::uuid returning id`, [tx.orgId, id]);
      return rows.length > 0;
    },

    deliveries(endpointId: string, f: { status?: string; limit: number; offset: number }) {
      const params: unknown[] = [tx.orgId, endpointId];
      const where = ['d.org_id = $1::uuid', 'd.endpoint_id = $2::uuid'];
      if (f.status) where.push(`d.status = $${params.push(f.status)}::text`);
      return selectPage<DeliveryRow>(tx, {
        columns: DELIVERY,
        from: DELIVERY_FROM,
        where: where.join(' and '),
        params,
        orderBy: 'd.created_at desc, d.id desc',
        limit: f.limit,
        offset: f.offset,
      });
    },

    async delivery(endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
      const [row] = await tx.query<DeliveryRow>(
        `select ${DELIVERY} from ${DELIVERY_FROM} where d.org_id = $1::uuid and d.endpoint_id = $2::uuid and d.id = $3::uuid`,
        [tx.orgId, endpointId, deliveryId],
      );
      return row ?? null;
    },

    /**
     * Lets the worker try the endpoint at once despite its back-off (a test event, a manual retry: someone
     * is waiting for the answer); one more failure backs it off again, longer.
     */
    async wake(endpointId: string): Promise<void> {
      await tx.query(`update webhook_endpoints set retry_at = null where org_id = $1::uuid and id = $2::uuid and retry_at is not null`, [tx.orgId, endpointId]);
    },

    /** Every attempt of the delivery, oldest first (the delivery log). */
    attempts(deliveryId: string): Promise<AttemptRow[]> {
      return tx.query<AttemptRow>(
        `select attempt, attempted_at, duration_ms, response_status, error from webhook_attempts
          where org_id = $1::uuid and delivery_id = $2::uuid order by attempt`,
        [tx.orgId, deliveryId],
      );
    },

    /** Makes the delivery due now (whatever its status); its attempts so far are kept. */
    async retry(endpointId: string, deliveryId: string, at: Date): Promise<boolean> {
      const rows = await tx.query(
        `update webhook_deliveries set status = 'pending', next_attempt_at = $4::timestamptz, delivered_at = null
          where org_id = $1::uuid and endpoint_id = $2::uuid and id = $3::uuid returning id`,
        [tx.orgId, endpointId, deliveryId, at],
      );
      return rows.length > 0;
    },
  };
}
