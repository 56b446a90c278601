// Issue 31 item 1: where one write's time goes, service against baseline, on PostgreSQL. Seeds a scratch
// database beside BENCH_DATABASE_URL (100 organizations; with --hooks, the webhook organization of
// bench/integration.ts with three endpoints at a receiver in this process), then for each server in
// turn (the service as `npm start` runs it, from bin/assent.mjs; the baseline of bench/run.ts), pinned
// to CPU 1, sends `POST /grievance` (autocannon, 50 connections, 3 s warm-up, then a 10 s window) and
// reports for the window:
//   - CPU per request of the server process and of all PostgreSQL processes (/proc, user + system);
//   - with pg_stat_statements loaded (shared_preload_libraries; a restart), each statement's calls,
//     execution time and WAL bytes per request;
//   - with --strace, the server's socket system calls per request (strace -c: it slows the server, so
//     the requests per second of that run are not comparable).
// Usage: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/write-anatomy.ts
//          [--hooks] [--strace] [--only service|baseline] [--idempotent]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/platform/db/store.js';
import { seedBench } from './seed.js';
import { seedHookOrg, startHookReceiver } from './integration.js';
import { BENCH_SECRET_KEY } from './secret.js';
import { scratchDatabase } from './scratch-db.js';

const { values: opts } = parseArgs({
  options: {
    hooks: { type: 'boolean', default: false },
    strace: { type: 'boolean', default: false },
    idempotent: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const base = process.env.BENCH_DATABASE_URL;
if (!base) throw new Error('set BENCH_DATABASE_URL (a role that may create databases)');
const PORT = 3999;

const scratch = await scratchDatabase(base, 'assent_anatomy');
const dbName = new URL(scratch.url).pathname.slice(1);
const admin = postgres(base, { max: 1, onnotice: () => {} });
const receiver = await startHookReceiver();
let targets: { slug: string; key: string }[];
const store = await openStore(loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' }), 'cli');
try {
  const data = await seedBench(store.db, { orgs: 100, grievances: 20_000, nominees: 2_000, links: 2_000, log: () => {} });
  targets = opts.hooks ? [await seedHookOrg(store.db, receiver.url)] : data.orgs;
} finally {
  await store.close();
}
const statements = (await admin.unsafe(`select count(*)::int as n from pg_extension where extname = 'pg_stat_statements'`))[0]!.n > 0
  || (await admin.unsafe(`select current_setting('shared_preload_libraries') ~ 'pg_stat_statements' as on`))[0]!.on;
if (statements) await admin.unsafe('create extension if not exists pg_stat_statements');

/** User + system CPU ticks (1/100 s) of a process; 0 when it is gone. */
function ticks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
const postgresPids = () =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres';
      } catch {
        return false;
      }
    })
    .map(Number);

async function measure(kind: 'service' | 'baseline'): Promise<void> {
  const env = {
    ...process.env,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    BASE_DOMAIN: 'localhost',
    RATE_LIMIT_PER_KEY: '1000000000',
    RATE_LIMIT_PER_ADDRESS: '1000000000',
    DATABASE_URL: scratch.url,
    ASSENT_SECRET_KEY: BENCH_SECRET_KEY,
    MESSAGE_PROVIDER: 'log',
    WEBHOOK_ALLOW_PRIVATE: '1',
  };
  const argv = kind === 'service' ? ['--v8-pool-size=1', 'bin/assent.mjs', 'serve'] : ['--v8-pool-size=1', '--import', 'tsx', 'bench/baseline.ts'];
  const server = spawn('taskset', ['-c', '1', process.execPath, ...argv], { env, stdio: 'inherit' });
  try {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${PORT}/health`, { headers: { host: 'localhost' } })).ok) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    let i = 0;
    const load = (seconds: number) =>
      autocannon({
        url: `http://127.0.0.1:${PORT}`,
        connections: 50,
        duration: seconds,
        requests: [
          {
            setupRequest: (req: autocannon.Request) => {
              const o = targets[i++ % targets.length]!;
              const headers: Record<string, string> = { host: `${o.slug}.localhost`, 'x-api-key': o.key, 'content-type': 'application/json' };
              if (opts.idempotent) headers['idempotency-key'] = randomUUID();
              const body = { client_user_id: `user-${i % 500}`, subject: `Benchmark request ${i}`, description: 'Please send me a copy of all the personal data you hold about me.', category: 'data_access' };
              return { ...req, method: 'POST', path: '/grievance', headers, body: JSON.stringify(body) };
            },
          },
        ],
      });
    await load(3);
    if (statements) await admin.unsafe('select pg_stat_statements_reset()');
    const pids = postgresPids();
    const before = { server: ticks(server.pid!), db: pids.reduce((a, p) => a + ticks(p), 0) };
    let tracer: ChildProcess | null = null;
    let traced = '';
    if (opts.strace) {
      tracer = spawn('strace', ['-f', '-c', '-e', 'trace=write,writev,read', '-p', String(server.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
      tracer.stderr!.on('data', (d) => (traced += d));
      await new Promise((r) => setTimeout(r, 500));
    }
    const r = await load(10);
    const after = { server: ticks(server.pid!), db: pids.reduce((a, p) => a + ticks(p), 0) };
    if (tracer) {
      tracer.kill('SIGINT');
      await new Promise((res) => tracer!.once('exit', res));
    }
    const n = r.requests.total;
    console.log(`\n== ${kind}: ${n} requests in 10 s (${Math.round(n / 10)}/s), non-2xx ${r.non2xx}, errors ${r.errors}`);
    console.log(`CPU µs per request: server ${Math.round(((after.server - before.server) * 10_000) / n)}, PostgreSQL (all its processes) ${Math.round(((after.db - before.db) * 10_000) / n)}`);
    if (opts.strace) {
      const calls = [...traced.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/gm)].map((m) => `${m[2]} ${(Number(m[1]) / n).toFixed(2)}`);
      console.log(`system calls per request (strace -c): ${calls.join(', ')}`);
    }
    if (statements) {
      const rows = await admin.unsafe(
        `select s.calls, s.total_exec_time as ms, s.wal_bytes, regexp_replace(s.query, '\\s+', ' ', 'g') as query
           from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = $1 order by s.total_exec_time desc limit 12`,
        [dbName],
      );
      console.log('calls/req  exec µs/req  WAL B/req  statement');
      for (const x of rows) {
        console.log(
          `${(Number(x.calls) / n).toFixed(2).padStart(9)}  ${((Number(x.ms) * 1000) / n).toFixed(1).padStart(11)}  ${String(Math.round(Number(x.wal_bytes) / n)).padStart(9)}  ${String(x.query).slice(0, 100)}`,
        );
      }
    } else {
      console.log('(pg_stat_statements is not loaded: add it to shared_preload_libraries and restart PostgreSQL for the statements)');
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((res) => (server.exitCode !== null ? res(null) : server.once('exit', res)));
  }
}

try {
  for (const kind of ['service', 'baseline'] as const) if (!opts.only || opts.only === kind) await measure(kind);
} finally {
  await admin.end();
  await receiver.close();
  await scratch.drop();
}
