// Opens the store: embedded PGlite in DATA_DIR by default, PostgreSQL through pools when DATABASE_URL is set.
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { Database, Queryable, ScriptRunner } from './types.js';
import { simpleQuery } from './pglite-simple-query.js';
import { describeConnectionFailure, StoreUnavailableError } from './connection-errors.js';
import { TENANT_ROLE } from './tenant-role.js';
import { coalescingSocket, singleHost, type SocketOptions } from './coalescing-socket.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Read lanes on PostgreSQL (tenantQuery): single-connection clients shared by all requests. Measured on
 * the 2-CPU development machine (bench/results/), 4 kept PostgreSQL busy without queueing behind each other.
 */
export const READ_LANES = 4;
/** Connections of each PostgreSQL pool (system, tenant transactions) unless OpenOptions.poolSize says otherwise. */
export const POOL_SIZE = 10;

export interface OpenOptions {
  /** null: embedded PGlite; a postgres:// URL: that server. */
  databaseUrl: string | null;
  /** PGlite data directory; 'memory://' keeps it in memory (tests). */
  dataDir: string;
  /** PGlite's shared_buffers (PGLITE_SHARED_BUFFERS); PostgreSQL's default, 128MB, when not given. */
  sharedBuffers?: string;
  /** Row-level security as the second isolation layer (ASSENT_RLS). */
  rls?: boolean;
  /** Connections of each PostgreSQL pool (system, tenant transactions). */
  poolSize?: number;
  /** PostgreSQL connections for the one-statement tenant reads (tests use 1 to force sharing). */
  readLanes?: number;
  /**
   * PGlite: start from this tarball of a data directory (PGlite's dumpDataDir) instead of running
   * initdb; the data directory must hold no store. Tests start each in-memory store from a migrated one.
   */
  loadDataDir?: Blob;
}

function assertUuid(orgId: string): void {
  if (!UUID.test(orgId)) throw new Error('tenant transaction needs an organization UUID');
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  const rls = options.rls ?? true;
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, rls, options.poolSize, options.readLanes)
    : openPglite(options.dataDir, rls, options.sharedBuffers, options.loadDataDir);
}

/**
 * `set local app.org_id = '<uuid>'`: the tenant for the rest of the transaction. A simple-protocol
 * statement with the UUID inlined (it was checked against a strict pattern, so it cannot leave the
 * literal), so it can share one message with BEGIN and has no row to describe or parse.
 */
function tenantForTransaction(orgId: string): string {
  assertUuid(orgId);
  return `set local app.org_id = '${orgId}'`;
}

/** `set app.org_id = '<uuid>'`: the tenant for the session (a PGlite session, a PostgreSQL read lane); same checks. */
function tenantForSession(orgId: string): string {
  assertUuid(orgId);
  return `set app.org_id = '${orgId}'`;
}

/** A queue that runs each function after the previous one has settled (PGlite's one connection). */
export function serialQueue(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn);
    tail = run.catch(() => {});
    return run;
  };
}

/**
 * PGlite is one connection, shared by system and tenant work. Every use goes through one queue, so
 * the connection's session state (role, tenant) is always known here, and is changed only when the
 * next use needs something else: switching role costs about 40 µs of catalog lookups on PGlite,
 * more than the rest of a tenant's set-up, and tenant work is nearly all of the traffic, so the
 * session stays in the tenant role until system work comes. A tenant read sets its tenant for the
 * session before it runs (nothing runs if that fails) and is its own implicit transaction; a tenant
 * transaction sets it transaction-locally. No statement ever runs with another tenant's setting:
 * each tenant use sets its own first, and system work resets both.
 */
async function openPglite(dataDir: string, rls: boolean, sharedBuffers: string | undefined, loadDataDir: Blob | undefined): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const startParams = sharedBuffers ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] : undefined;
  const pg = await PGlite.create(dataDir, { ...(startParams ? { startParams } : {}), ...(loadDataDir ? { loadDataDir } : {}) });
  const wrap = (q: { query: PGlite['query'] }): Queryable => ({
    async query<T>(text: string, params?: readonly unknown[]) {
      const result = await q.query<T>(text, params as unknown[] | undefined);
      return result.rows;
    },
  });
  // The connection itself, for work that already holds the queue below.
  const direct = wrap(pg);

  const oneAtATime = serialQueue();
  // null: not known (a change that failed half-way); reset before the next use.
  let session: { tenantRole: boolean; orgId: string | null } | null = { tenantRole: false, orgId: null };
  async function change(to: { tenantRole: boolean; orgId: string | null }): Promise<void> {
    const steps: string[] = [];
    if (session?.tenantRole !== to.tenantRole) steps.push(to.tenantRole ? `set role ${TENANT_ROLE}` : 'reset role');
    if (session?.orgId !== to.orgId) steps.push(to.orgId === null ? 'reset app.org_id' : tenantForSession(to.orgId));
    if (steps.length === 0) return;
    session = null;
    await simpleQuery(pg, steps.join('; '));
    session = to;
  }
  const asOwner = () => change({ tenantRole: false, orgId: null });
  const asTenant = (orgId: string, sessionTenant: string | null) => {
    assertUuid(orgId);
    return change({ tenantRole: rls, orgId: sessionTenant });
  };

  return {
    kind: 'pglite',
    system: {
      query: (text, params) =>
        oneAtATime(async () => {
          await asOwner();
          return direct.query(text, params);
        }),
      transaction: (fn) =>
        oneAtATime(async () => {
          await asOwner();
          return pg.transaction((tx) => {
            const runner: ScriptRunner = { ...wrap(tx), exec: async (script) => void (await tx.exec(script)) };
            return fn(runner);
          });
        }),
      exec: (script) =>
        oneAtATime(async () => {
          await asOwner();
          await pg.exec(script);
        }),
    },
    tenantTransaction(orgId, fn) {
      return oneAtATime(async () => {
        // The session's tenant stays as it was; this transaction's is its own, and ends with it.
        await asTenant(orgId, session?.orgId ?? null);
        await pg.exec(`begin; ${tenantForTransaction(orgId)}`);
        try {
          const result = await fn(direct);
          const [commit] = await pg.exec('commit');
          if (commit?.command !== 'COMMIT') throw new Error(`tenant transaction ended in ${commit?.command ?? 'an unknown state'}, not COMMIT`);
          return result;
        } catch (e) {
          await pg.exec('rollback').catch(() => {});
          throw e;
        }
      });
    },
    tenantQuery<T>(orgId: string, text: string, params?: readonly unknown[]) {
      return oneAtATime(async () => {
        await asTenant(orgId, orgId);
        return direct.query<T>(text, params);
      });
    },
    withQuietDataDir: (copy) =>
      oneAtATime(async () => {
        await asOwner();
        if (dataDir.startsWith('memory://')) throw new Error('an in-memory store has no data directory to back up');
        // Nothing runs on the one connection until copy settles: the files hold the checkpoint.
        await simpleQuery(pg, 'checkpoint');
        return copy(dataDir);
      }),
    close: () => oneAtATime(() => pg.close()),
  };
}

type Sql = postgres.Sql;
type Params = postgres.ParameterOrJSON<never>[];

/** The server's errors for a prepared statement that a schema change (or DEALLOCATE) invalidated. */
function invalidatedStatement(e: unknown): boolean {
  const routine = (e as { routine?: unknown } | null)?.routine;
  return routine === 'RevalidateCachedQuery' || routine === 'FetchPreparedStatement';
}

/**
 * A prepared statement for a read lane that postgres.js will not send again. When the server refuses a
 * statement it had prepared (a schema change invalidated its plan), postgres.js prepares and sends it
 * again after what is already queued on the connection; with several reads pipelined on one
 * connection it then loses track of which answer belongs to which query (postgres.js 3.4.9: answers
 * delivered to the wrong query, a TypeError, queries that never settle; test/contract/isolation.test.ts
 * reproduces it). A query whose `retried` is already set is not sent again: postgres.js rejects it
 * with that value instead, whatever the server's error was, so the caller learns only that the server
 * refused it. That test fails if a later postgres.js stops honouring this.
 */
function reportNotResend(client: Sql, text: string, params: readonly unknown[] | undefined) {
  const marker = { refusedByServer: true };
  const statement = client.unsafe(text, (params ?? []) as Params, { prepare: true });
  (statement as unknown as { retried: unknown }).retried = marker;
  return { statement, marker };
}

async function openPostgres(url: string, rls: boolean, poolSize = POOL_SIZE, readLanes = READ_LANES): Promise<Database> {
  const common = { onnotice: () => {} } as const;
  // The owner: migrations, and the lookups made before a tenant is known. Bypasses row-level security.
  const sql = postgres(url, { ...common, max: poolSize, connection: { application_name: 'assent' } });
  // Tenant connections start as the unprivileged role (a start-up parameter, as PGOPTIONS='-c role=…'
  // would set it), so nothing sent on them escapes row-level security, even outside a tenant
  // transaction; the only per-transaction set-up left is the tenant.
  const tenantConnection = { application_name: 'assent-tenant', ...(rls ? { role: TENANT_ROLE } : {}) };
  // Tenant transactions send their batches in one write each (coalescing-socket.ts): fewer wake-ups of
  // both processes per write request.
  const coalescing = singleHost(url) ? { socket: (o: SocketOptions) => coalescingSocket(o) } : {};
  const tenantSql = postgres(url, { ...common, ...coalescing, max: poolSize, connection: tenantConnection } as postgres.Options<Record<string, never>>);
  const laneClient = () => postgres(url, { ...common, max: 1, connection: tenantConnection });
  const lanes = Array.from({ length: Math.max(1, readLanes) }, () => ({ sql: laneClient(), inFlight: 0 }));
  const wrap = (s: Sql | postgres.TransactionSql | postgres.ReservedSql): Queryable => ({
    async query<T>(text: string, params?: readonly unknown[]) {
      const rows = await s.unsafe(text, (params ?? []) as Params, { prepare: true });
      return rows as unknown as T[];
    },
  });
  const tenantTransaction: Database['tenantTransaction'] = async (orgId, fn) => {
    // The role comes with the tenant connection; BEGIN and the tenant are one message.
    const open = `begin; ${tenantForTransaction(orgId)}`;
    // A reserved connection rather than sql.begin(), which waits for BEGIN before anything else:
    // here the opening and fn's first statement leave in one write (pipelined), so a one-statement
    // transaction costs two round trips (that, then COMMIT) instead of three.
    const conn = await tenantSql.reserve();
    let inTransaction = true;
    try {
      const opened = conn.unsafe(open).execute();
      opened.catch(() => {});
      const result = await fn(wrap(conn));
      await opened;
      // A statement fn sent without waiting for it (pipelined with COMMIT) that failed leaves the
      // transaction aborted, and the server then answers COMMIT with ROLLBACK: never taken for a commit.
      const commit = await conn.unsafe('commit');
      inTransaction = false;
      if (commit.command !== 'COMMIT') throw new Error(`tenant transaction ended in ${commit.command ?? 'an unknown state'}, not COMMIT`);
      return result;
    } catch (e) {
      if (inTransaction) await conn.unsafe('rollback').catch(() => {});
      throw e;
    } finally {
      conn.release();
    }
  };
  try {
    await sql`select 1`;
  } catch (e) {
    await Promise.all([sql, tenantSql, ...lanes.map((l) => l.sql)].map((s) => s.end({ timeout: 0 }).catch(() => {})));
    const problem = describeConnectionFailure(e, url);
    throw problem ? new StoreUnavailableError(problem) : e;
  }
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
    tenantTransaction,
    async tenantQuery<T>(orgId: string, text: string, params?: readonly unknown[]): Promise<T[]> {
      const setTenant = tenantForSession(orgId);
      // Two messages queued at once on the least busy lane, behind other requests' reads: the tenant
      // for the lane's session, then the statement. postgres.js pipelines a lane's queue in order, so
      // they share writes, round trips and wake-ups of the server, and, queued in the same tick, nothing
      // can come between them: the statement runs with this read's tenant. Lanes run nothing but tenant
      // reads, and every read sets its own tenant first, so no statement runs with another's. No
      // transaction: BEGIN and COMMIT cost more than the tenant (docs/architecture.md, "Tenant reads").
      const lane = lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
      const client = lane.sql;
      const refused = reportNotResend(client, text, params);
      lane.inFlight++;
      let outcome: [PromiseSettledResult<unknown>, PromiseSettledResult<unknown>];
      try {
        outcome = await Promise.allSettled([client.unsafe(setTenant).execute(), refused.statement.execute()]);
      } finally {
        lane.inFlight--;
      }
      const [tenantSet, answered] = outcome;
      // The statement was sent before the tenant was known to be set: if setting it failed, its answer
      // is not used.
      if (tenantSet.status === 'rejected') throw tenantSet.reason;
      if (answered.status === 'fulfilled') return answered.value as T[];
      if (answered.reason !== refused.marker) throw answered.reason;
      // The server refused the statement. Either the statement is wrong (its error comes back again
      // below) or the lane's prepared copy of it was invalidated by a schema change (the statement then
      // answers below, and the lane gets a fresh client, which prepares its statements anew). The
      // tenant transaction runs it on a connection of its own, with its own tenant (a read has no
      // effect to repeat). A pooled connection may hold an invalidated copy too: it fails there once
      // (postgres.js drops that copy) and the read is sent again, so at most one time more than the
      // pool has connections.
      let rows: T[];
      for (let attempt = 1; ; attempt++) {
        try {
          rows = await tenantTransaction(orgId, (tx) => tx.query<T>(text, params));
          break;
        } catch (e) {
          if (attempt > poolSize || !invalidatedStatement(e)) throw e;
        }
      }
      if (lane.sql === client) {
        lane.sql = laneClient();
        void client.end({ timeout: 5 }).catch(() => {});
      }
      return rows;
    },
    listen: (channel, onMessage, onConnect, onDisconnect) => listenPostgres(url, channel, onMessage, onConnect, onDisconnect),
    close: async () => {
      await Promise.all([sql, tenantSql, ...lanes.map((l) => l.sql)].map((s) => s.end({ timeout: 5 })));
    },
  };
}

/**
 * A LISTEN connection of its own. Not postgres.js' sql.listen(): after a lost connection it subscribes
 * again once, and if the server is still away then, never again; this one retries every second until
 * the subscription holds, and says so through onConnect each time.
 */
async function listenPostgres(
  url: string,
  channel: string,
  onMessage: (payload: string) => void,
  onConnect: () => void,
  onDisconnect?: () => void,
): Promise<{ close(): Promise<void> }> {
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  const client = postgres(url, {
    onnotice: () => {},
    max: 1,
    max_lifetime: null,
    fetch_types: false,
    connection: { application_name: 'assent-listen' },
    onclose: () => {
      if (closed) return;
      onDisconnect?.();
      schedule();
    },
    // Not in postgres.js' type declarations, but an option it reads: every NOTIFY on the connection.
    ...({ onnotify: (c: string, payload: string) => c === channel && onMessage(payload) } as object),
  });
  const subscribe = async () => {
    await client.unsafe(`listen "${channel.replace(/"/g, '""')}"`);
    onConnect();
  };
  function schedule() {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      subscribe().catch(() => schedule());
    }, 1000);
    retry.unref();
  }
  await subscribe();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client.end({ timeout: 1 });
    },
  };
}
