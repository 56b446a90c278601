// `npm run bench:backup -- [--grievances N] [--links N] [--nominees N] [--orgs N] [--to-postgres]`:
// seeds an embedded store (bench/seed.ts: tickets with their status history, nominees, consent links in
// one asset), then measures, as real processes under /usr/bin/time -v (wall time, max RSS):
// - `assent backup` handed to a running server (`node --v8-pool-size=1 bin/assent.mjs serve`, as npm
//   start runs it): the CLI's figures, and the server's RSS sampled every 50 ms from /proc (before the
//   backup, and the most during it) and its lifetime peak (VmHWM) before and after;
// - `assent backup` with no server (the CLI opens the store itself);
// - `assent restore` into an empty directory (unpack, migrate, verify every audit chain);
// - with --to-postgres (and BENCH_DATABASE_URL): `assent store copy --to` a scratch database beside it.
// Prints each figure with the load average at the time (the machine may be shared) and a JSON summary.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/platform/db/store.js';
import { seedBench } from './seed.js';
import { scratchDatabase } from './scratch-db.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    orgs: { type: 'string', default: '10' },
    grievances: { type: 'string', default: '100000' },
    links: { type: 'string', default: '100000' },
    nominees: { type: 'string', default: '10000' },
    'to-postgres': { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
});
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(', ');

interface Timed {
  seconds: number;
  maxRssMb: number;
  stdout: string;
}

function parseTime(stderr: string): { seconds: number; maxRssMb: number } {
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(stderr);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  if (!wall || !rss) throw new Error(`no /usr/bin/time -v figures in:\n${stderr}`);
  return { seconds: Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]), maxRssMb: Number(rss[1]) / 1024 };
}

/** Runs `assent ARGS` under /usr/bin/time -v: wall seconds and max RSS (MB). */
function timed(argv: string[], env: NodeJS.ProcessEnv): Timed {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, 'bin/assent.mjs', ...argv], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`assent ${argv.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  return { ...parseTime(r.stderr), stdout: r.stdout };
}

function status(pid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function main() {
  const base = process.env.BENCH_DATABASE_URL;
  if (args['to-postgres'] && !base) throw new Error('--to-postgres needs BENCH_DATABASE_URL (a database to connect to; a scratch one is made beside it)');
  const work = args.keep ?? mkdtempSync(join(os.tmpdir(), 'assent-backup-bench-'));
  const dataDir = join(work, 'data');
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: dataDir, ASSENT_SECRET_KEY: 'backup-bench-secret-of-at-least-32-characters' };
  delete env.DATABASE_URL;
  const figures: Record<string, unknown> = { load_before: load() };
  try {
    let seeded: Record<string, number> = {};
    let seedSeconds = 0;
    let rows = 0;
    let databaseBytes = 0;
    const store = await openStore(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), 'cli');
    try {
      const [orgs] = await store.db.system.query<{ n: number }>('select count(*)::int as n from organizations');
      if (orgs!.n > 0) {
        log(`reusing the seeded store in ${dataDir}`);
      } else {
        log(`seeding ${args.orgs} organizations: ${args.grievances} grievances, ${args.nominees} nominees, ${args.links} consent links (load ${load()})`);
        const data = await seedBench(store.db, { orgs: Number(args.orgs), grievances: Number(args.grievances), nominees: Number(args.nominees), links: Number(args.links), log: (l) => log(`  ${l}`) });
        seeded = data.counts;
        seedSeconds = data.seconds.total;
      }
      // Every row of every table, counted (the owner sees every organization's rows on the embedded store).
      const tables = await store.db.system.query<{ name: string }>("select tablename as name from pg_tables where schemaname = current_schema()");
      for (const t of tables) {
        const [c] = await store.db.system.query<{ n: number }>(`select count(*)::int as n from "${t.name}"`);
        rows += c!.n;
      }
      const [size] = await store.db.system.query<{ bytes: string }>('select pg_database_size(current_database())::text as bytes');
      databaseBytes = Number(size!.bytes);
    } finally {
      await store.close();
    }
    figures.store = { seeded, seed_seconds: seedSeconds, rows, database_bytes: databaseBytes, data_dir_bytes: Number(execFileSync('du', ['-sb', dataDir], { encoding: 'utf8' }).split('\t')[0]) };
    log(`store: ${JSON.stringify(figures.store)}`);
    execFileSync(process.execPath, ['bin/assent.mjs', '--version'], { cwd: ROOT, env, stdio: 'ignore' }); // builds dist/ first, outside the timing

    // The server, as npm start runs it, under /usr/bin/time -v for its lifetime peak.
    const port = await freePort();
    const server = spawn('/usr/bin/time', ['-v', process.execPath, '--v8-pool-size=1', 'bin/assent.mjs', 'serve'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), HOST: '127.0.0.1', MESSAGE_PROVIDER: 'log' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let serverStderr = '';
    server.stderr!.on('data', (d: Buffer) => (serverStderr += d));
    const serverExit = new Promise<number | null>((resolve) => server.on('exit', resolve));
    const deadline = Date.now() + 180_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.status, () => 0);
      if (ready === 200) break;
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the server did not become ready:\n${serverStderr}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const nodePid = Number(execFileSync('pgrep', ['-P', String(server.pid)], { encoding: 'utf8' }).trim().split('\n')[0]);
    await new Promise((r) => setTimeout(r, 2000));
    const idle = status(nodePid)!;
    let peakDuring = idle.rssMb;
    const sampler = setInterval(() => {
      const s = status(nodePid);
      if (s) peakDuring = Math.max(peakDuring, s.rssMb);
    }, 50);
    const stamp = Date.now();
    const out = join(work, `through-server-${stamp}.backup`);
    log(`assent backup --out ${out} (handed to the running server; load ${load()})`);
    const loadAtBackup = load();
    // Asynchronous, so the sampler runs while it does.
    const started = Date.now();
    const cli = await new Promise<Timed & { error?: string }>((resolve) => {
      const c = spawn('/usr/bin/time', ['-v', process.execPath, 'bin/assent.mjs', 'backup', '--out', out, '--json'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let so = '';
      let se = '';
      c.stdout!.on('data', (d: Buffer) => (so += d));
      c.stderr!.on('data', (d: Buffer) => (se += d));
      c.on('exit', (code) => resolve({ ...parseTime(se), stdout: so, ...(code === 0 ? {} : { error: se.split('\n').find((l) => l.startsWith('assent:')) ?? `exit ${code}` }) }));
    });
    if (cli.error) {
      // The CLI gave up; the server may still be writing the file: wait for it (at most 15 minutes).
      log(`  the CLI failed after ${cli.seconds} s: ${cli.error}; waiting for the server to finish the file`);
      const until = Date.now() + 15 * 60_000;
      while (Date.now() < until) {
        try {
          statSync(out);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
    const serverSeconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    const after = status(nodePid)!;
    // The server itself: /usr/bin/time does not pass signals on.
    process.kill(nodePid, 'SIGTERM');
    await serverExit;
    const serverLife = parseTime(serverStderr);
    figures.backup_through_server = {
      load: loadAtBackup,
      cli_seconds: cli.seconds,
      cli_error: cli.error ?? null,
      file_written_after_seconds: serverSeconds,
      cli_max_rss_mb: cli.maxRssMb,
      bytes: statSync(out).size,
      server_rss_idle_mb: idle.rssMb,
      server_rss_peak_during_mb: peakDuring,
      server_vmhwm_before_mb: idle.hwmMb,
      server_vmhwm_after_mb: after.hwmMb,
      server_lifetime_max_rss_mb: serverLife.maxRssMb,
    };
    log(`  ${JSON.stringify(figures.backup_through_server)}`);

    const offline = join(work, `offline-${stamp}.backup`);
    const loadOffline = load();
    log(`assent backup --out ${offline} (no server: the CLI opens the store; load ${loadOffline})`);
    const off = timed(['backup', '--out', offline, '--json'], env);
    figures.backup_no_server = { load: loadOffline, seconds: off.seconds, max_rss_mb: off.maxRssMb, bytes: statSync(offline).size };
    log(`  ${JSON.stringify(figures.backup_no_server)}`);

    const loadRestore = load();
    log(`DATA_DIR=${join(work, 'restored')} assent restore ${out} (load ${loadRestore})`);
    const restore = timed(['restore', out, '--json'], { ...env, DATA_DIR: join(work, 'restored') });
    const restored = JSON.parse(restore.stdout) as { organizations: { ok: boolean; entries: number }[] };
    figures.restore = { load: loadRestore, seconds: restore.seconds, max_rss_mb: restore.maxRssMb, organizations: restored.organizations.length, chains_ok: restored.organizations.every((o) => o.ok) };
    log(`  ${JSON.stringify(figures.restore)}`);
    rmSync(join(work, 'restored'), { recursive: true, force: true });
    rmSync(out, { force: true });
    rmSync(offline, { force: true });

    if (args['to-postgres']) {
      const scratch = await scratchDatabase(base!, 'assent_copy_bench');
      try {
        const loadCopy = load();
        log(`assent store copy --to ${scratch.url} (load ${loadCopy})`);
        const copy = timed(['store', 'copy', '--to', scratch.url, '--json'], env);
        const report = JSON.parse(copy.stdout) as { tables: { rows: number }[] };
        figures.store_copy = { load: loadCopy, seconds: copy.seconds, max_rss_mb: copy.maxRssMb, rows: report.tables.reduce((n, t) => n + t.rows, 0), tables: report.tables.length };
        log(`  ${JSON.stringify(figures.store_copy)}`);
      } finally {
        await scratch.drop();
      }
    }
    figures.load_after = load();
    process.stdout.write(JSON.stringify(figures, null, 2) + '\n');
  } finally {
    if (!args.keep) rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
