// Consent links: a request for consent sent to a data principal's phone as a magic link on the
// organization's subdomain, regenerated when it expires, completed by a consent, and listed in a
// filterable history whose status is derived from time (never swept).
import type { Database } from '../../platform/db/types.js';
import { withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { maskPhone, normalisePhone } from '../../platform/phone.js';
import { newOpaqueToken } from '../../platform/crypto/opaque-tokens.js';
import { alongsideAudit } from '../audit/index.js';
import { recordEventFrom, settled } from '../../platform/webhooks/events.js';
import { consentLinkRepo, createdRequest, createdRequestEvent, type HistoryFilter, type OutboundMessage, type PointCounts, type RequestRow } from './repo.js';
import { TIMESTAMP_MESSAGE, type ConsentAction, type DailyCountsInput, type CreateConsentLinkInput, type DuplicateConsentLinkInput, type HistoryQueryInput, type LinkStatus } from './schemas.js';

export const MAX_REGENERATIONS = 5;
const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface ConsentLinkServiceDeps {
  db: Database;
  clock: Clock;
  publicUrl: URL;
  defaultCountryCode: string;
}

export function linkStatus(r: Pick<RequestRow, 'completed_at' | 'expires_at'>, now: Date): LinkStatus {
  if (r.completed_at) return 'complete';
  return r.expires_at.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** `<scheme>://<slug>.<host>[:<port>]/c/<token>` on PUBLIC_URL. */
export function consentLinkUrl(publicUrl: URL, slug: string, token: string): string {
  return `${publicUrl.protocol}//${slug}.${publicUrl.host}/c/${token}`;
}

function messagesFor(ctx: TenantContext, link: string, expiresAt: Date, to: { phone?: string; email?: string }): OutboundMessage[] {
  const text = `${ctx.orgName} asks for your consent. Review and choose here: ${link} (valid until ${expiresAt.toISOString()})`;
  const out: OutboundMessage[] = [];
  if (to.phone) out.push({ id: uuidv7(), channel: 'sms', recipient: to.phone, body: text });
  if (to.email) out.push({ id: uuidv7(), channel: 'email', recipient: to.email, body: text });
  return out;
}

function deliveryStatus(messages: OutboundMessage[]): { sms?: 'queued'; email?: 'queued' } {
  return Object.fromEntries(messages.map((m) => [m.channel, 'queued' as const]));
}

/** Whole UTC days inside [from, to] (to inclusive), or null when there is none. */
export function wholeDays(from: Date | null, to: Date): { fromDay: Date | null; toDay: Date } | null {
  const toDay = new Date(Math.floor((to.getTime() + 1) / DAY) * DAY);
  const fromDay = from === null ? null : new Date(Math.ceil(from.getTime() / DAY) * DAY);
  if (fromDay && fromDay.getTime() >= toDay.getTime()) return null;
  return { fromDay, toDay };
}

export function createConsentLinkService({ db, clock, publicUrl, defaultCountryCode }: ConsentLinkServiceDeps) {
  /** Counts per collection point from the daily rollups plus exact counts of the partial days at the edges. */
  async function rollupCounts(repo: ReturnType<typeof consentLinkRepo>, f: HistoryFilter, now: Date): Promise<PointCounts[]> {
    const days = wholeDays(f.from, f.to);
    if (!days) return repo.exactCounts(f, now);
    const parts = await Promise.all([
      repo.rollupCounts(f, days.fromDay, days.toDay),
      f.from && days.fromDay && f.from < days.fromDay ? repo.exactCounts(f, now, { from: f.from, to: days.fromDay, toExclusive: true }) : [],
      repo.exactCounts(f, now, { from: days.toDay, to: f.to }),
      repo.activeCounts(f, now),
    ]);
    const byPoint = new Map<string, PointCounts>();
    const entry = (id: string) => {
      let e = byPoint.get(id);
      if (!e) byPoint.set(id, (e = { collection_point_id: id, total: 0, completed: 0, active: 0 }));
      return e;
    };
    for (const rows of [parts[0], parts[1], parts[2]]) {
      for (const r of rows) {
        const e = entry(r.collection_point_id);
        e.total += r.total;
        e.completed += r.completed;
      }
    }
    for (const r of parts[3]) entry(r.collection_point_id).active = r.active;
    return [...byPoint.values()];
  }

  return {
    async create(ctx: TenantContext, input: CreateConsentLinkInput) {
      const phone = normalisePhone(input.phone, defaultCountryCode);
      const at = clock.now();
      const expiresAt = new Date(at.getTime() + (input.expiry_hours ?? 24) * HOUR);
      // UUIDs are case-insensitive on input (the collection point is looked up that way too). A string
      // the body schema takes as a UUID but PostgreSQL would not (urn:uuid:…) matches no asset.
      const assetId = input.asset_id.toLowerCase();
      return withTenant(db, ctx.orgId, async (tx) => {
        const requestId = uuidv7();
        const eventId = uuidv7();
        const { token, hash } = newOpaqueToken();
        const link = consentLinkUrl(publicUrl, ctx.slug, token);
        const messages = messagesFor(ctx, link, expiresAt, { phone: input.send_sms === false ? undefined : phone, email: input.email?.toLowerCase() });
        // Ids and channels only: never the phone, the email or the dp_id. The asset and the collection
        // point's UUID come from the request row, which exists only if the checks below pass.
        const event = {
          action: 'consent_link.created',
          targetType: 'consent_link',
          targetId: requestId,
          details: { event_id: eventId, channels: messages.map((m) => m.channel) },
          onlyWith: createdRequest(requestId),
        };
        // The checks run in the insert's own statement, and the audit entry and the webhook event (the
        // link itself, which carries a token, and the phone are never in it) are sent with it: one round
        // trip with BEGIN, then COMMIT. A refusal below rolls back a transaction that wrote nothing.
        const known = { request_id: requestId, event_id: eventId, dp_id: input.dp_id ?? null, expires_at: expiresAt, channels: messages.map((m) => m.channel) };
        const created = createdRequestEvent(requestId);
        const creating = consentLinkRepo(tx).createRequest({
          requestId,
          eventId,
          collectionPoint: input.collection_point_id,
          assetId: isUuid(assetId) ? assetId : null,
          dpId: input.dp_id ?? null,
          phone,
          tokenHash: hash,
          at,
          expiresAt,
          messages,
        });
        const [point] = await settled(alongsideAudit(tx, ctx, at, event, creating), recordEventFrom(tx, 'consent_link.created', at, known, created.sql, created.params));
        if (!point) throw new AppError('not_found', 'Collection point not found');
        if (point.asset_id !== assetId) {
          throw new AppError('validation_failed', 'asset_id is not the asset of this collection point', [
            { field: 'asset_id', message: `is not the asset of collection point ${point.display_id}` },
          ]);
        }
        if (point.status !== 'active' || point.asset_status !== 'active') {
          const which = point.status !== 'active' ? `Collection point ${point.display_id}` : 'Its asset';
          throw new AppError('validation_failed', `${which} is inactive: no new consent links can be created for it`, [
            { field: 'collection_point_id', message: 'is inactive' },
          ]);
        }
        if (!point.created) throw new Error('consent request not created although its collection point passed the checks');
        return { request_id: requestId, event_id: eventId, consent_link: link, expires_at: expiresAt, delivery_status: deliveryStatus(messages) };
      });
    },

    async duplicate(ctx: TenantContext, requestId: string, input: DuplicateConsentLinkInput) {
      const notFound = new AppError('not_found', 'Consent request not found');
      if (!isUuid(requestId)) throw notFound;
      const at = clock.now();
      const expiresAt = new Date(at.getTime() + (input.expiry_hours ?? 24) * HOUR);
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = consentLinkRepo(tx);
        const current = await repo.lockRequest(requestId);
        if (!current) throw notFound;
        if (current.completed_at) throw new AppError('gone', 'Consent was already given for this request: there is nothing to regenerate');
        if (current.expires_at.getTime() > at.getTime()) {
          throw new AppError('conflict', `The current link is still active until ${current.expires_at.toISOString()}: regenerate it once it has expired`);
        }
        if (current.regeneration_count >= MAX_REGENERATIONS) {
          throw new AppError('regeneration_limit_reached', `This request has been regenerated ${MAX_REGENERATIONS} times, the most allowed: create a new consent link instead`);
        }
        const eventId = uuidv7();
        const { token, hash } = newOpaqueToken();
        const link = consentLinkUrl(publicUrl, ctx.slug, token);
        const messages = messagesFor(ctx, link, expiresAt, { phone: input.send_sms === false ? undefined : current.phone });
        const event = {
          action: 'consent_link.regenerated',
          targetType: 'consent_link',
          targetId: requestId,
          details: {
            event_id: eventId,
            previous_event_id: current.event_id,
            regeneration_count: current.regeneration_count + 1,
            channels: messages.map((m) => m.channel),
          },
        };
        const regenerating = repo.regenerate({
          requestId,
          previousEventId: current.event_id,
          eventId,
          tokenHash: hash,
          at,
          expiresAt,
          messages,
        });
        const regenerationCount = await alongsideAudit(tx, ctx, at, event, regenerating);
        return {
          request_id: requestId,
          event_id: eventId,
          consent_link: link,
          expires_at: expiresAt,
          delivery_status: deliveryStatus(messages),
          regeneration_count: regenerationCount,
        };
      });
    },

    /**
     * The history envelope. `strategy: 'exact'` counts every matching row; 'auto' (the default) reads
     * whole days from the daily rollups when only asset, collection point and time filters apply.
     */
    /**
     * Links per creation day (UTC) over the last `days` days, today included: created and completed from
     * the rollups, still-active counted from the open-links index, expired the rest. Every day is listed.
     */
    async daily(ctx: TenantContext, q: DailyCountsInput) {
      const now = clock.now();
      const days = q.days ?? 30;
      const first = new Date(Math.floor(now.getTime() / DAY) * DAY - (days - 1) * DAY);
      const assetId = q.asset_id?.toLowerCase() ?? null;
      const [created, active] = await withTenant(db, ctx.orgId, (tx) => {
        const repo = consentLinkRepo(tx);
        return Promise.all([repo.createdPerDay(isoDay(first), isoDay(now), assetId), repo.activePerDay(first, now, assetId)]);
      });
      const createdBy = new Map(created.map((c) => [c.day, c]));
      const activeBy = new Map(active.map((a) => [a.day, a.active]));
      const totals = { created: 0, completed: 0, active: 0, expired: 0 };
      const list = Array.from({ length: days }, (_, i) => {
        const date = isoDay(new Date(first.getTime() + i * DAY));
        const c = createdBy.get(date);
        const day = { date, created: c?.created ?? 0, completed: c?.completed ?? 0, active: activeBy.get(date) ?? 0, expired: 0 };
        day.expired = day.created - day.completed - day.active;
        for (const k of ['created', 'completed', 'active', 'expired'] as const) totals[k] += day[k];
        return day;
      });
      return { from: isoDay(first), to: isoDay(now), days: list, totals };
    },

    async history(ctx: TenantContext, q: HistoryQueryInput, options: { strategy?: 'auto' | 'exact' } = {}) {
      const now = clock.now();
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const from = q.from === undefined ? null : new Date(q.from);
      const to = q.to === undefined ? now : new Date(q.to);
      const problems: { field: string; message: string }[] = [];
      // The schema's date-time admits forms a Date cannot hold (a leap second, an hour-only offset).
      if (from && Number.isNaN(from.getTime())) problems.push({ field: 'from', message: TIMESTAMP_MESSAGE });
      if (Number.isNaN(to.getTime())) problems.push({ field: 'to', message: TIMESTAMP_MESSAGE });
      if (from && from.getTime() > now.getTime()) problems.push({ field: 'from', message: 'must be in the past' });
      // Only a `to` the caller sent: the default (now) is before `from` only when `from` is in the future, reported above.
      if (from && q.to !== undefined && to.getTime() < from.getTime()) problems.push({ field: 'to', message: 'must not be before from' });
      if (problems.length > 0) throw new AppError('validation_failed', `Invalid request query: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);

      const filters = {
        assetId: q.asset_id,
        collectionPointId: q.collection_point_id ?? null,
        eventId: q.event_id ?? null,
        dpId: q.dp_id ?? null,
        from: from ? from.toISOString() : null,
        to: to.toISOString(),
        limit,
        offset,
      };
      const empty = { data: [], count: 0, summary: { total_links: 0, active: 0, completed: 0, expired: 0 }, collectionPointSummary: {}, filters };
      // Ids that cannot exist match nothing: no query needed.
      if (!isUuid(q.asset_id) || (q.event_id !== undefined && !isUuid(q.event_id))) return empty;
      const pointIsUuid = q.collection_point_id !== undefined && isUuid(q.collection_point_id);
      const f: HistoryFilter = {
        assetId: q.asset_id.toLowerCase(),
        collectionPointUuid: pointIsUuid ? q.collection_point_id!.toLowerCase() : undefined,
        collectionPointDisplayId: q.collection_point_id !== undefined && !pointIsUuid ? q.collection_point_id : undefined,
        eventId: q.event_id?.toLowerCase(),
        dpId: q.dp_id,
        from,
        to,
      };
      const useRollups = options.strategy !== 'exact' && f.eventId === undefined && f.dpId === undefined;

      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = consentLinkRepo(tx);
        const [rows, counts] = await Promise.all([repo.page(f, limit, offset), useRollups ? rollupCounts(repo, f, now) : repo.exactCounts(f, now)]);
        const summary = { total_links: 0, active: 0, completed: 0, expired: 0 };
        const collectionPointSummary: Record<string, { total: number; active: number; completed: number; expired: number }> = {};
        for (const c of counts.sort((a, b) => a.collection_point_id.localeCompare(b.collection_point_id))) {
          if (c.total === 0) continue;
          const expired = c.total - c.completed - c.active;
          collectionPointSummary[c.collection_point_id] = { total: c.total, active: c.active, completed: c.completed, expired };
          summary.total_links += c.total;
          summary.active += c.active;
          summary.completed += c.completed;
          summary.expired += expired;
        }
        return {
          data: rows.map((r) => ({
            request_id: r.request_id,
            event_id: r.event_id,
            collection_point_id: r.collection_point_id,
            asset_id: r.asset_id,
            phone: maskPhone(r.phone),
            status: linkStatus(r, now),
            created_at: r.created_at,
            expires_at: r.expires_at,
            completed_at: r.completed_at,
            consent_action: r.consent_action,
            regeneration_count: r.regeneration_count,
          })),
          count: summary.total_links,
          summary,
          collectionPointSummary,
          filters,
        };
      });
    },
  };
}

export type ConsentLinkService = ReturnType<typeof createConsentLinkService>;

/** `YYYY-MM-DD` of a UTC day. */
function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * For the consents feature, inside its transaction: completes the request of link instance `eventId`
 * with a consent, or throws the contract's error (404 unknown, 400 other data principal or collection
 * point, 409 already complete, 410 expired or superseded). Returns the request id.
 */
export async function completeLinkRequest(
  tx: TenantTx,
  c: { eventId: string; collectionPointId: string; dpId: string; action: ConsentAction; at: Date },
): Promise<string> {
  const notFound = new AppError('not_found', 'Consent link not found: no link has that event_id');
  if (!isUuid(c.eventId)) throw notFound;
  const repo = consentLinkRepo(tx);
  const link = await repo.lockByEvent(c.eventId.toLowerCase());
  if (!link) throw notFound;
  if (link.collection_point_id !== c.collectionPointId) {
    throw new AppError('validation_failed', 'event_id belongs to a link of another collection point', [{ field: 'event_id', message: 'is a link of another collection point' }]);
  }
  if (link.dp_id !== null && link.dp_id !== c.dpId) {
    throw new AppError('validation_failed', "dp_id is not the consent request's data principal", [{ field: 'dp_id', message: 'does not match the consent request' }]);
  }
  if (link.completed_at) throw new AppError('conflict', 'Consent was already given for this request');
  if (link.this_event_superseded_at) throw new AppError('gone', 'This link was replaced by a newer one: use the latest link of the request');
  if (link.this_event_expires_at.getTime() <= c.at.getTime()) throw new AppError('gone', 'This link has expired: the organization can send a new one');
  await repo.complete(link.request_id, c.action, c.dpId, c.at);
  return link.request_id;
}

/** For the consents feature: a withdrawal shows as `revoked` on the latest completed request. */
export function markLatestRequestRevoked(tx: TenantTx, collectionPointId: string, dpId: string): Promise<void> {
  return consentLinkRepo(tx).markLatestRevoked(collectionPointId, dpId);
}
