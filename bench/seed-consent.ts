// Fills one asset with realistic consent-link data, fast: `npm run seed:consent -- --org acme --links 1000000`.
// 20 collection points, links spread over the last 90 days; some completed (approved, partial, declined),
// some expired, some still active, about 10% regenerated 1-3 times. Rows are generated inside the
// database (INSERT ... SELECT from generate_series), in batches, then the daily rollups are rebuilt
// from the rows. Seeded links carry random token hashes: they cannot be opened.
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { BENCH_SECRET_KEY } from './secret.js';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/platform/db/store.js';
import { systemClock } from '../src/platform/clock.js';
import { uuidv7 } from '../src/platform/ids.js';
import { createAccountsService } from '../src/features/accounts/index.js';
import type { Database } from '../src/platform/db/types.js';

const BATCH = 100_000;

export interface SeedOptions {
  slug: string;
  links: number;
  points?: number;
  days?: number;
  now?: Date;
  log?: (line: string) => void;
}

export interface SeedResult {
  orgId: string;
  assetId: string;
  pointIds: string[];
  links: number;
  seconds: number;
}

/** Seeds through the owner connection with explicit org_id (a bulk tool, not a request path). */
export async function seedConsentLinks(db: Database, o: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const log = o.log ?? (() => {});
  const now = o.now ?? new Date();
  const points = o.points ?? 20;
  const days = o.days ?? 90;
  const accounts = createAccountsService({ db, clock: systemClock, keyring: createSigningKeyring(BENCH_SECRET_KEY) });
  const org = await accounts.organizationBySlug(o.slug).catch(() => accounts.createOrganization({ slug: o.slug }));

  const assetId = uuidv7();
  await db.system.query(
    `insert into assets (org_id, id, name, kind, status, created_at, updated_at) values ($1, $2, $3, 'website', 'active', $4, $4)`,
    [org.id, assetId, `Seeded asset (${o.links} links)`, now],
  );
  const pointIds: string[] = [];
  for (let i = 0; i < points; i++) {
    const id = uuidv7();
    pointIds.push(id);
    const seq = await db.system.query<{ value: string }>(
      `insert into org_sequences (org_id, name, value) values ($1, 'collection_point', 1)
       on conflict (org_id, name) do update set value = org_sequences.value + 1 returning value`,
      [org.id],
    );
    const purposes = [
      { id: uuidv7(), name: 'Service delivery', description: 'To provide the service you asked for', required: true },
      { id: uuidv7(), name: 'Marketing', description: 'Offers by SMS and email', required: false },
      { id: uuidv7(), name: 'Analytics', description: 'Improving the product', required: false },
    ];
    await db.system.query(
      `insert into collection_points (org_id, id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at)
       values ($1, $2, $3, $4, $5, 'We process your data for the purposes below.', 1, $6::text::jsonb, 'active', $7, $7)`,
      [org.id, id, `CP${String(seq[0]!.value).padStart(3, '0')}`, assetId, `Seeded point ${i + 1}`, JSON.stringify(purposes), now],
    );
  }
  log(`organization ${o.slug} (${org.id}), asset ${assetId}, ${points} collection points`);

  for (let offset = 0; offset < o.links; offset += BATCH) {
    const n = Math.min(BATCH, o.links - offset);
    await db.system.transaction(async (tx) => {
      // One row per request; r1..r3 drive regeneration, completion and the consent action.
      await tx.query(
        `create temporary table seed_batch on commit drop as
         with g as (
           select g as i,
                  $2::timestamptz - (random() * $3::float8 * interval '1 day') as created_at,
                  random() as r1, random() as r2, random() as r3
             from generate_series(1, $1::int) g
         ), shaped as (
           select i, created_at, r1, r2, r3,
                  ($4::uuid[])[1 + ((i + $5::int) % cardinality($4::uuid[]))] as collection_point_id,
                  case when r1 < 0.10 then 1 + floor(r2 * 3)::int else 0 end as regenerations
             from g
         ), issued as (
           select *, least(created_at + regenerations * interval '25 hours', $2::timestamptz) as issued_at from shaped
         )
         select i, created_at, collection_point_id, regenerations, issued_at,
                issued_at + interval '24 hours' as expires_at,
                case when r3 < 0.65 and issued_at + interval '1 hour' < $2::timestamptz
                     then issued_at + (r2 * interval '20 hours') end as completed_at_raw,
                case when r1 < 0.70 then 'approved' when r1 < 0.90 then 'partial_consent' else 'declined' end as action,
                gen_random_uuid() as request_id, gen_random_uuid() as event_id,
                '+9198' || lpad((floor(random() * 100000000))::bigint::text, 8, '0') as phone,
                'dp-' || (floor(random() * ($1::int / 3 + 1)))::int as dp_id
           from issued`,
        [n, now, days, `{${pointIds.join(',')}}`, offset],
      );
      await tx.query(
        `insert into consent_requests (org_id, id, asset_id, collection_point_id, dp_id, phone, current_event_id, created_at, expires_at,
                                       completed_at, consent_action, regeneration_count)
         select $1::uuid, request_id, $2::uuid, collection_point_id, dp_id, phone, event_id, created_at, expires_at,
                case when completed_at_raw < least(expires_at, $3::timestamptz) then completed_at_raw end,
                case when completed_at_raw < least(expires_at, $3::timestamptz) then action end,
                regenerations
           from seed_batch`,
        [org.id, assetId, now],
      );
      await tx.query(
        `insert into consent_link_events (org_id, id, request_id, token_hash, created_at, expires_at, superseded_at)
         select $1::uuid, event_id, request_id, encode(sha256(convert_to(event_id::text, 'UTF8')), 'hex'), issued_at, expires_at, null
           from seed_batch
         union all
         select $1::uuid, gen_random_uuid(), b.request_id, encode(sha256(convert_to(b.request_id::text || k::text, 'UTF8')), 'hex'),
                b.created_at + (k * interval '25 hours'), b.created_at + (k * interval '25 hours') + interval '24 hours',
                b.created_at + ((k + 1) * interval '25 hours')
           from seed_batch b cross join lateral generate_series(0, b.regenerations - 1) k
          where b.regenerations > 0`,
        [org.id],
      );
    });
    log(`  ${offset + n} links`);
  }

  // Rebuilt from the rows, so the rollups agree with them exactly.
  await db.system.query(
    `insert into consent_link_daily_counts (org_id, asset_id, day, collection_point_id, created, completed)
     select org_id, asset_id, (created_at at time zone 'UTC')::date, collection_point_id, count(*), count(completed_at)
       from consent_requests where org_id = $1 and asset_id = $2
      group by 1, 2, 3, 4
     on conflict (org_id, asset_id, day, collection_point_id, shard)
     do update set created = excluded.created, completed = excluded.completed`,
    [org.id, assetId],
  );
  // Statistics for the planner, and the visibility map, without which index-only scans visit the heap.
  for (const table of ['consent_requests', 'consent_link_events', 'consent_link_daily_counts']) await db.system.query(`vacuum analyze ${table}`);
  return { orgId: org.id, assetId, pointIds, links: o.links, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { org: { type: 'string' }, links: { type: 'string', default: '100000' }, points: { type: 'string', default: '20' }, days: { type: 'string', default: '90' } },
  });
  if (!values.org) {
    process.stderr.write('Usage: npm run seed:consent -- --org <slug> [--links 1000000] [--points 20] [--days 90]\n');
    process.exit(2);
  }
  const links = Number(values.links);
  if (!Number.isInteger(links) || links < 1) throw new Error('--links must be a positive integer');
  const config = loadConfig();
  const store = await openStore(config, 'cli');
  try {
    const result = await seedConsentLinks(store.db, {
      slug: values.org,
      links,
      points: Number(values.points),
      days: Number(values.days),
      log: (l) => process.stdout.write(l + '\n'),
    });
    process.stdout.write(
      `Seeded ${result.links} links in ${result.seconds.toFixed(1)} s.\nasset_id=${result.assetId}\n` +
        `Try: curl -s "${config.publicUrl.protocol}//${values.org}.${config.publicUrl.host}/api/v1/external/public/consent-link/history?asset_id=${result.assetId}&limit=5" -H "X-Org-Id: ${values.org}" -H "X-API-Key: <admin key>"\n`,
    );
  } finally {
    await store.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
