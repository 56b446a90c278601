// How a one-statement tenant read is sent, measured without HTTP, on a store seeded by the bench.
// PostgreSQL: the store's own tenantQuery (the tenant for the lane's session, then the statement)
// against the three-message read it replaced (BEGIN + tenant, the statement, COMMIT, on the same
// lanes) and a bare prepared statement on a pool (as bench/baseline.ts runs it). PGlite: the store's
// tenantQuery (the tenant in one Query message, then the statement) against the same with PGlite's
// exec() for the tenant (before 2026-11-24) and the bare statement. Each runs 50 concurrent loops of
// the nominee list's statement for random seeded users, in this process; prints reads/s and CPU µs
// per read of this process and, on PostgreSQL, of the backends it uses.
//   npm run bench -- --store postgres|pglite --keep-data ...   (prints the kept database or directory)
//   npx tsx bench/tenant-read.ts <postgres:// URL | PGlite data directory> [seconds] [rounds]
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase, serialQueue } from '../src/platform/db/open.js';
import { DEFAULT_PGLITE_SHARED_BUFFERS } from '../src/config.js';

const [target, secondsArg, roundsArg] = process.argv.slice(2);
if (!target) throw new Error('usage: tsx bench/tenant-read.ts <postgres:// URL | PGlite data directory> [seconds] [rounds]');
const onPostgres = /^postgres(ql)?:\/\//.test(target);
const seconds = Number(secondsArg ?? 5);
const rounds = Number(roundsArg ?? 2);
const CONCURRENCY = 50;
const APP = 'assent-bench-tenant-read';

const TEXT =
  'select id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status, verified_at, created_at, updated_at ' +
  'from nominees where org_id = $1 and client_user_id = $2 order by created_at desc, id desc';

type Read = (orgId: string, user: string) => Promise<unknown>;
interface Variant {
  name: string;
  open(): Promise<{ read: Read; close(): Promise<void> }>;
}

const common = { onnotice: () => {}, connection: { application_name: APP } } as const;

const postgresVariants: Variant[] = [
  {
    name: 'bare statement on a pool of 10 (the baseline)',
    async open() {
      const sql = postgres(target, { ...common, max: 10 });
      return { read: (org, user) => sql.unsafe(TEXT, [org, user], { prepare: true }), close: () => sql.end() };
    },
  },
  {
    name: 'BEGIN + tenant, statement, COMMIT on 4 lanes (before 2026-11-24)',
    async open() {
      const connection = { application_name: APP, role: 'assent_app' };
      const lanes = Array.from({ length: 4 }, () => ({ sql: postgres(target, { ...common, max: 1, connection }), inFlight: 0 }));
      return {
        async read(org, user) {
          const lane = lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
          lane.inFlight++;
          try {
            const [, rows] = await Promise.all([
              lane.sql.unsafe(`begin; set local app.org_id = '${org}'`).execute(),
              lane.sql.unsafe(TEXT, [org, user], { prepare: true }).execute(),
              lane.sql.unsafe('commit').execute(),
            ]);
            return rows;
          } finally {
            lane.inFlight--;
          }
        },
        close: async () => void (await Promise.all(lanes.map((l) => l.sql.end()))),
      };
    },
  },
  {
    name: "the store's tenantQuery: tenant, statement on 4 lanes",
    async open() {
      const db = await openDatabase({ databaseUrl: target, dataDir: 'memory://' });
      return { read: (org, user) => db.tenantQuery(org, TEXT, [org, user]), close: () => db.close() };
    },
  },
];

const pgliteParams = ['-c', `shared_buffers=${DEFAULT_PGLITE_SHARED_BUFFERS}`];
const pgliteVariants: Variant[] = [
  {
    name: 'bare statement (the baseline)',
    async open() {
      const pg = await PGlite.create(target, { startParams: [...PGlite.defaultStartParams, ...pgliteParams] });
      return { read: (org, user) => pg.query(TEXT, [org, user]), close: () => pg.close() };
    },
  },
  {
    name: 'tenant through exec(), statement (before 2026-11-24)',
    async open() {
      const pg = await PGlite.create(target, { startParams: [...PGlite.defaultStartParams, ...pgliteParams] });
      await pg.exec('set role assent_app');
      // PGlite is one connection: reads wait their turn, as the store's queue makes them.
      const queue = serialQueue();
      // As the store did: the tenant is set only when it differs from the session's.
      let session: string | null = null;
      return {
        read: (org, user) =>
          queue(async () => {
            if (session !== org) {
              session = null;
              await pg.exec(`set app.org_id = '${org}'`);
              session = org;
            }
            return pg.query(TEXT, [org, user]);
          }),
        close: () => pg.close(),
      };
    },
  },
  {
    name: "the store's tenantQuery: tenant in one message, statement",
    async open() {
      const db = await openDatabase({ databaseUrl: null, dataDir: target, sharedBuffers: DEFAULT_PGLITE_SHARED_BUFFERS });
      return { read: (org, user) => db.tenantQuery(org, TEXT, [org, user]), close: () => db.close() };
    },
  },
];
const variants = onPostgres ? postgresVariants : pgliteVariants;

const admin = onPostgres ? postgres(target, { max: 1, onnotice: () => {} }) : null;
const database = onPostgres ? new URL(target).pathname.slice(1) : target;
const pairs = await samplePairs();
if (pairs.length === 0) throw new Error('no nominees: seed the database first (npm run bench -- --keep-data)');

async function samplePairs(): Promise<{ org_id: string; client_user_id: string }[]> {
  const text = 'select org_id, client_user_id from nominees order by random() limit 5000';
  if (admin) return admin.unsafe(text);
  const pg = await PGlite.create(target!);
  try {
    return (await pg.query<{ org_id: string; client_user_id: string }>(text)).rows;
  } finally {
    await pg.close();
  }
}

/** Every backend on the benchmark database but the admin connection's (the store names its own connections). */
async function backendPids(): Promise<number[]> {
  if (!admin) return [];
  const rows = await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`;
  return rows.map((r) => r.pid);
}
function cpuMicros(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // clock ticks of 10 ms
  } catch {
    return 0;
  }
}

/** Reads in CONCURRENCY loops for `ms`; the clock is read in the loops, since PGlite may answer
 * without ever yielding to timers. */
async function drive(read: Read, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let count = 0;
  const loop = async (start: number) => {
    for (let i = start; performance.now() < end; i++) {
      const p = pairs[i % pairs.length]!;
      await read(p.org_id, p.client_user_id);
      count++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => loop(i * 97)));
  return count;
}

console.log(`tenant reads, ${CONCURRENCY} concurrent, ${seconds} s each after 1.5 s of warm-up, ${rounds} rounds, ${onPostgres ? 'database' : 'PGlite in'} ${database}`);
console.log(`| way | reads/s | CPU µs/read: this process | ${onPostgres ? 'PostgreSQL backends' : '(PGlite runs in this process)'} |`);
console.log('|---|---:|---:|---:|');
for (let round = 1; round <= rounds; round++) {
  for (const v of variants) {
    const { read, close } = await v.open();
    await drive(read, 1500);
    const pids = await backendPids();
    const pg0 = pids.reduce((s, p) => s + cpuMicros(p), 0);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const n = await drive(read, seconds * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = pids.reduce((s, p) => s + cpuMicros(p), 0);
    await close();
    const backends = onPostgres ? ((pg1 - pg0) / n).toFixed(1) : '-';
    console.log(`| ${v.name} (round ${round}) | ${Math.round(n / elapsed).toLocaleString('en')} | ${((cpu.user + cpu.system) / n).toFixed(1)} | ${backends} |`);
  }
}
await admin?.end();
