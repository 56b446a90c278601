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

/**
 * A tenant transaction that acts for one data principal: repositories built from it add
 * `dp_id = <theirs>` to every statement themselves, so another person's rows cannot be asked for by
 * mistake, as another organization's cannot be with a TenantTx.
 */
export interface PrincipalTx extends TenantTx {
  readonly dpId: string;
}

export function withPrincipal<T>(db: Database, scope: { orgId: string; dpId: string }, fn: (tx: PrincipalTx) => Promise<T>): Promise<T> {
  return db.tenantTransaction(scope.orgId, (tx) => fn({ orgId: scope.orgId, dpId: scope.dpId, query: tx.query.bind(tx) }));
}

/** tenantReads for one data principal: one-statement reads, one round trip each on PostgreSQL. */
export function principalReads(db: Database, scope: { orgId: string; dpId: string }): PrincipalTx {
  return { orgId: scope.orgId, dpId: scope.dpId, query: (text, params) => db.tenantQuery(scope.orgId, text, params) };
}

/** The scope of a data principal's context: their organization and their dp_id. */
export function principalScope(ctx: { orgId: string; actor: { dpId: string } }): { orgId: string; dpId: string } {
  return { orgId: ctx.orgId, dpId: ctx.actor.dpId };
}
