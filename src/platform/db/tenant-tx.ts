// withTenant: the only way to reach tenant tables. Repositories are built from the TenantTx it hands out,
// which carries the organization id, so a repository cannot forget (or choose) the tenant.
import type { Database, Queryable } from './types.js';

export interface TenantTx extends Queryable {
  readonly orgId: string;
}

export function withTenant<T>(db: Database, orgId: string, fn: (tx: TenantTx) => Promise<T>): Promise<T> {
  return db.tenantTransaction(orgId, (tx) => fn({ orgId, query: tx.query.bind(tx) }));
}

/**
 * A TenantTx whose every statement runs on its own with its tenant, in one round trip on PostgreSQL
 * (Database.tenantQuery): for reads that are one statement. Same role, same org_id, same row-level
 * security; atomicity across statements is given up, and a failed read may be sent again, so never
 * use it for writes.
 */
export function tenantReads(db: Database, orgId: string): TenantTx {
  return { orgId, query: (text, params) => db.tenantQuery(orgId, text, params) };
}

/** Postgres unique_violation, for repositories that turn it into a conflict. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint_name?: string; constraint?: string } | null;
  if (!e || e.code !== '23505') return false;
  return constraint === undefined || e.constraint_name === constraint || e.constraint === constraint;
}
