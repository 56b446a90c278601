// `npm run bench:export -- --store postgres|pglite [--grievances N] [--links N] [--nominees N] [--audit N]`:
// seeds one organization (bench/seed.ts: tickets with their status history, nominees, consent links in
// one asset; plus N audit entries through the chain trigger), and a consent record for every completed
// consent link, written as before receipts existed (receipt null: bench/seed.ts's own records are
// signed as they are made, through the consent service); then times, as real processes under
// /usr/bin/time -v (wall time, max RSS), `assent receipts backfill` (which signs those records, so every
// record of the export carries a receipt), `assent export` and `assent export verify`, and prints the
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
import { BENCH_SECRET_KEY } from './secret.js';
import type { Database } from '../src/platform/db/types.js';

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

/**
 * A consent record for every completed consent link of the organization (the record the link's page
 * wrote: its action, the point's purposes granted accordingly, channel link, at completion), without a
 * receipt, as records written before migration 0018 are. Returns how many.
 */
async function seedUnsignedRecords(db: Database, orgId: string): Promise<number> {
  return db.system.transaction(async (tx) => {
    await tx.query(`select set_config('app.org_id', $1, true)`, [orgId]);
    await tx.query(
      `insert into data_principals (org_id, id, dp_id, created_at)
       select org_id, gen_random_uuid(), dp_id, min(completed_at) from consent_requests where org_id = $1::uuid and completed_at is not null group by org_id, dp_id
       on conflict (org_id, dp_id) do nothing`,
      [orgId],
    );
    const [row] = await tx.query<{ n: number }>(
      `with added as (
         insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, channel, created_at, receipt)
         select r.org_id, gen_random_uuid(), r.collection_point_id, d.id, r.dp_id, r.consent_action, p.purposes, cp.notice_version, r.id, r.current_event_id, 'link', r.completed_at, null
           from consent_requests r
           join data_principals d on d.org_id = r.org_id and d.dp_id = r.dp_id
           join collection_points cp on cp.org_id = r.org_id and cp.id = r.collection_point_id
           cross join lateral (
             select jsonb_agg(jsonb_build_object('id', e.value ->> 'id', 'granted',
                      case r.consent_action when 'approved' then true when 'declined' then false else e.n < 3 end) order by e.n) as purposes
               from jsonb_array_elements(cp.purposes) with ordinality as e (value, n)
           ) p
          where r.org_id = $1::uuid and r.completed_at is not null
         returning 1
       ) select count(*)::int as n from added`,
      [orgId],
    );
    return row!.n;
  });
}

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
  // The seed's signing keys are sealed with BENCH_SECRET_KEY: the backfill opens them with it.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'silent',
    ASSENT_SECRET_KEY: BENCH_SECRET_KEY,
    ...(scratch ? { DATABASE_URL: scratch.url } : { DATA_DIR: join(work, 'data') }),
  };
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
      const t1 = performance.now();
      const unsigned = await seedUnsignedRecords(store.db, orgId);
      await store.db.system.query('vacuum analyze consent_records');
      log(`  ${unsigned} consent records of completed links, without receipts (${((performance.now() - t1) / 1000).toFixed(1)} s)`);
    } finally {
      await store.close();
    }
    execFileSync(process.execPath, ['bin/assent.mjs', '--version'], { cwd: ROOT, env, stdio: 'ignore' }); // builds dist/ first, outside the timing
    log(`${kind}: assent receipts backfill bench-000`);
    const backfilled = timed(['receipts', 'backfill', 'bench-000', '--json'], env);
    const signed = (JSON.parse(backfilled.stdout) as { signed: number }).signed;
    log(`  ${signed} receipts signed, ${backfilled.seconds.toFixed(1)} s, max RSS ${backfilled.maxRssMb.toFixed(0)} MB`);
    const out = join(work, 'bench-000.tar.gz');
    log(`${kind}: assent export bench-000 --out ${out}`);
    const exported = timed(['export', 'bench-000', '--out', out, '--json'], env);
    const rows = (JSON.parse(exported.stdout) as { rows: Record<string, number> }).rows;
    const bytes = statSync(out).size;
    log(`  ${exported.seconds.toFixed(1)} s, max RSS ${exported.maxRssMb.toFixed(0)} MB, ${(bytes / 1024 / 1024).toFixed(1)} MiB: ${JSON.stringify(rows)}`);
    log(`assent export verify ${out}`);
    const verified = timed(['export', 'verify', out, '--json'], { PATH: process.env.PATH });
    log(`  ${verified.seconds.toFixed(1)} s, max RSS ${verified.maxRssMb.toFixed(0)} MB`);
    const receipts = (JSON.parse(verified.stdout) as { receipts: unknown }).receipts;
    log(`  receipts: ${JSON.stringify(receipts)}`);
    process.stdout.write(JSON.stringify({ store: kind, rows, archive_bytes: bytes, receipts, backfill: { signed, seconds: backfilled.seconds, maxRssMb: backfilled.maxRssMb }, export: { seconds: exported.seconds, maxRssMb: exported.maxRssMb }, verify: { seconds: verified.seconds, maxRssMb: verified.maxRssMb } }, null, 2) + '\n');
  } finally {
    await scratch?.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
