// Audit log SQL: insert and read only (the service role has no update or delete on the table).
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';

export interface AuditEntryRow {
  id: string;
  at: Date;
  actor_type: 'api_key' | 'user' | 'data_principal';
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

export interface AuditFilter {
  action?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
}

export function auditRepo(tx: TenantTx) {
  return {
    async insert(e: Omit<AuditEntryRow, 'details'> & { details: Record<string, unknown> }): Promise<void> {
      await tx.query(
        `insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, target_id, request_id, details)
         values ($1::uuid, $2::uuid, $3::timestamptz, $4::text, $5::uuid, $6::text, $7::text, $8::text, $9::text, $10::text::jsonb)`,
        [tx.orgId, e.id, e.at, e.actor_type, e.actor_id, e.action, e.target_type, e.target_id, e.request_id, JSON.stringify(e.details)],
      );
    },

    list(f: AuditFilter): Promise<{ data: AuditEntryRow[]; count: number }> {
      const params: unknown[] = [tx.orgId];
      const where = ['org_id = $1::uuid'];
      if (f.action) where.push(`action = $${params.push(f.action)}::text`);
      if (f.from) where.push(`at >= $${params.push(f.from)}::timestamptz`);
      if (f.to) where.push(`at <= $${params.push(f.to)}::timestamptz`);
      return selectPage<AuditEntryRow>(tx, {
        columns: 'id, at, actor_type, actor_id, action, target_type, target_id, request_id, details',
        from: 'audit_log',
        where: where.join(' and '),
        params,
        orderBy: 'at desc, id desc',
        limit: f.limit,
        offset: f.offset,
      });
    },
  };
}
