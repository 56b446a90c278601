// Consents: append-only records of what a data principal agreed to at a collection point (notice
// version, each purpose's choice, channel, time). A consent with an event_id completes that link's
// request; a withdrawal is a new record, never an update.
import type { Database } from '../../platform/db/types.js';
import { principalReads, principalScope, tenantReads, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { PrincipalContext, TenantContext } from '../../platform/auth/access.js';
import { AppError, type ErrorDetail } from '../../platform/http/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { findCollectionPoint, type PurposeRow } from '../collection-points/index.js';
import { completeLinkRequest, markLatestRequestRevoked, type ConsentAction } from '../consent-links/index.js';
import { alongsideAudit } from '../audit/index.js';
import { recordEvent, settled } from '../../platform/webhooks/events.js';
import type { ReceiptSigner } from '../receipts/index.js';
import { consentRepo, newConsentRow, principalConsentRepo, type ConsentChannel, type ReceiptRow } from './repo.js';
import type { RecordConsentInput } from './schemas.js';

export interface ConsentServiceDeps {
  db: Database;
  clock: Clock;
  /** Signs every record's receipt inside the record's transaction (features/receipts). */
  receipts: ReceiptSigner;
  /** PUBLIC_URL: the receipt's answer names the organization's JWKS address. */
  publicUrl: URL;
  /** Called in every withdrawal's transaction with the purposes it withdrew (fulfilment may start an erasure). */
  onWithdrawn?: (tx: TenantTx, ctx: TenantContext, w: { dpId: string; purposes: string[]; consentId: string }, at: Date) => Promise<void>;
}

const pointNotFound = () => new AppError('not_found', 'Collection point not found');

/** approved: all granted; declined: none, or any required purpose refused; partial_consent otherwise. */
export function consentActionFor(purposes: PurposeRow[], choices: Map<string, boolean>): ConsentAction {
  const granted = purposes.filter((p) => choices.get(p.id) === true).length;
  if (granted === 0 || purposes.some((p) => p.required && choices.get(p.id) !== true)) return 'declined';
  return granted === purposes.length ? 'approved' : 'partial_consent';
}

/** Every purpose of the collection point exactly once: missing, repeated and unknown ids are listed. */
function checkChoices(purposes: PurposeRow[], choices: RecordConsentInput['purposes']): Map<string, boolean> {
  const known = new Set(purposes.map((p) => p.id));
  const problems: ErrorDetail[] = [];
  const seen = new Map<string, boolean>();
  choices.forEach((c, i) => {
    if (!known.has(c.id)) problems.push({ field: `purposes.${i}.id`, message: 'is not a purpose of this collection point' });
    else if (seen.has(c.id)) problems.push({ field: `purposes.${i}.id`, message: 'is listed more than once' });
    seen.set(c.id, c.granted);
  });
  for (const p of purposes) if (!seen.has(p.id)) problems.push({ field: 'purposes', message: `must include purpose ${p.id} (${p.name})` });
  if (problems.length > 0) {
    throw new AppError('validation_failed', `Invalid purposes: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  }
  return seen;
}

const receiptNotFound = () => new AppError('not_found', 'Consent record not found');

export function createConsentService({ db, clock, receipts, publicUrl, onWithdrawn }: ConsentServiceDeps) {
  const receiptAnswer = (slug: string, row: ReceiptRow | null) => {
    if (!row) throw receiptNotFound();
    // Records made before receipts existed (migration 0018) have none until the backfill signs them
    // (every server at start and hourly, or `assent receipts backfill`).
    if (row.receipt === null) throw new AppError('not_found', 'This consent record has no receipt yet: it was recorded before receipts were signed, and the backfill has not reached it');
    const [header] = row.receipt.split('.');
    const kid = (JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as { kid: string }).kid;
    return {
      consent_id: row.consent_id,
      receipt: row.receipt,
      kid,
      jwks_uri: `${publicUrl.protocol}//${slug}.${publicUrl.host}/.well-known/jwks.json`,
      document: JSON.parse(Buffer.from(row.receipt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>,
    };
  };

  async function activePoint(tx: TenantTx, idOrDisplayId: string) {
    const point = await findCollectionPoint(tx, idOrDisplayId);
    if (!point) throw pointNotFound();
    return point;
  }

  const service = {
    record(ctx: TenantContext, collectionPointId: string, input: RecordConsentInput, channel: ConsentChannel = 'api') {
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        // Sent together: the point, and what its receipt needs (the key, the previous record).
        const [point, signing] = await Promise.all([activePoint(tx, collectionPointId), receipts.prepare(tx, { collectionPoint: collectionPointId, dpId: input.dp_id })]);
        if (point.status !== 'active') throw new AppError('bad_request', `Collection point ${point.display_id} is inactive: it collects no consent`);
        const choices = checkChoices(point.purposes, input.purposes);
        const action = consentActionFor(point.purposes, choices);
        const requestId =
          input.event_id === undefined
            ? null
            : await completeLinkRequest(tx, { eventId: input.event_id, collectionPointId: point.id, dpId: input.dp_id, action, at });
        const id = uuidv7();
        const eventId = input.event_id?.toLowerCase() ?? null;
        // In the collection point's order, so records read the same way whatever order they came in.
        const purposes = point.purposes.map((p) => ({ id: p.id, granted: choices.get(p.id)! }));
        const receipt = await receipts.sign(signing, {
          recordId: id,
          previousRecordId: signing.previousRecordId,
          dpId: input.dp_id,
          collectionPoint: point,
          choices: purposes,
          action,
          at,
          channel,
          requestId,
          eventId,
        });
        const record = {
          id,
          dataPrincipalId: uuidv7(),
          collection_point_id: point.id,
          dp_id: input.dp_id,
          consent_action: action,
          purposes,
          notice_version: point.notice_version,
          request_id: requestId,
          event_id: eventId,
          channel,
          at,
          receipt,
        };
        const inserting = consentRepo(tx).insert(record);
        // Never the dp_id: the record's own id leads to it for whoever may see it.
        const event = {
          action: 'consent.recorded',
          targetType: 'consent',
          targetId: id,
          details: { collection_point_id: point.id, consent_action: action, notice_version: point.notice_version, request_id: requestId, event_id: eventId, channel },
        };
        // The record, its audit entry and its events leave in one batch (the events' data is known
        // before the insert answers; an insert that fails rolls them back).
        const [consent] = await settled(
          alongsideAudit(tx, ctx, at, event, inserting),
          recordEvent(tx, 'consent.recorded', { consent: newConsentRow(record) }, at),
          requestId === null ? undefined : recordEvent(tx, 'consent_link.completed', { request_id: requestId, event_id: eventId, consent_id: id, consent_action: action }, at),
        );
        return consent;
      });
    },

    withdraw(ctx: TenantContext, collectionPointId: string, dpId: string, channel: ConsentChannel = 'api') {
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const [point, signing] = await Promise.all([activePoint(tx, collectionPointId), receipts.prepare(tx, null)]);
        const repo = consentRepo(tx);
        // Sent together: a refusal below rolls back what the second wrote.
        const [latest] = await settled(repo.latest(point.id, dpId), markLatestRequestRevoked(tx, point.id, dpId));
        if (!latest) throw new AppError('not_found', 'No consent on record for this data principal at this collection point');
        if (latest.consent_action === 'revoked') throw new AppError('conflict', 'Consent was already withdrawn');
        const id = uuidv7();
        const event = {
          action: 'consent.withdrawn',
          targetType: 'consent',
          targetId: id,
          details: { collection_point_id: point.id, consent_action: 'revoked', notice_version: point.notice_version, previous_consent_id: latest.consent_id },
        };
        const purposes = point.purposes.map((p) => ({ id: p.id, granted: false }));
        const receipt = await receipts.sign(signing, {
          recordId: id,
          previousRecordId: latest.consent_id,
          dpId,
          collectionPoint: point,
          choices: purposes,
          action: 'revoked',
          at,
          channel,
          requestId: null,
          eventId: null,
        });
        const record = {
          id,
          dataPrincipalId: uuidv7(),
          collection_point_id: point.id,
          dp_id: dpId,
          consent_action: 'revoked' as const,
          purposes,
          notice_version: point.notice_version,
          request_id: null,
          event_id: null,
          channel,
          at,
          receipt,
        };
        const inserting = repo.insert(record);
        // The purposes the withdrawn consent had granted.
        const granted = new Set(latest.purposes.filter((p) => p.granted).map((p) => p.id));
        // The record, its audit entry, its event and the fulfilment's first reads leave in one batch.
        const [consent] = await settled(
          alongsideAudit(tx, ctx, at, event, inserting),
          recordEvent(tx, 'consent.withdrawn', { consent: newConsentRow(record), previous_consent_id: latest.consent_id }, at),
          onWithdrawn?.(tx, ctx, { dpId, purposes: point.purposes.filter((p) => granted.has(p.id)).map((p) => p.name), consentId: id }, at),
        );
        return consent;
      });
    },

    /** The data principal's own consents: the current state at every collection point where they have one. */
    async mine(ctx: PrincipalContext) {
      const rows = await principalConsentRepo(principalReads(db, principalScope(ctx))).current();
      return rows.map((r) => {
        const granted = new Map(r.choices.map((c) => [c.id, c.granted]));
        return {
          collection_point: { id: r.point_id, display_id: r.display_id, name: r.name, notice: r.notice, notice_version: r.notice_version },
          consent_action: r.consent_action,
          purposes: r.point_purposes.map((p) => ({ id: p.id, name: p.name, required: p.required, granted: granted.get(p.id) ?? false })),
          given_at: r.given_at,
          consent_id: r.consent_id,
        };
      });
    },

    /** Every record of theirs at one collection point, newest first; 404 when they have none there. */
    async myHistory(ctx: PrincipalContext, collectionPointId: string) {
      const rows = await principalConsentRepo(principalReads(db, principalScope(ctx))).history(collectionPointId);
      if (rows.length === 0) throw new AppError('not_found', 'No consent on record at this collection point');
      return rows;
    },

    /** Gives or changes their consent: a new record through the same path as every other, channel rights_center. */
    giveMine(ctx: PrincipalContext, collectionPointId: string, purposes: RecordConsentInput['purposes']) {
      return service.record(ctx, collectionPointId, { dp_id: ctx.actor.dpId, purposes }, 'rights_center');
    },

    /** Withdraws their consent in one call: a new record with action revoked, channel rights_center. */
    withdrawMine(ctx: PrincipalContext, collectionPointId: string) {
      return service.withdraw(ctx, collectionPointId, ctx.actor.dpId, 'rights_center');
    },

    /** A record's signed receipt, for the organization. */
    async receipt(ctx: TenantContext, consentId: string) {
      return receiptAnswer(ctx.slug, await consentRepo(tenantReads(db, ctx.orgId)).receipt(consentId));
    },

    /** One of the data principal's own records' receipt; another person's is not found. */
    async myReceipt(ctx: PrincipalContext, consentId: string) {
      return receiptAnswer(ctx.slug, await principalConsentRepo(principalReads(db, principalScope(ctx))).receipt(consentId));
    },

    current(ctx: TenantContext, collectionPointId: string, dpId: string) {
      return withTenant(db, ctx.orgId, async (tx) => {
        const point = await activePoint(tx, collectionPointId);
        const latest = await consentRepo(tx).latest(point.id, dpId);
        if (!latest) throw new AppError('not_found', 'No consent on record for this data principal at this collection point');
        const granted = new Map(latest.purposes.map((p) => [p.id, p.granted]));
        return {
          dp_id: dpId,
          collection_point_id: point.id,
          consent_id: latest.consent_id,
          consent_action: latest.consent_action,
          notice_version: latest.notice_version,
          current_notice_version: point.notice_version,
          recorded_at: latest.created_at,
          purposes: point.purposes.map((p) => ({ id: p.id, name: p.name, required: p.required, granted: granted.get(p.id) ?? false })),
        };
      });
    },
  };
  return service;
}

export type ConsentService = ReturnType<typeof createConsentService>;
