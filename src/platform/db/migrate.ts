// Applies the numbered, forward-only SQL files in src/db/migrations that the store has not seen yet.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TenantRoleError, tenantRoleProblem, type TenantRoleAdvice } from './tenant-role.js';
import type { Database } from './types.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../db/migrations/', import.meta.url));

export interface MigrationResult {
  applied: string[];
  current: string | null;
}

export function listMigrations(dir = MIGRATIONS_DIR): { version: string; sql: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), sql: readFileSync(dir + f, 'utf8') }));
}

export interface MigrateOptions {
  /**
   * Check afterwards that the connecting role can take the tenant role (default true; ASSENT_RLS=off
   * needs no role switch). A failed check throws TenantRoleError: the migrations stay applied, and
   * running migrate again after the grant passes.
   */
  checkTenantRole?: boolean;
  /** What the refusal names: the setting that gave the connection and the command to run again (default DATABASE_URL, assent migrate). */
  advice?: TenantRoleAdvice;
}

export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrationResult> {
  let result: MigrationResult;
  try {
    result = await applyMigrations(db);
  } catch (e) {
    // A migration refused for want of a privilege: when the tenant role is the reason (it cannot be
    // created), say what to run rather than PostgreSQL's sentence.
    if ((e as { code?: unknown }).code === '42501') {
      const problem = await tenantRoleProblem(db, options.advice).catch(() => null);
      if (problem) throw new TenantRoleError(problem);
    }
    throw e;
  }
  if (options.checkTenantRole ?? true) {
    const problem = await tenantRoleProblem(db, options.advice);
    if (problem) throw new TenantRoleError(problem);
  }
  return result;
}

/** The versions applied to the store, oldest first. */
export async function appliedMigrations(db: Database): Promise<string[]> {
  const rows = await db.system.query<{ version: string }>(
    `select version from schema_migrations order by version`,
  );
  return rows.map((r) => r.version);
}

function applyMigrations(db: Database): Promise<MigrationResult> {
  const migrations = listMigrations();
  return db.system.transaction(async (tx) => {
    // One migrator at a time per database (several processes may start together on PostgreSQL).
    await tx.query('select pg_advisory_xact_lock(7426001)');
    await tx.query(`create table if not exists schema_migrations (
      version text primary key,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set((await tx.query<{ version: string }>('select version from schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (version) values ($1)', [m.version]);
      applied.push(m.version);
    }
    return { applied, current: migrations.at(-1)?.version ?? null };
  });
}

