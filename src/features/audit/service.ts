// The audit log: every change made through the API appends who (API key or user id), what, which
// record, when and under which request. Entries carry ids and field names, never personal data.
import type { Database } from '../../platform/db/types.js';
import { withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { uuidv7 } from '../../platform/ids.js';
import { auditRepo } from './repo.js';

export interface AuditEvent {
  /** `<record>.<verb>`, e.g. `grievance.status_changed`, `api_key.revoked`. */
  action: string;
  targetType: string;
  targetId: string | null;
  /** Ids, statuses and field names only: no names, emails, phones or free text. */
  details?: Record<string, unknown>;
}

/** Appends an entry inside the caller's tenant transaction, so the change and its record commit together. */
export function recordAudit(tx: TenantTx, ctx: TenantContext, at: Date, e: AuditEvent): Promise<void> {
  return auditRepo(tx).insert({
    id: uuidv7(),
    at,
    actor_type: ctx.actor.type,
    actor_id: ctx.actor.id,
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId,
    request_id: ctx.requestId,
    details: e.details ?? {},
  });
}

export function createAuditService({ db }: { db: Database; clock: Clock }) {
  return {
    list(ctx: TenantContext, q: { action?: string; from?: string; to?: string; limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return withTenant(db, ctx.orgId, async (tx) => {
        const page = await auditRepo(tx).list({
          action: q.action,
          from: q.from ? new Date(q.from) : undefined,
          to: q.to ? new Date(q.to) : undefined,
          limit,
          offset,
        });
        return {
          data: page.data.map((r) => ({
            id: r.id,
            at: r.at,
            actor: { type: r.actor_type, id: r.actor_id },
            action: r.action,
            target: { type: r.target_type, id: r.target_id },
            request_id: r.request_id,
            details: r.details,
          })),
          count: page.count,
          limit,
          offset,
        };
      });
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
