// Events for webhooks (contract §9): recordEvent writes an event, and one pending delivery for each of the
// organization's enabled endpoints subscribed to its type, in ONE statement inside the caller's tenant
// transaction, so an event exists exactly when its change committed. With no endpoint subscribed nothing
// is written. The webhook worker (./worker.ts) sends the deliveries later, never inside the request.
import type { TenantTx } from '../db/tenant-tx.js';
import { uuidv7 } from '../ids.js';

export const EVENT_TYPES = [
  'grievance.created',
  'grievance.status_changed',
  'grievance.message_created',
  'grievance.overdue',
  'nominee.created',
  'nominee.updated',
  'nominee.deleted',
  'consent.recorded',
  'consent.withdrawn',
  'consent_link.created',
  'consent_link.completed',
  'data_principal.signed_in',
  // A signed checkpoint of the organization's audit log (issue 32 item 2): witness endpoints subscribe to it.
  'checkpoint.published',
  'fulfilment.task_created',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Sent only by POST /api/v1/webhooks/{id}/test, to that one endpoint. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Values of the event's `data`: JSON-serialisable, Dates as ISO strings. */
export type EventData = Record<string, unknown>;

function json(data: EventData): string {
  return JSON.stringify(data, (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v));
}

/**
 * Records `type` with `data` in the caller's transaction: the event row and its deliveries commit or roll
 * back with the change. One statement, so it can be sent alongside the change's own (no extra round trip).
 */
export async function recordEvent(tx: TenantTx, type: EventType, data: EventData, at: Date): Promise<void> {
  await tx.query(
    // FOR KEY SHARE: an endpoint deleted meanwhile is skipped, and one being deleted waits for this
    // transaction, so a delivery never loses its endpoint (without it, 23503 answered a change's request
    // or the DELETE with a 500: issue 34).
    `with subscribed as (
       select id from webhook_endpoints where org_id = $1::uuid and enabled and $3::text = any(events) for key share
     ), ev as (
       insert into webhook_events (org_id, id, type, data, created_at)
       select $1::uuid, $2::uuid, $3::text, $4::text::jsonb, $5::timestamptz where exists (select 1 from subscribed)
       returning id
     )
     insert into webhook_deliveries (org_id, id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at)
     select $1::uuid, gen_random_uuid(), s.id, ev.id, 'pending', 0, $5::timestamptz, $5::timestamptz from subscribed s cross join ev`,
    [tx.orgId, uuidv7(), type, json(data), at],
  );
}

/**
 * As recordEvent, with the data completed in SQL from what the statements sent before it in the
 * transaction wrote: `dataSql` is a jsonb expression that may use `$1` (the organization), `$4` (the
 * `known` part, as text: `$4::text::jsonb`) and `$6`… (`params`). No event when it is null. So a change
 * whose event carries values only the change's own statement knows (a due date from the organization's
 * settings, an id resolved from a display id) sends its event with the change: no round trip of its own.
 */
export async function recordEventFrom(tx: TenantTx, type: EventType, at: Date, known: EventData, dataSql: string, params: readonly unknown[] = []): Promise<void> {
  await tx.query(
    `with subscribed as (
       select id from webhook_endpoints where org_id = $1::uuid and enabled and $3::text = any(events) for key share
     ), ev as (
       insert into webhook_events (org_id, id, type, data, created_at)
       select $1::uuid, $2::uuid, $3::text, d.data, $5::timestamptz from (select (${dataSql})::jsonb as data) d
        where d.data is not null and exists (select 1 from subscribed)
       returning id
     )
     insert into webhook_deliveries (org_id, id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at)
     select $1::uuid, gen_random_uuid(), s.id, ev.id, 'pending', 0, $5::timestamptz, $5::timestamptz from subscribed s cross join ev`,
    [tx.orgId, uuidv7(), type, json(known), at, ...params],
  );
}

/** A test event for one endpoint (enabled or not): returns the delivery's id. */
export async function recordTestEvent(tx: TenantTx, endpointId: string, at: Date): Promise<{ event_id: string; delivery_id: string }> {
  const eventId = uuidv7();
  const deliveryId = uuidv7();
  await tx.query(
    `with ev as (
       insert into webhook_events (org_id, id, type, data, created_at) values ($1::uuid, $2::uuid, $4::text, $5::text::jsonb, $6::timestamptz)
       returning id
     )
     insert into webhook_deliveries (org_id, id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at)
     select $1::uuid, $3::uuid, $7::uuid, ev.id, 'pending', 0, $6::timestamptz, $6::timestamptz from ev`,
    [tx.orgId, eventId, deliveryId, TEST_EVENT_TYPE, json({ message: 'A test event sent from Assent', endpoint_id: endpointId }), at, endpointId],
  );
  return { event_id: eventId, delivery_id: deliveryId };
}

/**
 * Waits for statements sent side by side in one transaction and answers their values (so a change's
 * own answer can be used), or throws the first failure once all have settled.
 */
export async function settled<T extends unknown[]>(...statements: { [K in keyof T]: Promise<T[K]> | undefined }): Promise<T> {
  const results = await Promise.allSettled(statements);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as T;
}

/**
 * Waits for statements sent side by side in one transaction (a change's follow-ups: its audit entry and
 * its event), then throws the first failure: every statement settles before the transaction ends.
 */
export async function together(...statements: Promise<unknown>[]): Promise<void> {
  for (const r of await Promise.allSettled(statements)) if (r.status === 'rejected') throw r.reason;
}
