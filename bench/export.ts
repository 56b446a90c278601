// `npm run bench:export -- --store postgres|pglite [--grievances N] [--links N] [--nominees N] [--audit N]`:
// seeds one organization (bench/seed.ts: tickets with their status history, nominees, consent links in
// one asset; plus N audit entries through the chain trigger), then times `assent export` and
// `assent export verify` as real processes under /usr/bin/time -v (wall time, max RSS) and prints the
// figures with the archive's size. PostgreSQL: a scratch database beside BENCH_DATABASE_URL, dropped after.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
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
    store: { type: 'string', default: 'postgres' },
    grievances: { type: 'string', default: '1000000' },
    links: { type: 'string', default: '1000000' },
    nominees: { type: 'string', default: '100000' },
    audit: { type: 'string', default: '0' },
  },
});
const n = (v: string | undefined) => Number(v);
/**
 * Audit entries per transaction: the chain trigger updates the organization's head row once per entry,
 * and many updates of one row in one transaction slow each other down (every version stays until the
 * transaction ends): 50,000 in one transaction did not finish in 8 minutes here.
 */
const AUDIT_BATCH = 1000;
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

/** Runs the command under /usr/bin/time -v: wall seconds and max RSS (MB). */
function timed(argv: string[], env: NodeJS.ProcessEnv): { seconds: number; maxRssMb: number; stdout: string } {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, 'bin/assent.mjs', ...argv], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`assent ${argv.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr)!;
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)!;
  return { seconds: Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]), maxRssMb: Number(rss[1]) / 1024, stdout: r.stdout };
}

async function main() {
  const kind = args.store === 'pglite' ? 'pglite' : 'postgres';
  const base = process.env.BENCH_DATABASE_URL;
  if (kind === 'postgres' && !base) throw new Error('--store postgres needs BENCH_DATABASE_URL (a database to connect to; a scratch one is made beside it)');
  const work = mkdtempSync(join(os.tmpdir(), 'assent-export-bench-'));
  const scratch = kind === 'postgres' ? await scratchDatabase(base!, 'assent_export_bench') : null;
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...(scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: join(work, 'data') }) };
  if (!scratch) delete env.DATABASE_URL;
  try {
    const config = loadConfig({ DATABASE_URL: scratch?.url, DATA_DIR: scratch ? undefined : join(work, 'data'), LOG_LEVEL: 'silent' });
    const store = await openStore(config, 'cli');
    try {
      log(`${kind}: seeding 1 organization: ${args.grievances} grievances, ${args.nominees} nominees, ${args.links} consent links, ${args.audit} audit entries`);
      const data = await seedBench(store.db, { orgs: 1, grievances: n(args.grievances), nominees: n(args.nominees), links: n(args.links), log: (l) => log(`  ${l}`) });
      const orgId = data.orgs[0]!.id;
      if (n(args.audit) > 0) {
        const t0 = performance.now();
        // Through the chain trigger, like every writer; the owner connection with the tenant set (RLS admits the rows).
        for (let done = 0; done < n(args.audit); done += AUDIT_BATCH) {
          await store.db.system.transaction(async (tx) => {
            await tx.query(`select set_config('app.org_id', $1, true)`, [orgId]);
            await tx.query(
              `insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, target_id, request_id, details)
               select $1::uuid, gen_random_uuid(), now(), 'api_key', gen_random_uuid(), 'grievance.status_changed', 'grievance', 'GRV-' || i, 'bench', jsonb_build_object('i', i)
                 from generate_series(1, $2::int) i`,
              [orgId, Math.min(AUDIT_BATCH, n(args.audit) - done)],
            );
          });
        }
        log(`  ${args.audit} audit entries (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
      }
    } finally {
      await store.close();
    }
    execFileSync(process.execPath, ['bin/assent.mjs', '--version'], { cwd: ROOT, env, stdio: 'ignore' }); // builds dist/ first, outside the timing
    const out = join(work, 'bench-000.tar.gz');
    log(`${kind}: assent export bench-000 --out ${out}`);
    const exported = timed(['export', 'bench-000', '--out', out, '--json'], env);
    const rows = (JSON.parse(exported.stdout) as { rows: Record<string, number> }).rows;
    const bytes = statSync(out).size;
    log(`  ${exported.seconds.toFixed(1)} s, max RSS ${exported.maxRssMb.toFixed(0)} MB, ${(bytes / 1024 / 1024).toFixed(1)} MiB: ${JSON.stringify(rows)}`);
    log(`assent export verify ${out}`);
    const verified = timed(['export', 'verify', out], { PATH: process.env.PATH });
    log(`  ${verified.seconds.toFixed(1)} s, max RSS ${verified.maxRssMb.toFixed(0)} MB`);
    process.stdout.write(JSON.stringify({ store: kind, rows, archive_bytes: bytes, export: { seconds: exported.seconds, maxRssMb: exported.maxRssMb }, verify: { seconds: verified.seconds, maxRssMb: verified.maxRssMb } }, null, 2) + '\n');
  } finally {
    await scratch?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
