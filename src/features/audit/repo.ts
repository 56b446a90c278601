// Audit log SQL: insert and read only (the service role has no update or delete on the table).
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';

export interface AuditEntryRow {
  id: string;
  at: Date;
  actor_type: 'api_key' | 'user' | 'data_principal' | 'nominee';
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  /** Null until the sequencer seals the entry (within seconds of its commit). */
  seq: string | number | null;
  prev_hash: string | null;
  hash: string | null;
}

export interface AuditFilter {
  action?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
}

/**
 * A row of a tenant table (primary key `(org_id, id)`, `id` a UUID) that an entry exists only with:
 * the entry is inserted only if the row is there when its statement runs, and the named columns of the
 * row are added to its details under their own names. For an entry sent in the same batch as a change
 * that may write nothing (it checks its conditions in its own statement), so the entry needs no round
 * trip to learn the outcome, and there is never an entry without the change.
 */
export interface AuditedRow {
  table: string;
  id: string;
  detailColumns?: readonly string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Table and column names come from code, never from a request; checked anyway, as they are inlined. */
function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return name;
}

export function auditRepo(tx: TenantTx) {
  return {
    async insert(e: Omit<AuditEntryRow, 'seq' | 'prev_hash' | 'hash'>, onlyWith?: AuditedRow): Promise<void> {
      const columns = 'org_id, id, at, actor_type, actor_id, action, target_type, target_id, request_id, details';
      const entry = '$1::uuid, $2::uuid, $3::timestamptz, $4::text, $5::uuid, $6::text, $7::text, $8::text, $9::text';
      const params = [tx.orgId, e.id, e.at, e.actor_type, e.actor_id, e.action, e.target_type, e.target_id, e.request_id, JSON.stringify(e.details)];
      if (!onlyWith) {
        await tx.query(`insert into audit_log (${columns}) values (${entry}, $10::text::jsonb)`, params);
        return;
      }
      const fromRow = (onlyWith.detailColumns ?? []).map((c) => `'${identifier(c)}', w.${identifier(c)}`).join(', ');
      await tx.query(
        `insert into audit_log (${columns})
         select ${entry}, $10::text::jsonb || jsonb_build_object(${fromRow})
           from ${identifier(onlyWith.table)} w where w.org_id = $1::uuid and w.id = $11::uuid`,
        [...params, onlyWith.id],
      );
    },

    list(f: AuditFilter): Promise<{ data: AuditEntryRow[]; count: number }> {
      const params: unknown[] = [tx.orgId];
      const where = ['org_id = $1::uuid'];
      if (f.action) where.push(`action = $${params.push(f.action)}::text`);
      if (f.from) where.push(`at >= $${params.push(f.from)}::timestamptz`);
      if (f.to) where.push(`at <= $${params.push(f.to)}::timestamptz`);
      return selectPage<AuditEntryRow>(tx, {
        columns: 'id, at, actor_type, actor_id, action, target_type, target_id, request_id, details, seq, prev_hash, hash',
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
