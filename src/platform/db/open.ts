// Opens the store: embedded PGlite in DATA_DIR by default, PostgreSQL through a pool when DATABASE_URL is set.
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { Database, Queryable, ScriptRunner } from './types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One statement switches to the unprivileged role and sets the tenant, both transaction-local.
 * `set_config('role', …)` is what `SET LOCAL ROLE` does, but as a parameterised statement it can be
 * prepared and pipelined with the query that follows.
 */
const TENANT_SETUP = "select set_config('role', 'assent_app', true), set_config('app.org_id', $1, true)";
const TENANT_SETUP_NO_RLS = "select set_config('app.org_id', $1, true)";

export interface OpenOptions {
  /** null: embedded PGlite; a postgres:// URL: that server. */
  databaseUrl: string | null;
  /** PGlite data directory; 'memory://' keeps it in memory (tests). */
  dataDir: string;
  /** Row-level security as the second isolation layer (ASSENT_RLS). */
  rls?: boolean;
  poolSize?: number;
}

function assertUuid(orgId: string): void {
  if (!UUID.test(orgId)) throw new Error('tenant transaction needs an organization UUID');
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  const rls = options.rls ?? true;
  return options.databaseUrl ? openPostgres(options.databaseUrl, rls, options.poolSize) : openPglite(options.dataDir, rls);
}

async function openPglite(dataDir: string, rls: boolean): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir);
  const wrap = (q: { query: PGlite['query'] }): Queryable => ({
    async query<T>(text: string, params?: readonly unknown[]) {
      const result = await q.query<T>(text, params as unknown[] | undefined);
      return result.rows;
    },
  });
  const setup = rls ? TENANT_SETUP : TENANT_SETUP_NO_RLS;
  return {
    kind: 'pglite',
    system: {
      ...wrap(pg),
      transaction: (fn) =>
        pg.transaction((tx) => {
          const runner: ScriptRunner = { ...wrap(tx), exec: async (script) => void (await tx.exec(script)) };
          return fn(runner);
        }),
      exec: async (script) => {
        await pg.exec(script);
      },
    },
    tenantTransaction(orgId, fn) {
      assertUuid(orgId);
      return pg.transaction(async (tx) => {
        await tx.query(setup, [orgId]);
        return fn(wrap(tx));
      });
    },
    tenantQuery<T>(orgId: string, text: string, params?: readonly unknown[]) {
      assertUuid(orgId);
      return pg.transaction(async (tx) => {
        await tx.query(setup, [orgId]);
        return wrap(tx).query<T>(text, params);
      });
    },
    close: () => pg.close(),
  };
}

async function openPostgres(url: string, rls: boolean, poolSize = 10): Promise<Database> {
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    // timestamptz and friends come back as Date; int8 counts are cast to int in SQL.
    connection: { application_name: 'assent' },
  });
  const wrap = (s: postgres.Sql | postgres.TransactionSql): Queryable => ({
    async query<T>(text: string, params?: readonly unknown[]) {
      const rows = await s.unsafe(text, (params ?? []) as postgres.ParameterOrJSON<never>[], { prepare: true });
      return rows as unknown as T[];
    },
  });
  const setup = rls ? TENANT_SETUP : TENANT_SETUP_NO_RLS;
  await sql`select 1`;
  return {
    kind: 'postgres',
    system: {
      ...wrap(sql),
      transaction: (fn) =>
        sql.begin((tx) => {
          const runner: ScriptRunner = { ...wrap(tx), exec: async (script) => void (await tx.unsafe(script)) };
          return fn(runner);
        }) as Promise<never>,
      exec: async (script) => {
        await sql.unsafe(script);
      },
    },
    async tenantTransaction(orgId, fn) {
      assertUuid(orgId);
      // A reserved connection rather than sql.begin(), which waits for BEGIN before anything else:
      // here BEGIN, the tenant set-up and fn's first statement leave in one write (pipelined), so a
      // one-statement request costs two round trips (that, then COMMIT) instead of three.
      const conn = await sql.reserve();
      let inTransaction = true;
      try {
        const begin = conn.unsafe('begin').execute();
        const tenant = conn.unsafe(setup, [orgId], { prepare: true }).execute();
        begin.catch(() => {});
        tenant.catch(() => {});
        const result = await fn(wrap(conn));
        await begin;
        await tenant;
        await conn.unsafe('commit');
        inTransaction = false;
        return result;
      } catch (e) {
        if (inTransaction) await conn.unsafe('rollback').catch(() => {});
        throw e;
      } finally {
        conn.release();
      }
    },
    async tenantQuery<T>(orgId: string, text: string, params?: readonly unknown[]): Promise<T[]> {
      assertUuid(orgId);
      const conn = await sql.reserve();
      try {
        // All four leave in one write; if any fails, the ones after it fail too and COMMIT rolls back.
        const sent = [
          conn.unsafe('begin').execute(),
          conn.unsafe(setup, [orgId], { prepare: true }).execute(),
          conn.unsafe(text, (params ?? []) as postgres.ParameterOrJSON<never>[], { prepare: true }).execute(),
          conn.unsafe('commit').execute(),
        ];
        const settled = await Promise.allSettled(sent);
        const failed = settled.find((r) => r.status === 'rejected');
        if (failed) {
          await conn.unsafe('rollback').catch(() => {});
          throw (failed as PromiseRejectedResult).reason;
        }
        return (settled[2] as PromiseFulfilledResult<unknown>).value as T[];
      } finally {
        conn.release();
      }
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
