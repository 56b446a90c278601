// The audit log: every change made through the API appends who (API key or user id), what, which
// record, when and under which request. Entries carry ids and field names, never personal data.
import type { Database } from '../../platform/db/types.js';
import { withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { uuidv7 } from '../../platform/ids.js';
import { AppError, type ErrorDetail } from '../../platform/http/errors.js';
import { auditRepo, type AuditedRow } from './repo.js';

export interface AuditEvent {
  /** `<record>.<verb>`, e.g. `grievance.status_changed`, `api_key.revoked`. */
  action: string;
  targetType: string;
  targetId: string | null;
  /** Ids, statuses and field names only: no names, emails, phones or free text. */
  details?: Record<string, unknown>;
  /**
   * The row the change writes, when the change may write nothing (it checks its conditions in its own
   * statement): the entry is appended only with that row, with the row's `detailColumns` added to
   * details. Pass the change to alongsideAudit, which sends the entry after it.
   */
  onlyWith?: AuditedRow;
}

/**
 * Who wants to know that an organization has new entries to seal (the sequencer of each app in this
 * process, features/transparency): told on every recordAudit, committed or not (the sequencer finds
 * nothing to seal for a rolled-back one). A Set add per write; no statement, no lock.
 */
const recordedListeners = new Set<(orgId: string) => void>();

/** Subscribes to "an entry was written for this organization"; returns the unsubscribe. */
export function onAuditRecorded(listener: (orgId: string) => void): () => void {
  recordedListeners.add(listener);
  return () => recordedListeners.delete(listener);
}

/** Appends an entry inside the caller's tenant transaction, so the change and its record commit together. */
export function recordAudit(tx: TenantTx, ctx: TenantContext, at: Date, e: AuditEvent): Promise<void> {
  for (const listener of recordedListeners) listener(tx.orgId);
  const entry = {
    id: uuidv7(),
    at,
    actor_type: ctx.actor.type,
    actor_id: ctx.actor.id,
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId,
    request_id: ctx.requestId,
    details: e.details ?? {},
  };
  return auditRepo(tx).insert(entry, e.onlyWith);
}

/**
 * Runs a change and appends its audit entry side by side in the same transaction: postgres.js pipelines
 * the two statements, so the entry costs no extra round trip. The change's statement was queued first
 * (the caller started it), and a connection runs its statements in order, so an entry with `onlyWith`
 * sees what the change wrote. Both settle before the transaction ends, so a change that fails (a 404
 * thrown by the caller afterwards included) rolls its entry back with it.
 */
export async function alongsideAudit<T>(tx: TenantTx, ctx: TenantContext, at: Date, e: AuditEvent, change: Promise<T>): Promise<T> {
  const [done, audited] = await Promise.allSettled([change, recordAudit(tx, ctx, at, e)]);
  if (done.status === 'rejected') throw done.reason;
  if (audited.status === 'rejected') throw audited.reason;
  return done.value;
}

export interface AuditServiceDeps {
  db: Database;
  clock: Clock;
  /** Seals what is committed before a read (features/transparency's sequencer), so the list shows entries with their place. */
  beforeRead?: (orgId: string) => Promise<void>;
}

export function createAuditService({ db, beforeRead }: AuditServiceDeps) {
  return {
    list(ctx: TenantContext, q: { action?: string; from?: string; to?: string; limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      const from = q.from === undefined ? undefined : new Date(q.from);
      const to = q.to === undefined ? undefined : new Date(q.to);
      const problems: ErrorDetail[] = [];
      // The schema's date-time format lets through a few forms Date cannot read (a leap second).
      if (from && Number.isNaN(from.getTime())) problems.push({ field: 'from', message: 'must be an ISO 8601 date-time with a time zone' });
      if (to && Number.isNaN(to.getTime())) problems.push({ field: 'to', message: 'must be an ISO 8601 date-time with a time zone' });
      if (problems.length === 0 && from && to && to < from) problems.push({ field: 'to', message: 'must not be before from' });
      if (problems.length > 0) {
        return Promise.reject(new AppError('validation_failed', `Invalid request query: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems));
      }
      return (beforeRead ? beforeRead(ctx.orgId) : Promise.resolve()).then(() => withTenant(db, ctx.orgId, async (tx) => {
        const page = await auditRepo(tx).list({ action: q.action, from, to, limit, offset });
        return {
          data: page.data.map((r) => ({
            id: r.id,
            at: r.at,
            actor: { type: r.actor_type, id: r.actor_id },
            action: r.action,
            target: { type: r.target_type, id: r.target_id },
            request_id: r.request_id,
            details: r.details,
            seq: r.seq === null ? null : Number(r.seq),
            prev_hash: r.prev_hash,
            hash: r.hash,
          })),
          count: page.count,
          limit,
          offset,
        };
      }));
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
