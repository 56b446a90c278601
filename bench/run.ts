// `npm run bench [-- --quick]`: every benchmarked endpoint of the service against a bare baseline
// (bench/baseline.ts: the same SQL in a bare Fastify route), side by side, in the same run and on the same
// store: the embedded store, and PostgreSQL when BENCH_DATABASE_URL is set. Seeds the data first
// (bench/seed.ts), runs the service and the baseline as separate processes, one at a time, pinned to
// another core than this load generator (autocannon) where the machine allows, and reports req/s, p50,
// p99, the ratios, non-2xx counts and the service's peak RSS: a table on stdout, JSON and Markdown under
// bench/results/. Exits 0 only when the report was written, every endpoint ran, and every response was 2xx.
import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/platform/db/store.js';
import { GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES } from '../src/features/grievances/index.js';
import { RELATIONSHIPS } from '../src/features/nominees/index.js';
import { seedBench, type BenchData } from './seed.js';
import { BENCH_SECRET_KEY } from './secret.js';
import { CATEGORIES, summariseProfile, type ProfileSummary } from './profile.js';
import { integrationEndpoints, seedHookOrg, startHookReceiver } from './integration.js';
import { fulfilmentEndpoints, seedFulfilmentOrg } from './fulfilment.js';
import { scratchDatabase } from './scratch-db.js';
import { createSequencer } from '../src/features/transparency/sequencer.js';
import { systemClock } from '../src/platform/clock.js';
import { createWebhookWorker } from '../src/platform/webhooks/worker.js';
import { secretBox } from '../src/platform/webhooks/secrets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench/results');

// ---------------------------------------------------------------------------------------------- options

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    store: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    orgs: { type: 'string' },
    grievances: { type: 'string' },
    nominees: { type: 'string' },
    links: { type: 'string' },
    profile: { type: 'boolean', default: false },
    out: { type: 'string' },
    'keep-data': { type: 'boolean', default: false },
    principals: { type: 'string' },
    dist: { type: 'string' },
    only: { type: 'string' },
    'baseline-first': { type: 'boolean', default: false },
    rounds: { type: 'string' },
    soak: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

const USAGE = `Usage: npm run bench -- [--quick] [--store pglite|postgres|all] [--profile]
       [--duration S] [--warmup S] [--connections N] [--orgs N] [--grievances N] [--nominees N] [--links N]
       [--out FILE.json] [--keep-data] [--dist DIR] [--only TEXT[,TEXT...]] [--baseline-first] [--rounds N]
PostgreSQL runs too when BENCH_DATABASE_URL is set (postgres://user@host:5432/db, a role that may create
databases): the run seeds a scratch database of its own beside it and drops it afterwards.
--quick: small data, 1-second runs, 10 connections (CI). --profile: also profile both servers (node --cpu-prof) per endpoint.
--dist DIR: serve the service from DIR (a build of a proposed change, inside the checkout) instead of dist/.
--only: measure only the endpoints whose name contains one of these texts (case-insensitive), e.g. --only user/,POST (for iterating).
--baseline-first: in each phase the baseline runs before the service (to see whether the order matters).
--rounds N: measure each endpoint N times per server, alternating which server goes first (service, baseline,
  then baseline, service: ABBA), a fresh process each time; figures are over all rounds. Default 2 (quick: 1).
--soak SECONDS [--store …] [--connections N] [--principals N]: instead, a soak of mixed reads and writes on each store for SECONDS
  (bench/soak.ts): errors, requests and RSS per minute.`;

/** In each phase, which server is measured first (in the first round; the next round reverses it, and so on). */
const SERVER_ORDER = args['baseline-first'] ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const);
/** The servers' order in round `r` (0-based): ABBA over two rounds. */
const orderOfRound = (r: number) => (r % 2 === 0 ? SERVER_ORDER : ([SERVER_ORDER[1], SERVER_ORDER[0]] as const));

if (args.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}

if (args.soak !== undefined) {
  const { soak } = await import('./soak.js');
  process.exit(
    await soak({
      seconds: Number(args.soak),
      store: args.store,
      connections: args.connections === undefined ? undefined : Number(args.connections),
      principals: args.principals === undefined ? undefined : Number(args.principals),
    }),
  );
}

const quick = args.quick;
const num = (v: string | undefined, fallback: number, name: string): number => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
  return n;
};
const opts = {
  duration: num(args.duration, quick ? 1 : 10, 'duration'),
  warmup: num(args.warmup, quick ? 0.25 : 3, 'warmup'),
  connections: num(args.connections, quick ? 10 : 50, 'connections'),
  orgs: num(args.orgs, quick ? 3 : 100, 'orgs'),
  grievances: num(args.grievances, quick ? 2_000 : 1_000_000, 'grievances'),
  nominees: num(args.nominees, quick ? 500 : 100_000, 'nominees'),
  links: num(args.links, quick ? 2_000 : 1_000_000, 'links'),
  rounds: num(args.rounds, quick ? 1 : 2, 'rounds'),
};
if (opts.orgs < 1) throw new Error('--orgs must be at least 1');
if (!Number.isInteger(opts.rounds) || opts.rounds < 1) throw new Error('--rounds must be a whole number, at least 1');

type StoreKind = 'pglite' | 'postgres';
const benchDatabaseUrl = process.env.BENCH_DATABASE_URL || null;
const stores: StoreKind[] = (() => {
  const s = args.store ?? 'all';
  if (s === 'pglite') return ['pglite'];
  if (s === 'postgres' || s === 'all') {
    if (!benchDatabaseUrl) {
      if (s === 'postgres') throw new Error('--store postgres needs BENCH_DATABASE_URL');
      return ['pglite'];
    }
    return s === 'all' ? ['pglite', 'postgres'] : ['postgres'];
  }
  throw new Error(`--store must be pglite, postgres or all, got "${s}"`);
})();

const t0 = performance.now();
const log = (line: string) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
/** Counted before this process pins itself to one CPU. */
const MACHINE_CPUS = os.availableParallelism();

// ---------------------------------------------------------------------------------------------- pinning

interface Pinning {
  pinned: boolean;
  server: string;
  loadGenerator: string;
  note: string;
}

/** This process (the load generator) on CPU 0, the servers on CPU 1, when taskset and two CPUs are there. */
function pinCores(): Pinning {
  const cpus = MACHINE_CPUS;
  const none = (why: string): Pinning => ({ pinned: false, server: 'any', loadGenerator: 'any', note: `not pinned: ${why}` });
  if (cpus < 2) return none(`${cpus} CPU available`);
  try {
    execFileSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' });
  } catch {
    return none('taskset is missing or refused');
  }
  return {
    pinned: true,
    server: 'CPU 1 (taskset -c 1)',
    loadGenerator: 'CPU 0 (taskset -a -cp 0)',
    note: `${cpus} CPUs; the embedded store runs inside the server process; PostgreSQL's own processes are not pinned and share both CPUs`,
  };
}

// ---------------------------------------------------------------------------------------------- servers

type ServerKind = 'service' | 'baseline';

interface StoreTarget {
  kind: StoreKind;
  dataDir: string | null;
  databaseUrl: string | null;
}

interface RunningServer {
  kind: ServerKind;
  pid: number;
  port: number;
  proc: ChildProcess;
  exited: Promise<number | null>;
  logPath: string;
}

/**
 * `assent serve` from dist/, built once when the run starts (buildDist): bin/assent.mjs would rebuild
 * before every start while src/ is being edited, and the service under test could change mid-run.
 */
const SERVICE_DIST = args.dist ? resolve(args.dist) : join(ROOT, 'dist');
const SERVE_FROM_DIST = `import(${JSON.stringify(pathToFileURL(join(SERVICE_DIST, 'cli/main.js')).href)}).then(async (m) => { process.exitCode = await m.main(['serve']); })`;

/**
 * The Node flags `npm start` runs the service with (package.json's start script, e.g. --v8-pool-size=1;
 * docs/operations.md): both servers get them, so the service is measured as it is run, and the ratio
 * measures the service's own work, not a flag.
 */
function startScriptNodeFlags(startScript: string): string[] {
  // The script may exec node (so that npm's signals reach the server): `exec node --flag … bin/assent.mjs serve`.
  const [command, ...rest] = startScript.trim().replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node') return [];
  const firstNonFlag = rest.findIndex((w) => !w.startsWith('--'));
  return firstNonFlag === -1 ? rest : rest.slice(0, firstNonFlag);
}
const NODE_FLAGS = startScriptNodeFlags(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '',
);

/** Builds dist/ when src/ is newer than it, as bin/assent.mjs does (its help verb builds, then exits 0). */
function buildDist(): void {
  if (args.dist) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'bin/assent.mjs'), '--help'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    throw new Error('could not build dist/ (compiler errors above)');
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

interface Reply {
  status: number;
  body: string;
}

function request(port: number, r: { method: string; path: string; headers: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: r.headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(r.body);
  });
}

async function startServer(kind: ServerKind, store: StoreTarget, pinning: Pinning, workDir: string, cpuProfDir?: string): Promise<RunningServer> {
  const port = await freePort();
  const node =
    kind === 'service'
      ? [process.execPath, ...NODE_FLAGS, ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), '--input-type=module', '-e', SERVE_FROM_DIST]
      : [process.execPath, ...NODE_FLAGS, ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), '--import', 'tsx', join(ROOT, 'bench/baseline.ts')];
  const argv = pinning.pinned ? ['taskset', '-c', '1', ...node] : node;
  // The bench measures the service, not its rate limits (one key, one address, thousands of requests a second).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    BASE_DOMAIN: 'localhost',
    RATE_LIMIT_PER_KEY: '1000000000',
    RATE_LIMIT_PER_ADDRESS: '1000000000',
    // The webhook write's endpoints are at a receiver in this process (bench/integration.ts).
    WEBHOOK_ALLOW_PRIVATE: '1',
  };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'REDIS_URL', 'PUBLIC_URL', 'TRUST_PROXY', 'ASSENT_RLS', 'NODE_OPTIONS']) delete env[k];
  if (store.databaseUrl) env.DATABASE_URL = store.databaseUrl;
  else env.DATA_DIR = store.dataDir!;
  // Seals the organizations' receipt signing keys (a server on PostgreSQL refuses to start without one).
  env.ASSENT_SECRET_KEY = BENCH_SECRET_KEY;
  // Nothing is sent from a benchmark: the log provider, said explicitly (PostgreSQL refuses the default).
  env.MESSAGE_PROVIDER = 'log';
  const logPath = join(workDir, `${store.kind}-${kind}-${Date.now()}.log`);
  const out = createWriteStream(logPath);
  const proc = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.pipe(out);
  proc.stderr!.pipe(out);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const server: RunningServer = { kind, pid: proc.pid!, port, proc, exited, logPath };
  // The service may first build dist/ (bin/assent.mjs does when src/ changed): allow for it.
  const deadline = Date.now() + 180_000;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`${kind} exited during start-up; its output:\n${tail(logPath)}`);
    if (Date.now() > deadline) {
      await stopServer(server);
      throw new Error(`${kind} did not answer /health within 180 s; its output:\n${tail(logPath)}`);
    }
    try {
      const r = await request(port, { method: 'GET', path: '/health', headers: { host: 'localhost' } });
      if (r.status === 200) return server;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/** Peak resident set size of a live process, from /proc (VmHWM), in MiB; null where /proc is not there. */
function peakRssMb(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function stopServer(s: RunningServer): Promise<void> {
  s.proc.kill('SIGTERM');
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 20_000);
  await s.exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------- endpoints

interface Built {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Endpoint {
  name: string;
  kind: 'read' | 'write';
  /** The i-th request of a run, from a seeded random source (the same sequence for service and baseline). */
  build(random: () => number, i: number): Built;
  /** Runs once each time a server starts, before the endpoint is measured on it (a login). */
  prepare?(port: number, server: ServerKind): Promise<void>;
  /** Runs after the endpoint was driven on a server, before its next endpoint (the webhook backlog drains). */
  after?(port: number, server: ServerKind): Promise<void>;
}

/** mulberry32: a small seeded generator, so both servers get the same requests. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function endpoints(data: BenchData): Endpoint[] {
  const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const orgOf = (random: () => number) => pick(random, data.orgs);
  const keyed = (slug: string, key: string, json: boolean): Record<string, string> => ({
    host: `${slug}.localhost`,
    'x-api-key': key,
    ...(json ? { 'content-type': 'application/json' } : {}),
  });
  const list: Endpoint[] = [
    {
      name: 'GET /grievance/user/{id}',
      kind: 'read',
      build: (random) => {
        const org = orgOf(random);
        return { method: 'GET', path: `/grievance/user/user-${Math.floor(random() * org.grievanceUsers)}`, headers: keyed(org.slug, org.key, false) };
      },
    },
    {
      name: 'GET /nominee/user/{id}',
      kind: 'read',
      build: (random) => {
        const org = orgOf(random);
        return { method: 'GET', path: `/nominee/user/user-${Math.floor(random() * org.nomineeUsers)}`, headers: keyed(org.slug, org.key, false) };
      },
    },
  ];
  const c = data.consent;
  if (c) {
    const headers = { host: `${c.slug}.localhost`, 'x-api-key': c.adminKey, 'x-org-id': c.slug };
    const base = `/api/v1/external/public/consent-link/history?asset_id=${c.assetId}`;
    const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const deepOffset = Math.min(10_000, Math.floor(c.links / 2));
    list.push(
      { name: 'GET history (first page)', kind: 'read', build: () => ({ method: 'GET', path: base, headers }) },
      { name: 'GET history (30-day window)', kind: 'read', build: () => ({ method: 'GET', path: `${base}&from=${encodeURIComponent(from)}`, headers }) },
      { name: `GET history (offset ${deepOffset.toLocaleString('en-US')})`, kind: 'read', build: () => ({ method: 'GET', path: `${base}&offset=${deepOffset}`, headers }) },
    );
    // The same first page with an owner's Bearer token instead of the key: the service logs in once each
    // time it starts (the baseline takes no credentials, so its route is the API-key one's).
    let bearer = '';
    list.push({
      name: 'GET history (first page, Bearer)',
      kind: 'read',
      prepare: async (port, server) => {
        if (server === 'baseline') return;
        const r = await request(port, {
          method: 'POST',
          path: '/auth/login',
          headers: { host: `${c.slug}.localhost`, 'content-type': 'application/json' },
          body: JSON.stringify(c.owner),
        });
        if (r.status !== 200) throw new Error(`logging in as the bench owner: ${r.status} ${r.body.slice(0, 200)}`);
        bearer = (JSON.parse(r.body) as { access_token: string }).access_token;
      },
      build: () => ({ method: 'GET', path: base, headers: { host: headers.host, 'x-org-id': c.slug, authorization: `Bearer ${bearer}` } }),
    });
  }
  list.push(
    {
      name: 'POST /grievance',
      kind: 'write',
      build: (random, i) => {
        const org = orgOf(random);
        const body = {
          client_user_id: `user-${Math.floor(random() * org.grievanceUsers)}`,
          subject: `Benchmark request ${i}`,
          description: 'Please send me a copy of all the personal data you hold about me, with where it came from and who received it.',
          category: GRIEVANCE_CATEGORIES[i % GRIEVANCE_CATEGORIES.length],
        };
        return { method: 'POST', path: '/grievance', headers: keyed(org.slug, org.key, true), body: JSON.stringify(body) };
      },
    },
    {
      name: 'PUT /grievance/{ticket_id}',
      kind: 'write',
      build: (random, i) => {
        const org = orgOf(random);
        // Statuses in turn, so most updates change the status and append a history entry.
        const body = { status: GRIEVANCE_STATUSES[i % GRIEVANCE_STATUSES.length] };
        return { method: 'PUT', path: `/grievance/${pick(random, org.tickets)}`, headers: keyed(org.slug, org.key, true), body: JSON.stringify(body) };
      },
    },
    {
      name: 'POST /nominee',
      kind: 'write',
      build: (random, i) => {
        const org = orgOf(random);
        const body = {
          user_id: `user-${Math.floor(random() * org.nomineeUsers)}`,
          nominee_name: `Bench Nominee ${i}`,
          nominee_email: `Bench.Nominee${i}@Example.com`,
          nominee_mobile: String(9_000_000_000 + (i % 1_000_000_000)),
          relationship: RELATIONSHIPS[i % RELATIONSHIPS.length],
          purpose_of_appointment: 'Acts for me if I cannot',
        };
        return { method: 'POST', path: '/nominee', headers: keyed(org.slug, org.key, true), body: JSON.stringify(body) };
      },
    },
  );
  if (c) {
    // The link itself, without the SMS (send_sms: false): with one, the service's outbox worker would
    // also deliver about as many messages as links are created, a workload of its own that the bare
    // route has no counterpart for.
    list.push({
      name: 'POST consent-link',
      kind: 'write',
      build: (random, i) => {
        const body = {
          asset_id: c.assetId,
          collection_point_id: pick(random, c.pointIds),
          phone: String(9_000_000_000 + Math.floor(random() * 999_999_999)),
          dp_id: `dp-bench-${i}`,
          send_sms: false,
        };
        return {
          method: 'POST',
          path: '/api/v1/external/public/consent-link',
          headers: { host: `${c.slug}.localhost`, 'x-api-key': c.adminKey, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        };
      },
    });
  }
  if (c) list.push(...principalEndpoints(c));
  return list;
}

/**
 * A data principal's own API with their `dpt_` token (issue 15 item 9): the service mints a token for each
 * bench person once each time it starts; the baseline takes no credentials and reads the person from
 * X-Bench-Dp-Id (sent to both; the service ignores it and acts for the token's person).
 */
function principalEndpoints(c: NonNullable<BenchData['consent']>): Endpoint[] {
  const p = c.principals;
  const tokens = new Map<string, string>();
  const prepare = async (port: number, server: ServerKind) => {
    if (server === 'baseline') return;
    for (const dpId of p.dpIds) {
      const r = await request(port, {
        method: 'POST',
        path: `/api/v1/data-principals/${dpId}/tokens`,
        headers: { host: `${c.slug}.localhost`, 'x-api-key': c.adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ ttl_seconds: 3600 }),
      });
      if (r.status !== 201) throw new Error(`minting a token for ${dpId}: ${r.status} ${r.body.slice(0, 200)}`);
      tokens.set(dpId, (JSON.parse(r.body) as { access_token: string }).access_token);
    }
  };
  const who = (random: () => number) => {
    const i = Math.floor(random() * p.dpIds.length);
    const dpId = p.dpIds[i]!;
    return { i, dpId, headers: { host: `${c.slug}.localhost`, authorization: `Bearer ${tokens.get(dpId) ?? 'none'}`, 'x-bench-dp-id': dpId } };
  };
  return [
    {
      name: 'GET /api/v1/me/consents (DP token)',
      kind: 'read',
      prepare,
      build: (random) => ({ method: 'GET', path: '/api/v1/me/consents', ...who(random) }),
    },
    {
      name: 'POST /api/v1/me/consents/{id} (DP token)',
      kind: 'write',
      prepare,
      build: (random, n) => {
        const { i, headers } = who(random);
        // One of the points where this person already has a consent: the record changes their choices.
        const point = p.points[(i + Math.floor(random() * p.perPerson)) % p.points.length]!;
        const purposes = point.purposes.map((id, j) => ({ id, granted: j === 0 || (n + j) % 2 === 0 }));
        return { method: 'POST', path: `/api/v1/me/consents/${point.id}`, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ purposes }) };
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------- load

interface Measured {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  /** The first non-2xx body seen, to say what went wrong. */
  firstFailure: string | null;
  /** Load window on CLOCK_MONOTONIC in microseconds (matches --cpu-prof sample times). */
  window: { startUs: number; endUs: number };
  /** Measured a second time because the first window had no response at all. */
  retried?: boolean;
  /**
   * CPU time per answered request inside the load window, in microseconds (utime + stime from /proc):
   * the server process, and the PostgreSQL backends serving its database (null: not readable here).
   */
  cpuUs: { server: number | null; database: number | null };
  /**
   * What the database's active backends were doing, sampled every 100 ms in the load window (PostgreSQL
   * only): samples per `wait_event_type:wait_event` (`CPU` when not waiting), summed over the windows.
   */
  waits?: Record<string, number>;
  /** Each round's own figures, when there were several (in round order; see --rounds). */
  rounds?: { rps: number; p50: number; p99: number; cpuUs: { server: number | null; database: number | null } }[];
}

/** One load window as drive() measured it, with its raw latencies (kept out of the report). */
type Window = Measured & { latencies: Float64Array };

/** The figures over several windows of one server and endpoint: requests over seconds, percentiles over all latencies. */
function combine(windows: Window[]): Measured {
  const strip = ({ latencies: _latencies, ...m }: Window): Measured => m;
  if (windows.length === 1) return strip(windows[0]!);
  const requests = windows.reduce((a, w) => a + w.requests, 0);
  const seconds = windows.reduce((a, w) => a + w.seconds, 0);
  const all = new Float64Array(windows.reduce((a, w) => a + w.latencies.length, 0));
  let at = 0;
  for (const w of windows) {
    all.set(w.latencies, at);
    at += w.latencies.length;
  }
  all.sort();
  const statuses: Record<string, number> = {};
  for (const w of windows) for (const [code, count] of Object.entries(w.statuses)) statuses[code] = (statuses[code] ?? 0) + count;
  // Per-request CPU is weighted by each window's requests (total CPU over total requests).
  const cpu = (pick: (c: Measured['cpuUs']) => number | null): number | null => {
    if (requests === 0 || windows.some((w) => w.requests > 0 && pick(w.cpuUs) === null)) return null;
    return windows.reduce((a, w) => a + (w.requests > 0 ? pick(w.cpuUs)! * w.requests : 0), 0) / requests;
  };
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    non2xx: windows.reduce((a, w) => a + w.non2xx, 0),
    errors: windows.reduce((a, w) => a + w.errors, 0),
    timeouts: windows.reduce((a, w) => a + w.timeouts, 0),
    statuses,
    firstFailure: windows.find((w) => w.firstFailure !== null)?.firstFailure ?? null,
    window: windows[0]!.window,
    ...(windows.some((w) => w.retried) ? { retried: true } : {}),
    cpuUs: { server: cpu((c) => c.server), database: cpu((c) => c.database) },
    ...(windows.some((w) => w.waits) ? { waits: sumWaits(windows.map((w) => w.waits)) } : {}),
    rounds: windows.map((w) => ({ rps: w.rps, p50: w.p50, p99: w.p99, cpuUs: w.cpuUs })),
  };
}

function sumWaits(all: (Record<string, number> | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of all) for (const [k, n] of Object.entries(w ?? {})) out[k] = (out[k] ?? 0) + n;
  return out;
}

/** The three commonest states of the database's active backends, as shares of the samples. */
function waitsCell(w: Record<string, number> | undefined): string {
  if (!w) return '-';
  const total = Object.values(w).reduce((a, n) => a + n, 0);
  if (total === 0) return '-';
  return Object.entries(w)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([k, n]) => `${k} ${Math.round((n / total) * 100)}%`)
    .join(', ');
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where it cannot be read. */
function cpuSeconds(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces): state is the first, utime the 12th, stime the 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** What a load window's CPU is counted on: the server process, and the database's backends (PostgreSQL on this machine). */
interface CpuProbe {
  serverPid: number;
  databasePids?: () => Promise<number[]>;
  /** The wait event of each active backend of the database (`CPU` when it waits for nothing). */
  databaseWaits?: () => Promise<string[]>;
}

/** Samples the database's wait events every 100 ms until stopped. */
function waitSampler(probe: CpuProbe | undefined): { stop(): Promise<Record<string, number> | undefined> } {
  if (!probe?.databaseWaits) return { stop: async () => undefined };
  const counts: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const w of await probe.databaseWaits!().catch(() => [])) counts[w] = (counts[w] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return counts;
    },
  };
}

async function cpuSnapshot(probe: CpuProbe | undefined): Promise<{ server: number | null; database: Map<number, number> | null }> {
  if (!probe) return { server: null, database: null };
  const server = cpuSeconds(probe.serverPid);
  if (!probe.databasePids) return { server, database: null };
  const database = new Map<number, number>();
  for (const pid of await probe.databasePids()) {
    const s = cpuSeconds(pid);
    if (s === null) return { server, database: null };
    database.set(pid, s);
  }
  return { server, database };
}

function cpuPerRequestUs(
  before: Awaited<ReturnType<typeof cpuSnapshot>>,
  after: Awaited<ReturnType<typeof cpuSnapshot>>,
  requests: number,
): Measured['cpuUs'] {
  if (requests === 0) return { server: null, database: null };
  const server = before.server !== null && after.server !== null ? ((after.server - before.server) * 1e6) / requests : null;
  let database: number | null = null;
  if (before.database && after.database) {
    // Backends that started inside the window count from zero; those that ended are lost (rare: pools are kept open).
    let sum = 0;
    for (const [pid, s] of after.database) sum += s - (before.database.get(pid) ?? 0);
    database = (sum * 1e6) / requests;
  }
  return { server, database };
}

async function drive(port: number, ep: Endpoint, seconds: number, connections: number, seed: number, probe?: CpuProbe): Promise<Window> {
  const random = seeded(seed);
  const cpuBefore = await cpuSnapshot(probe);
  const sampler = waitSampler(probe);
  let i = 0;
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const statuses: Record<string, number> = {};
  let firstFailure: string | null = null;
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            setupRequest: (req) => {
              const b = ep.build(random, i++);
              return { ...req, method: b.method, path: b.path, headers: b.headers, body: b.body };
            },
            onResponse: (status, body) => {
              if ((status < 200 || status > 299) && firstFailure === null) firstFailure = `${status} ${body.slice(0, 300)}`;
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (n === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[n++] = responseTime;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
  const endUs = Number(process.hrtime.bigint() / 1000n);
  const waits = await sampler.stop();
  const cpuAfter = await cpuSnapshot(probe);
  const sorted = latencies.subarray(0, n).sort();
  const non2xx = Object.entries(statuses).reduce((sum, [code, count]) => sum + (Number(code) >= 200 && Number(code) <= 299 ? 0 : count), 0);
  return {
    requests: n,
    seconds: result.duration,
    rps: n / result.duration,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    firstFailure,
    window: { startUs, endUs },
    cpuUs: cpuPerRequestUs(cpuBefore, cpuAfter, n),
    ...(waits ? { waits } : {}),
    latencies: sorted,
  };
}

/**
 * One request first, to say clearly what is wrong when an endpoint does not answer 2xx, and what it
 * answered (how many items), so the service's and the baseline's answers can be compared.
 */
async function smoke(port: number, ep: Endpoint, seed: number): Promise<{ failure: string | null; answer: string | null }> {
  const b = ep.build(seeded(seed ^ 0x5eed), 0);
  try {
    const r = await request(port, b);
    if (r.status < 200 || r.status > 299) return { failure: `${r.status} ${r.body.slice(0, 300)}`, answer: null };
    const body = JSON.parse(r.body) as unknown;
    if (Array.isArray(body)) return { failure: null, answer: `${body.length} items` };
    const env = body as { count?: number; data?: unknown[] };
    return { failure: null, answer: Array.isArray(env.data) ? `${env.data.length} rows of ${env.count}` : 'an object' };
  } catch (e) {
    return { failure: String(e), answer: null };
  }
}

// ---------------------------------------------------------------------------------------------- a store

interface EndpointResult {
  name: string;
  kind: 'read' | 'write';
  service: Measured | null;
  baseline: Measured | null;
  smokeFailures: { service: string | null; baseline: string | null };
  /** What the first request answered (a read must answer the same on both). */
  firstAnswer: { service: string | null; baseline: string | null };
  ratio: { rps: number; p99: number; cpu: number | null } | null;
  /** service/baseline req/s of each round (its two windows ran one after the other), when there were several. */
  roundRatios?: number[];
  target: { rps: number; p99: number | null; cpu: number | null; met: boolean | null };
  profile?: { service?: ProfileSummary; baseline?: ProfileSummary };
}

interface StoreResult {
  store: StoreKind;
  description: string;
  seed: BenchData['counts'] & { seconds: BenchData['seconds']; historyDeepOffset: number | null };
  loadAverage: { before: number[]; after: number[] };
  /** VmHWM of each server process at the end of its phase. */
  serviceRssMb: { peak: number | null; byProcess: { phase: string; mb: number | null }[] };
  baselineRssMb: { peak: number | null; byProcess: { phase: string; mb: number | null }[] };
  endpoints: EndpointResult[];
  profileNote?: string;
}

// Issue 31's targets: reads ≥ 90% of the baseline's req/s with p99 ≤ 1.3×; writes ≥ 80% with p99 ≤ 1.5×
// and CPU per request (server + database) ≤ 1.25× the baseline's.
const READ_RPS = 0.9;
const READ_P99 = 1.3;
const WRITE_RPS = 0.8;
const WRITE_P99 = 1.5;
const WRITE_CPU = 1.25;
/** Writes measured a second time with every request to one organization (--orgs 1 in the same run). */
const ONE_ORG_WRITES = ['POST /grievance', 'PUT /grievance/{ticket_id}', 'POST /nominee', 'POST /grievance (Idempotency-Key)'];
const ONE_ORG = ', one organization';
const RSS_LIMIT_MB = 300;

/** Lists the PostgreSQL backends connected to one database (through a connection to another one). */
async function backendLister(adminUrl: string, database: string): Promise<{ list(): Promise<number[]>; waits(): Promise<string[]>; close(): Promise<void> }> {
  const { default: postgres } = await import('postgres');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'assent-bench-probe' } });
  // A connection of its own for the sampler, so it never queues behind the CPU readings.
  const sampler = postgres(adminUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'assent-bench-probe' } });
  return {
    list: async () => (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${database}`).map((r) => r.pid),
    waits: async () =>
      (
        await sampler<{ w: string }[]>`select coalesce(wait_event_type || ':' || wait_event, 'CPU') as w from pg_stat_activity
                                        where datname = ${database} and state = 'active' and pid <> pg_backend_pid()`
      ).map((r) => r.w),
    close: async () => {
      await Promise.all([admin.end({ timeout: 5 }), sampler.end({ timeout: 5 })]);
    },
  };
}

/**
 * Seals the audit entries the baseline wrote, unmeasured, before the service writes again. The baseline
 * runs the services' SQL without a sequencer, so its entries stay unsealed; the service's sequencer
 * would otherwise seal all of them inside the service's next load windows (seen 2026-11-29: the
 * service's second write round at 40–60% of its first, its database CPU per request tripled). So each
 * server's windows pay for their own writes only: the service's include sealing its own entries (within
 * a second of their commit), the baseline's have nothing like it.
 */
async function sealBacklog(target: StoreTarget): Promise<{ sealed: number; seconds: number }> {
  const started = Date.now();
  const config = loadConfig({ DATA_DIR: target.dataDir ?? undefined, DATABASE_URL: target.databaseUrl ?? undefined, LOG_LEVEL: 'silent' });
  const store = await openStore(config, 'cli');
  try {
    const sequencer = createSequencer({ db: store.db, clock: systemClock, log: { error: (o, m) => log(`sealing the baseline's entries: ${m} ${JSON.stringify(o)}`) } });
    const r = await sequencer.runOnce();
    await sequencer.stop();
    return { sealed: r.sealed, seconds: (Date.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}

/**
 * Delivers the webhook events the baseline queued, unmeasured, before the service writes again. The
 * baseline runs the services' SQL (which queues a delivery per subscribed endpoint) but has no worker;
 * the service's worker would otherwise send all of them inside the service's next load windows (seen
 * 2026-11-29 14:48: 81,021 deliveries after the first service round, 281,208 after the second, whose own
 * load queues about 45,000; second rounds at 25–50%). So each server's windows pay for their own writes
 * only: the service's include delivering its own events, as `assent serve` does.
 */
async function deliverBacklog(target: StoreTarget): Promise<{ delivered: number; seconds: number }> {
  const started = Date.now();
  const config = loadConfig({ DATA_DIR: target.dataDir ?? undefined, DATABASE_URL: target.databaseUrl ?? undefined, LOG_LEVEL: 'silent' });
  const store = await openStore(config, 'cli');
  let delivered = 0;
  try {
    const quiet = { info: () => {}, warn: () => {}, error: (o: unknown, m?: string) => log(`delivering the baseline's webhook events: ${m ?? ''} ${JSON.stringify(o)}`) };
    const worker = createWebhookWorker({
      db: store.db,
      clock: systemClock,
      secrets: secretBox(BENCH_SECRET_KEY),
      policy: { allowPrivate: true, ownHosts: ['localhost'] },
      log: quiet as never,
      maxInFlight: 384,
      maxPerEndpoint: 128,
    });
    for (;;) {
      const r = await worker.runOnce();
      delivered += r.delivered;
      if (r.delivered + r.retrying + r.failed === 0) break;
      if (r.delivered === 0) throw new Error(`delivering the baseline's webhook events: ${r.retrying} retrying, ${r.failed} failed, none delivered`);
    }
    await worker.stop();
    return { delivered, seconds: (Date.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}

/** What the baseline's writes left for a service to do (sealing, deliveries), done unmeasured before a service writes. */
async function settleBaselineWork(target: StoreTarget): Promise<void> {
  const b = await sealBacklog(target);
  if (b.sealed > 0) log(`${target.kind}: sealed the ${int(b.sealed)} audit entries written since the service last ran (${f1(b.seconds)} s, unmeasured)`);
  const d = await deliverBacklog(target);
  if (d.delivered > 0) log(`${target.kind}: delivered the ${int(d.delivered)} webhook events queued since the service last ran (${f1(d.seconds)} s, unmeasured)`);
}

async function benchStore(kind: StoreKind, pinning: Pinning, workDir: string): Promise<StoreResult> {
  const before = os.loadavg();
  const scratch = kind === 'postgres' ? await scratchDatabase(benchDatabaseUrl!, 'assent_bench') : null;
  const target: StoreTarget =
    kind === 'pglite'
      ? { kind, dataDir: mkdtempSync(join(os.tmpdir(), 'assent-bench-')), databaseUrl: null }
      : { kind, dataDir: null, databaseUrl: scratch!.url };
  if (scratch) log(`postgres: scratch database ${new URL(scratch.url).pathname.slice(1)}`);
  // The database's own CPU per request, where PostgreSQL runs on this machine (it shares the two CPUs).
  const databasePids = scratch ? await backendLister(benchDatabaseUrl!, new URL(scratch.url).pathname.slice(1)) : null;
  const hookReceiver = await startHookReceiver();
  try {
    log(`${kind}: seeding ${opts.orgs} organizations, ${opts.grievances} grievances, ${opts.nominees} nominees, ${opts.links} consent links`);
    // On the embedded store the server holds the data directory: seed first, through the same store, then close it.
    const config = loadConfig({ DATA_DIR: target.dataDir ?? undefined, DATABASE_URL: target.databaseUrl ?? undefined, LOG_LEVEL: 'silent' });
    const store = await openStore(config, 'cli');
    let data: BenchData;
    let hooks: Awaited<ReturnType<typeof seedHookOrg>>;
    let fulfilmentOrg: Awaited<ReturnType<typeof seedFulfilmentOrg>>;
    try {
      data = await seedBench(store.db, { ...opts, log: (l) => log(`${kind}:   ${l}`) });
      hooks = await seedHookOrg(store.db, hookReceiver.url);
      // A backlog of access requests, 20 tasks each, for the claims to take (one task per claim).
      const backlog = Math.max(50, Math.round(opts.grievances / 100));
      log(`${kind}:   fulfilment: 20 systems, ${backlog} requests (${backlog * 20} tasks to claim)`);
      fulfilmentOrg = await seedFulfilmentOrg(store.db, backlog);
      if (kind === 'postgres') {
        // Autovacuum (on, as in production) would otherwise work through the freshly seeded rows inside
        // the first load windows (seen 2026-11-29 16:21: `Timeout:VacuumDelay` in 16–47% of the database
        // samples of the service's first windows). A store in use has been vacuumed: so is this one, unmeasured.
        const started = Date.now();
        await store.db.system.exec('vacuum (analyze)');
        log(`${kind}:   vacuum (analyze) after seeding (${f1((Date.now() - started) / 1000)} s)`);
      }
    } finally {
      await store.close();
    }
    const only = args.only?.toLowerCase().split(',').filter((t) => t !== '');
    // The same writes with every request to the first organization (a bank: one tenant, all the load),
    // beside the spread ones, so one run reports both.
    const oneOrg = data.orgs.length > 1 ? { ...data, orgs: [data.orgs[0]!] } : null;
    const oneOrgEndpoints: Endpoint[] = oneOrg
      ? [...endpoints(oneOrg), ...integrationEndpoints(oneOrg.orgs, hooks, hookReceiver)]
          .filter((ep) => ONE_ORG_WRITES.includes(ep.name))
          .map((ep) => ({ ...ep, name: ep.name + ONE_ORG, after: undefined }))
      : [];
    const eps: Endpoint[] = [...endpoints(data), ...oneOrgEndpoints, ...integrationEndpoints(data.orgs, hooks, hookReceiver, (l) => log(`${kind}: ${l}`)), ...fulfilmentEndpoints(fulfilmentOrg)].filter(
      (ep) => !only || only.some((t) => ep.name.toLowerCase().includes(t)),
    );
    if (eps.length === 0) throw new Error(`--only ${args.only}: no endpoint matches`);
    const results: EndpointResult[] = eps.map((ep) => ({
      name: ep.name,
      kind: ep.kind,
      service: null,
      baseline: null,
      smokeFailures: { service: null, baseline: null },
      firstAnswer: { service: null, baseline: null },
      ratio: null,
      target: { rps: ep.kind === 'read' ? READ_RPS : WRITE_RPS, p99: ep.kind === 'read' ? READ_P99 : WRITE_P99, cpu: ep.kind === 'read' ? null : WRITE_CPU, met: null },
    }));
    const rss: { server: ServerKind; phase: string; mb: number | null }[] = [];
    const probeOf = (s: RunningServer): CpuProbe => ({ serverPid: s.pid, databasePids: databasePids?.list, databaseWaits: databasePids?.waits });

    // Reads, then writes (which add rows: the baseline's reads must see the data the service's saw); in
    // each, one server at a time, in rounds that alternate which goes first.
    const phases: { name: string; kinds: Endpoint['kind'][] }[] = [
      { name: 'reads', kinds: ['read'] },
      { name: 'writes', kinds: ['write'] },
    ];
    for (const phase of phases) {
      if (phase.name === 'writes') {
        // The first process to write into a freshly seeded store pays a cost that later processes do not
        // (most likely new WAL segment files, which they recycle; not profiled): measured 2026-11-23 on PGlite with
        // 1M grievances, POST /grievance's baseline answered 240 req/s when it wrote first and 359
        // when it wrote second. So a throwaway process writes first, unmeasured, and both measured
        // servers find the store as it is after some use.
        log(`${kind}: settling the store for the writes: the ${SERVER_ORDER[0]} writes for ${opts.duration} s per endpoint, unmeasured`);
        const s = await startServer(SERVER_ORDER[0], target, pinning, workDir);
        try {
          for (const [index, ep] of eps.entries()) {
            if (ep.kind !== 'write') continue;
            await ep.prepare?.(s.port, SERVER_ORDER[0]);
            await drive(s.port, ep, opts.duration, opts.connections, 3000 + index);
            await ep.after?.(s.port, SERVER_ORDER[0]);
          }
        } finally {
          await stopServer(s);
        }
      }
      // Rounds alternate which server goes first (ABBA), each server a fresh process per round, so what
      // drifts during a phase (the machine's other load, the store growing under the writes, caches)
      // falls on both alike.
      const windows = eps.map(() => ({ service: [] as Window[], baseline: [] as Window[] }));
      for (let round = 0; round < opts.rounds; round++) {
        for (const server of orderOfRound(round)) {
          const roundNote = opts.rounds > 1 ? ` (round ${round + 1} of ${opts.rounds})` : '';
          if (phase.name === 'writes' && server === 'service') {
            await settleBaselineWork(target);
          }
          log(`${kind}: starting the ${server} for the ${phase.name}${roundNote}`);
          const s = await startServer(server, target, pinning, workDir);
          try {
            for (const [index, ep] of eps.entries()) {
              if (!phase.kinds.includes(ep.kind)) continue;
              const r = results[index]!;
              await ep.prepare?.(s.port, server);
              const first = await smoke(s.port, ep, index);
              if (round === 0) r.firstAnswer[server] = first.answer;
              r.smokeFailures[server] ??= first.failure;
              if (first.failure) log(`${kind}: ${server} ${ep.name}: first request failed: ${first.failure}`);
              // The same requests for both servers within a round, different ones in the next.
              const seed = index + 100 * round;
              if (opts.warmup > 0) await drive(s.port, ep, opts.warmup, opts.connections, 1000 + seed);
              let m = await drive(s.port, ep, opts.duration, opts.connections, seed, probeOf(s));
              if (m.requests === 0) {
                // Not one answer inside the window (a stalled server, a busy machine): measure once more, and say so.
                log(`${kind}: ${server} ${ep.name}: no response within ${opts.duration} s; measuring again`);
                m = { ...(await drive(s.port, ep, opts.duration, opts.connections, seed, probeOf(s))), retried: true };
              }
              windows[index]![server].push(m);
              await ep.after?.(s.port, server);
              log(
                `${kind}: ${server.padEnd(8)} ${ep.name.padEnd(32)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms` +
                  `  CPU/req ${f0(m.cpuUs.server)} µs` +
                  (m.cpuUs.database !== null ? ` + database ${f0(m.cpuUs.database)} µs` : '') +
                  (m.non2xx + m.errors > 0 ? `  non-2xx ${m.non2xx} errors ${m.errors} (${m.firstFailure ?? ''})` : ''),
              );
            }
            rss.push({ server, phase: phase.name, mb: peakRssMb(s.pid) });
          } finally {
            await stopServer(s);
          }
        }
      }
      for (const [index, w] of windows.entries()) {
        for (const server of ['service', 'baseline'] as const) if (w[server].length > 0) results[index]![server] = combine(w[server]);
      }
    }
    for (const r of results) {
      // A server with no answer at all has no ratio (the failure is reported instead).
      if (!r.service || !r.baseline || r.service.requests === 0 || r.baseline.requests === 0) continue;
      // Server and database (PGlite's database is the server process itself).
      const cpu = (m: Measured) => (m.cpuUs?.server == null ? null : m.cpuUs.server + (m.cpuUs.database ?? 0));
      const [sc, bc] = [cpu(r.service), cpu(r.baseline)];
      r.ratio = { rps: r.service.rps / r.baseline.rps, p99: r.service.p99 / r.baseline.p99, cpu: sc !== null && bc ? sc / bc : null };
      const [sr, br] = [r.service.rounds, r.baseline.rounds];
      if (sr && br && sr.length === br.length) r.roundRatios = sr.map((x, i) => (br[i]!.rps > 0 ? x.rps / br[i]!.rps : NaN));
      r.target.met =
        r.ratio.rps >= r.target.rps && (r.target.p99 === null || r.ratio.p99 <= r.target.p99) && (r.target.cpu === null || r.ratio.cpu === null || r.ratio.cpu <= r.target.cpu);
    }

    let profileNote: string | undefined;
    if (args.profile) profileNote = await profileServers(target, eps, results, pinning, workDir);

    const peak = (server: ServerKind) => {
      const mbs = rss.filter((r) => r.server === server && r.mb !== null).map((r) => r.mb!);
      return mbs.length > 0 ? Math.max(...mbs) : null;
    };
    return {
      store: kind,
      description:
        kind === 'pglite'
          ? 'embedded PGlite (DATA_DIR on local disk), row-level security on'
          : `PostgreSQL ${await serverVersion(target.databaseUrl!)} over TCP on 127.0.0.1, pool of 10, row-level security on`,
      seed: {
        ...data.counts,
        seconds: data.seconds,
        historyDeepOffset: data.consent ? Math.min(10_000, Math.floor(data.consent.links / 2)) : null,
      },
      loadAverage: { before, after: os.loadavg() },
      serviceRssMb: { peak: peak('service'), byProcess: rss.filter((r) => r.server === 'service') },
      baselineRssMb: { peak: peak('baseline'), byProcess: rss.filter((r) => r.server === 'baseline') },
      endpoints: results,
      profileNote,
    };
  } finally {
    await databasePids?.close();
    await hookReceiver.close();
    if (args['keep-data']) log(`${kind}: data kept in ${target.dataDir ?? new URL(target.databaseUrl!).pathname.slice(1)}`);
    else if (target.dataDir) rmSync(target.dataDir, { recursive: true, force: true });
    else await scratch?.drop();
  }
}

async function serverVersion(url: string): Promise<string> {
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
  const { openDatabase } = await import('../src/platform/db/open.js');
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    const rows = await db.system.query<{ v: string }>("select current_setting('server_version') as v");
    return rows[0]!.v.split(' ')[0]!;
  } finally {
    await db.close();
  }
}

/** One process per endpoint and server under `node --cpu-prof`, loaded as in the measured run; summarised per endpoint. */
async function profileServers(target: StoreTarget, eps: Endpoint[], results: EndpointResult[], pinning: Pinning, workDir: string): Promise<string> {
  const keepDir = join(RESULTS_DIR, 'profiles');
  for (const [index, ep] of eps.entries()) {
    for (const server of ['service', 'baseline'] as const) {
      const dir = mkdtempSync(join(workDir, 'prof-'));
      log(`${target.kind}: profiling the ${server}: ${ep.name}`);
      if (ep.kind === 'write' && server === 'service') await settleBaselineWork(target);
      const s = await startServer(server, target, pinning, workDir, dir);
      let m: Measured;
      try {
        await ep.prepare?.(s.port, server);
        if (opts.warmup > 0) await drive(s.port, ep, opts.warmup, opts.connections, 2000 + index);
        m = await drive(s.port, ep, opts.duration, opts.connections, 3000 + index);
        await ep.after?.(s.port, server);
      } finally {
        await stopServer(s);
      }
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) {
        log(`${target.kind}: no profile written for the ${server}: ${ep.name}`);
        continue;
      }
      const r = results[index]!;
      r.profile = { ...r.profile, [server]: summariseProfile(join(dir, file), m.window, m.requests) };
      mkdirSync(keepDir, { recursive: true });
      const slug = ep.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
      writeFileSync(join(keepDir, `${target.kind}-${server}-${slug}.cpuprofile`), readFileSync(join(dir, file)));
    }
  }
  return (
    `node --cpu-prof, one process per endpoint and server, ${opts.duration} s at ${opts.connections} connections after a ${opts.warmup} s warm-up, ` +
    `samples inside the load window only; profiles in ${relative(ROOT, keepDir)}/ (open in Chrome DevTools)`
  );
}

// ---------------------------------------------------------------------------------------------- report

const f0 = (v: number | undefined | null) => (v === undefined || v === null || Number.isNaN(v) ? '-' : v.toFixed(0));
const f1 = (v: number | undefined | null) => (v === undefined || v === null || Number.isNaN(v) ? '-' : v.toFixed(1));
const f2 = (v: number | undefined | null) => (v === undefined || v === null || Number.isNaN(v) ? '-' : v.toFixed(2));
const int = (v: number | undefined | null) => (v === undefined || v === null || Number.isNaN(v) ? '-' : Math.round(v).toLocaleString('en-US'));

/** `server + database` CPU µs per request of one measured run (older reports have no CPU figures). */
function cpuCell(m: Measured | null | undefined, withDb: boolean): string {
  const c = m?.cpuUs;
  if (!c) return '-';
  return withDb ? `${f0(c.server)} + ${f0(c.database)}` : f0(c.server);
}

/** In which order the servers ran, in words. */
function orderNote(rounds: number): string {
  if (rounds === 1) return `in each phase the ${SERVER_ORDER[0]} runs first`;
  const order = Array.from({ length: rounds }, (_, r) => orderOfRound(r).join(', ')).join(', ');
  return `${rounds} rounds per endpoint and server, each a fresh process, in the order ${order} (figures over all rounds)`;
}

/** Peak RSS of each phase's processes: `reads 324.9, writes 333.3`. */
function rssByPhase(byProcess: { phase: string; mb: number | null }[]): string {
  const peaks = new Map<string, number | null>();
  for (const p of byProcess) {
    const was = peaks.get(p.phase);
    peaks.set(p.phase, p.mb === null ? (was ?? null) : Math.max(was ?? 0, p.mb));
  }
  return [...peaks].map(([phase, mb]) => `${phase} ${f1(mb)}`).join(', ');
}

function markdown(report: Report): string {
  const out: string[] = [];
  out.push(`# Benchmark ${report.date} (${report.mode})`, '');
  out.push(`Command: \`${report.command}\`${report.service === 'dist' ? '' : ` (service from ${report.service}/)`}  `);
  out.push(`Machine: ${report.machine.cpu}, ${report.machine.cpus} CPUs, ${report.machine.memoryGb} GB, ${report.machine.os}, Node ${report.machine.node}  `);
  out.push(`Pinning: ${report.pinning.pinned ? `server on ${report.pinning.server}, load generator on ${report.pinning.loadGenerator}` : report.pinning.note}  `);
  if (report.nodeFlags) out.push(`Node flags: ${report.nodeFlags.length ? report.nodeFlags.map((f) => `\`${f}\``).join(' ') : 'none'} (npm start's, for both servers)  `);
  out.push(
    `Load: autocannon, ${report.options.connections} connections, ${report.options.duration} s per endpoint after a ${report.options.warmup} s warm-up; ` +
      orderNote(report.options.rounds ?? 1),
    '',
  );
  for (const s of report.stores) {
    out.push(`## ${s.store}: ${s.description}`, '');
    out.push(
      `Data: ${int(s.seed.orgs)} organizations, ${int(s.seed.grievances)} grievances (${int(s.seed.statusChanges)} history entries), ${int(s.seed.nominees)} nominees, ${int(s.seed.links)} consent links in one asset (seeded in ${f1(s.seed.seconds.total)} s).  `,
    );
    out.push(`Load average (1, 5, 15 min) before: ${s.loadAverage.before.map(f2).join(', ')}; after: ${s.loadAverage.after.map(f2).join(', ')}.  `);
    out.push(
      `Peak RSS (VmHWM): service ${f1(s.serviceRssMb.peak)} MB (${rssByPhase(s.serviceRssMb.byProcess)}; target < ${RSS_LIMIT_MB} MB, ` +
        `${s.serviceRssMb.peak !== null && s.serviceRssMb.peak < RSS_LIMIT_MB ? 'met' : '**missed**'}); baseline ${f1(s.baselineRssMb.peak)} MB.`,
      '',
    );
    const withDb = s.endpoints.some((e) => e.service?.cpuUs?.database != null);
    const perRound = s.endpoints.some((e) => e.roundRatios);
    out.push(
      `| endpoint | service req/s | baseline req/s | ratio |${perRound ? ' ratio per round |' : ''} service p50 / p99 ms | baseline p50 / p99 ms | p99 ratio | non-2xx service / baseline | ` +
        `CPU µs/request service / baseline${withDb ? ' (server + database)' : ''} | target | met |`,
    );
    out.push(`|---|---:|---:|---:|${perRound ? '---:|' : ''}---:|---:|---:|---:|---:|---|---|`);
    for (const e of s.endpoints) {
      const target = `≥ ${Math.round(e.target.rps * 100)}%` + (e.target.p99 !== null ? `, p99 ≤ ${e.target.p99}×` : '') + (e.target.cpu !== null ? `, CPU ≤ ${e.target.cpu}×${e.ratio?.cpu != null ? ` (${f2(e.ratio.cpu)}×)` : ''}` : '');
      out.push(
        `| ${e.name} | ${int(e.service?.rps)} | ${int(e.baseline?.rps)} | ${e.ratio ? `${Math.round(e.ratio.rps * 100)}%` : '-'} | ` +
          (perRound ? `${e.roundRatios ? e.roundRatios.map((x) => (Number.isFinite(x) ? `${Math.round(x * 100)}%` : '-')).join(', ') : '-'} | ` : '') +
          `${f2(e.service?.p50)} / ${f2(e.service?.p99)} | ${f2(e.baseline?.p50)} / ${f2(e.baseline?.p99)} | ${e.ratio ? `${f2(e.ratio.p99)}×` : '-'} | ` +
          `${int((e.service?.non2xx ?? 0) + (e.service?.errors ?? 0))} / ${int((e.baseline?.non2xx ?? 0) + (e.baseline?.errors ?? 0))} | ` +
          `${cpuCell(e.service, withDb)} / ${cpuCell(e.baseline, withDb)} | ${target} | ${e.target.met === null ? '-' : e.target.met ? 'yes' : '**no**'} |`,
      );
    }
    if (s.endpoints.some((e) => e.service?.waits)) {
      out.push(
        '',
        "Database waits: what the database's active backends were doing, sampled every 100 ms in the load windows (the three commonest states, as shares of the samples; CPU: running, not waiting).",
        '',
        '| endpoint | service | baseline |',
        '|---|---|---|',
      );
      for (const e of s.endpoints) out.push(`| ${e.name} | ${waitsCell(e.service?.waits)} | ${waitsCell(e.baseline?.waits)} |`);
    }
    out.push(
      '',
      'CPU µs/request: CPU time (user + system, from /proc) used inside the load window divided by the answered requests: the server process' +
        (withDb ? ', and the PostgreSQL backends connected to the benchmark database (they run on the same two CPUs, unpinned).' : '.') +
        ' Less sensitive to other work on the machine than req/s.' +
        (perRound
          ? ' Ratio per round: the service against the baseline in each round, in the order above; their spread is a measure of the noise.'
          : ''),
      '',
    );
    const profiled = s.endpoints.filter((e) => e.profile);
    if (profiled.length > 0) {
      out.push(`### Where the time per request goes (${s.store})`, '', s.profileNote ?? '', '');
      const all = profiled.flatMap((e) => [e.profile!.service, e.profile!.baseline]).filter((p): p is ProfileSummary => p !== undefined);
      const cats = CATEGORIES.filter((c) => all.some((p) => p.byCategory.some((b) => b.category === c)));
      out.push(`| endpoint | server | CPU µs/request | CPU busy | ${cats.join(' | ')} |`, `|---|---|---:|---:|${cats.map(() => '---:').join('|')}|`);
      for (const e of profiled) {
        for (const server of ['service', 'baseline'] as const) {
          const p = e.profile![server];
          if (!p) continue;
          const cells = cats.map((c) => {
            const x = p.byCategory.find((b) => b.category === c);
            return x ? `${int(x.usPerRequest)} (${Math.round(x.share * 100)}%)` : '-';
          });
          out.push(
            `| ${e.name} | ${server} | ${int(p.requests > 0 ? (p.busyMs * 1000) / p.requests : null)} | ${Math.round((p.busyMs / p.windowMs) * 100)}% | ${cells.join(' | ')} |`,
          );
        }
      }
      out.push(
        '',
        "Each cell: CPU microseconds per request spent in that part of the server process, and its share of the process's busy CPU time. " +
          'CPU busy: the share of the load window the process was on CPU (100% = one core saturated). With PostgreSQL the database works in its own processes, not counted here.',
        '',
      );
    }
  }
  out.push('## Failures', '', ...(report.failures.length > 0 ? report.failures.map((f) => `- ${f}`) : ['none']), '');
  return out.join('\n');
}

interface Report {
  date: string;
  mode: 'quick' | 'full';
  /** The build the service ran from. */
  service: string;
  command: string;
  machine: { cpu: string; cpus: number; memoryGb: number; os: string; node: string };
  pinning: Pinning;
  /** Node flags both servers ran with: npm start's (package.json). */
  nodeFlags?: string[];
  options: typeof opts;
  targets: { readRps: number; readP99: number; writeRps: number; writeP99: number; writeCpu: number; rssMb: number; note: string };
  stores: StoreResult[];
  failures: string[];
}

function failuresOf(stores: StoreResult[]): string[] {
  const out: string[] = [];
  for (const s of stores) {
    for (const e of s.endpoints) {
      if (e.kind === 'read' && e.firstAnswer.service !== e.firstAnswer.baseline) {
        out.push(`${s.store} ${e.name}: the service answered ${e.firstAnswer.service ?? '-'}, the baseline ${e.firstAnswer.baseline ?? '-'}`);
      }
      for (const server of ['service', 'baseline'] as const) {
        const m = e[server];
        if (!m || m.requests === 0) out.push(`${s.store} ${server} ${e.name}: did not run`);
        else if (m.non2xx + m.errors + m.timeouts > 0) {
          out.push(`${s.store} ${server} ${e.name}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts; first: ${m.firstFailure ?? e.smokeFailures[server] ?? '-'}`);
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  const pinning = pinCores();
  log(pinning.pinned ? `pinned: servers on ${pinning.server}, load generator on ${pinning.loadGenerator}` : pinning.note);
  log(`node flags for both servers (npm start's): ${NODE_FLAGS.join(' ') || 'none'}`);
  buildDist();
  const workDir = mkdtempSync(join(os.tmpdir(), 'assent-bench-run-'));
  const started = new Date();
  const storeResults: StoreResult[] = [];
  // A store that could not be measured is reported as a failure; the other store's figures are kept.
  const storeErrors: string[] = [];
  try {
    for (const kind of stores) {
      try {
        storeResults.push(await benchStore(kind, pinning, workDir));
      } catch (e) {
        log(`${kind}: FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        storeErrors.push(`${kind}: could not be measured: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  const cpu = os.cpus()[0];
  const report: Report = {
    date: started.toISOString(),
    mode: quick ? 'quick' : 'full',
    service: relative(ROOT, SERVICE_DIST),
    command: `${benchDatabaseUrl ? 'BENCH_DATABASE_URL=… ' : ''}npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}`,
    machine: {
      cpu: cpu?.model.trim() ?? 'unknown CPU',
      cpus: MACHINE_CPUS,
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`,
      node: process.versions.node,
    },
    pinning,
    nodeFlags: NODE_FLAGS,
    options: opts,
    targets: {
      readRps: READ_RPS,
      readP99: READ_P99,
      writeRps: WRITE_RPS,
      writeP99: WRITE_P99,
      writeCpu: WRITE_CPU,
      rssMb: RSS_LIMIT_MB,
      note: 'reported, not asserted (issue 31): reads >= 90% of the baseline req/s with p99 <= 1.3x; writes >= 80% with p99 <= 1.5x and CPU per request (server + database) <= 1.25x; no errors or non-2xx; peak RSS < 300 MB',
    },
    stores: storeResults,
    failures: [...storeErrors, ...failuresOf(storeResults)],
  };
  const md = markdown(report);
  // 2026-11-22T1159: two runs of a day keep both reports.
  const stamp = started.toISOString().slice(0, 16).replace(':', '');
  const jsonPath = args.out ?? join(RESULTS_DIR, quick ? `quick-${stores.join('-')}.json` : `${stamp}-${stores.join('-')}.json`);
  mkdirSync(join(jsonPath, '..'), { recursive: true });
  writeFileSync(jsonPath, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(jsonPath.replace(/\.json$/, '') + '.md', md);
  process.stdout.write(md + '\n');
  log(`report: ${relative(process.cwd(), jsonPath)} (and .md beside it)`);
  const ran = storeErrors.length === 0 && storeResults.every((s) => s.endpoints.every((e) => (e.service?.requests ?? 0) > 0 && (e.baseline?.requests ?? 0) > 0));
  if (!existsSync(jsonPath) || !ran || report.failures.length > 0) {
    log(`FAILED: ${report.failures.length > 0 ? report.failures.join('; ') : 'an endpoint did not run'}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  },
);
