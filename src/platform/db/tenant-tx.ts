// withTenant: the only way to reach tenant tables. Repositories are built from the TenantTx it hands out,
// which carries the organization id, so a repository cannot forget (or choose) the tenant.
import type { Database, Queryable } from './types.js';

export interface TenantTx extends Queryable {
  readonly orgId: string;
}

export function withTenant<T>(db: Database, orgId: string, fn: (tx: TenantTx) => Promise<T>): Promise<T> {
  return db.tenantTransaction(orgId, (tx) => fn({ orgId, query: tx.query.bind(tx) }));
}

/** Postgres unique_violation, for repositories that turn it into a conflict. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint_name?: string; constraint?: string } | null;
  if (!e || e.code !== '23505') return false;
  return constraint === undefined || e.constraint_name === constraint || e.constraint === constraint;
}
