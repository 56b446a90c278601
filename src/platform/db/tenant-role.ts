// The tenant role: the unprivileged role every tenant query runs as, so row-level security applies.
// The connecting role must be able to take it (SET ROLE); when it cannot, every tenant request would
// fail, so migrate, serve and /health/ready check it and say what an administrator must run.
import type { Database } from './types.js';

export const TENANT_ROLE = 'assent_app';

/** The connecting role cannot take the tenant role; the message says what to run. */
export class TenantRoleError extends Error {}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * How the user gave the connection and what to run after the grant, for the sentence: DATABASE_URL and
 * `assent migrate` by default; `assent store copy` names its --to and itself.
 */
export interface TenantRoleAdvice {
  setting: string;
  rerun: string;
}

const DEFAULT_ADVICE: TenantRoleAdvice = { setting: 'DATABASE_URL', rerun: 'assent migrate' };

/**
 * null when the connecting role can take the tenant role (tried, in a transaction of its own); else a
 * sentence naming the role and the SQL an administrator must run. Errors other than a refused role
 * switch (the database unreachable) are thrown.
 */
export async function tenantRoleProblem(db: Database, advice: TenantRoleAdvice = DEFAULT_ADVICE): Promise<string | null> {
  try {
    await db.system.transaction((tx) => tx.query(`set local role ${TENANT_ROLE}`));
    return null;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    // 42501 permission denied to set role; 22023 role does not exist (SET ROLE's own code)
    if (code !== '42501' && code !== '22023' && code !== '42704') throw e;
  }
  const [me] = await db.system.query<{ me: string; exists: boolean }>(
    `select current_user as me, exists (select 1 from pg_roles where rolname = $1) as exists`,
    [TENANT_ROLE],
  );
  const user = me!.me;
  const sql = me!.exists
    ? `GRANT ${TENANT_ROLE} TO ${quoteIdent(user)};`
    : `CREATE ROLE ${TENANT_ROLE} NOLOGIN; GRANT ${TENANT_ROLE} TO ${quoteIdent(user)};`;
  const why = me!.exists
    ? `the role exists but was not granted to "${user}"`
    : `it does not exist and "${user}" may not create roles`;
  return (
    `The database role "${user}" (${advice.setting}) cannot take the tenant role ${TENANT_ROLE} that row-level security needs: ${why}. ` +
    `As a database administrator, run: ${sql} Then run "${advice.rerun}" again.`
  );
}
