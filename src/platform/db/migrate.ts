// Applies the numbered, forward-only SQL files in src/db/migrations that the store has not seen yet.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

export async function migrate(db: Database): Promise<MigrationResult> {
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

