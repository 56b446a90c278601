// Seeds the benchmark's data inside the database, fast (INSERT ... SELECT from generate_series):
// organizations with an API key each, grievance tickets with their status history, nominees, and one
// asset of consent links (seedConsentLinks). Used by bench/run.ts before a server starts.
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { BENCH_SECRET_KEY } from './secret.js';
import type { Database } from '../src/platform/db/types.js';
import { systemClock } from '../src/platform/clock.js';
import { createAccountsService, createUserService } from '../src/features/accounts/index.js';
import { GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES } from '../src/features/grievances/index.js';
import { RELATIONSHIPS } from '../src/features/nominees/index.js';
import { seedConsentLinks } from './seed-consent.js';
import { seedPrincipals, type BenchPrincipals } from './seed-me.js';

export interface BenchSeedOptions {
  orgs: number;
  grievances: number;
  nominees: number;
  links: number;
  /** Ticket ids kept per organization for the PUT load. */
  ticketSample?: number;
  log?: (line: string) => void;
}

export interface BenchOrg {
  id: string;
  slug: string;
  /** Plaintext key with the grievances and nominees scopes. */
  key: string;
  /** client_user_id values user-0 .. user-(grievanceUsers - 1) have tickets. */
  grievanceUsers: number;
  /** user-0 .. user-(nomineeUsers - 1) have nominees. */
  nomineeUsers: number;
  tickets: string[];
}

export interface BenchData {
  orgs: BenchOrg[];
  consent: {
    slug: string;
    assetId: string;
    /** Its collection points: new consent links go to them. */
    pointIds: string[];
    adminKey: string;
    /** An owner of the organization, for the Bearer-authenticated requests (log in first). */
    owner: { email: string; password: string };
    links: number;
    /** Data principals with consents on record there, for the /api/v1/me/consents load (bench/seed-me.ts). */
    principals: BenchPrincipals;
  } | null;
  counts: { orgs: number; grievances: number; statusChanges: number; nominees: number; links: number };
  seconds: { orgs: number; grievances: number; nominees: number; links: number; total: number };
}

/** Tickets per user, and nominees per user: a handful each, as a real organization has. */
const TICKETS_PER_USER = 4;
const NOMINEES_PER_USER = 2;
const BASE36 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `n` in 8 base-36 digits, as SQL: the ticket code (n < 36^8). */
function base36Sql(n: string): string {
  const digits: string[] = [];
  for (let k = 7; k >= 0; k--) digits.push(`substr('${BASE36}', ((${n} / ${36 ** k}::bigint) % 36)::int + 1, 1)`);
  return digits.join(' || ');
}

const sqlArray = (values: readonly string[]) => `array[${values.map((v) => `'${v}'`).join(', ')}]`;

function spread(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}

/** Runs fn in a system transaction with app.org_id set, so the restrictive RLS policy admits the rows for any owner role. */
function asTenant<T>(db: Database, orgId: string, fn: (q: (text: string, params?: unknown[]) => Promise<unknown[]>) => Promise<T>): Promise<T> {
  return db.system.transaction(async (tx) => {
    await tx.query("select set_config('app.org_id', $1, true)", [orgId]);
    return fn((text, params) => tx.query(text, params));
  });
}

export async function seedBench(db: Database, o: BenchSeedOptions): Promise<BenchData> {
  const log = o.log ?? (() => {});
  const t0 = performance.now();
  const now = new Date();
  const accounts = createAccountsService({ db, clock: systemClock, keyring: createSigningKeyring(BENCH_SECRET_KEY) });
  const existing = await db.system.query<{ n: number }>('select count(*)::int as n from organizations');
  if (existing[0]!.n > 0) throw new Error('the benchmark needs an empty store: it already holds organizations (use a fresh database)');

  const orgs: BenchOrg[] = [];
  for (let i = 0; i < o.orgs; i++) {
    const slug = `bench-${String(i).padStart(3, '0')}`;
    const org = await accounts.createOrganization({ slug, name: `Bench organization ${i}` });
    const key = await accounts.createApiKey(slug, { scopes: ['grievances', 'nominees'], name: 'bench' });
    const g = spread(o.grievances, o.orgs, i);
    const n = spread(o.nominees, o.orgs, i);
    orgs.push({
      id: org.id,
      slug,
      key: key.key,
      grievanceUsers: Math.max(1, Math.ceil(g / TICKETS_PER_USER)),
      nomineeUsers: Math.max(1, Math.ceil(n / NOMINEES_PER_USER)),
      tickets: [],
    });
  }
  const t1 = performance.now();
  log(`${o.orgs} organizations with a key each (${((t1 - t0) / 1000).toFixed(1)} s)`);

  // Tickets over the last year, oldest first; ticket codes are i scrambled by a multiplier prime to 36, so distinct.
  const code = base36Sql('((i::bigint * 1000000007 + $5::bigint) % 2821109907456)');
  let statusChanges = 0;
  for (const [k, org] of orgs.entries()) {
    const g = spread(o.grievances, o.orgs, k);
    if (g === 0) continue;
    statusChanges += await asTenant(db, org.id, async (q) => {
      await q(
        `insert into grievances (org_id, id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at,
                                 due_at, paused_at, paused, resolved_at)
         select $1::uuid, gen_random_uuid(), 'GRV-' || ${code}, 'user-' || (i % $3::int), null,
                (array['Copy of my data', 'Correct my address', 'Delete my account', 'Stop marketing messages', 'Who received my data?', 'Withdraw consent'])[1 + i % 6] || ' (' || i || ')',
                'Dear privacy team, I am writing about the personal data you hold on me. ' || repeat(md5(i::text), 4),
                (${sqlArray(GRIEVANCE_CATEGORIES)})[1 + (i * 7) % ${GRIEVANCE_CATEGORIES.length}],
                s.status,
                case when i % 5 = 0 then 'https://files.example.com/grievances/' || md5(i::text) || '.pdf' end,
                t.created_at,
                case when s.status = 'open' then t.created_at else least(t.created_at + interval '1 day', $4::timestamptz) end,
                -- The statutory clock as migration 0013_2 sets it for existing tickets (a 30-day period).
                t.created_at + interval '30 days',
                case when s.status = 'on_hold' then least(t.created_at + interval '1 day', $4::timestamptz) end,
                case when s.status = 'on_hold'
                     then jsonb_build_array(jsonb_build_object('from', to_char(least(t.created_at + interval '1 day', $4::timestamptz) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'to', null, 'reason', null))
                     else '[]'::jsonb end,
                case when s.status in ('resolved', 'rejected', 'closed') then least(t.created_at + interval '1 day', $4::timestamptz) end
           from generate_series(1, $2::int) i
           cross join lateral (select $4::timestamptz - ((($2::int - i)::float8 / $2::int) * interval '365 days') - interval '1 minute' as created_at) t
           cross join lateral (select (${sqlArray(GRIEVANCE_STATUSES)})[1 + (i * 11) % ${GRIEVANCE_STATUSES.length}] as status) s`,
        [org.id, g, org.grievanceUsers, now, k * 7919],
      );
      // Every ticket has its creation entry; a ticket no longer open has the change that moved it.
      const rows = (await q(
        `with h as (
           insert into grievance_status_changes (org_id, id, grievance_id, status, previous_status, changed_at, actor_type, actor_id, note)
           select org_id, gen_random_uuid(), id, 'open', null, created_at, 'api_key', $2::uuid, null from grievances where org_id = $1::uuid
           union all
           select org_id, gen_random_uuid(), id, status, 'open', updated_at, 'api_key', $2::uuid, null from grievances where org_id = $1::uuid and status <> 'open'
           returning 1
         ) select count(*)::int as n from h`,
        [org.id, '00000000-0000-4000-8000-000000000000'],
      )) as { n: number }[];
      const sample = (await q('select ticket_id from grievances where org_id = $1::uuid order by random() limit $2::int', [
        org.id,
        o.ticketSample ?? 200,
      ])) as { ticket_id: string }[];
      org.tickets = sample.map((r) => r.ticket_id);
      return rows[0]!.n;
    });
  }
  const t2 = performance.now();
  log(`${o.grievances.toLocaleString('en-US')} grievances, ${statusChanges.toLocaleString('en-US')} history entries (${((t2 - t1) / 1000).toFixed(1)} s)`);

  for (const [k, org] of orgs.entries()) {
    const n = spread(o.nominees, o.orgs, k);
    if (n === 0) continue;
    await asTenant(db, org.id, (q) =>
      q(
        `insert into nominees (org_id, id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship,
                               purpose_of_appointment, status, verified_at, created_at, updated_at)
         select $1::uuid, gen_random_uuid(), 'user-' || (i % $3::int), 'Nominee ' || i, 'nominee' || i || '@example.com',
                '+9198' || lpad(((i::bigint * 7919) % 100000000)::text, 8, '0'),
                (${sqlArray(RELATIONSHIPS)})[1 + i % ${RELATIONSHIPS.length}],
                case when i % 2 = 0 then 'Acts for me if I cannot' end,
                s.status, case when s.status = 'verified' then t.created_at + interval '1 hour' end,
                t.created_at, t.created_at + interval '1 hour'
           from generate_series(1, $2::int) i
           cross join lateral (select $4::timestamptz - ((($2::int - i)::float8 / $2::int) * interval '365 days') - interval '2 hours' as created_at) t
           cross join lateral (select (array['pending', 'verified', 'rejected'])[1 + i % 3] as status) s`,
        [org.id, n, org.nomineeUsers, now],
      ),
    );
  }
  for (const table of ['grievances', 'grievance_status_changes', 'nominees']) await db.system.query(`vacuum analyze ${table}`);
  const t3 = performance.now();
  log(`${o.nominees.toLocaleString('en-US')} nominees (${((t3 - t2) / 1000).toFixed(1)} s)`);

  let consent: BenchData['consent'] = null;
  if (o.links > 0) {
    const slug = orgs[0]!.slug;
    const seeded = await seedConsentLinks(db, { slug, links: o.links, now });
    const admin = await accounts.createApiKey(slug, { scopes: ['admin'], name: 'bench admin' });
    const owner = { email: 'owner@bench.example', password: 'bench-owner-password' };
    const users = createUserService({ db, clock: systemClock });
    const user = await users.createUser(owner);
    await users.addMember(orgs[0]!.id, user.id, 'owner');
    // One person per thousand links (50 at least, 1,000 at most), each with consents at 4 points.
    const principals = await seedPrincipals(db, {
      orgId: orgs[0]!.id,
      slug,
      pointIds: seeded.pointIds,
      principals: Math.min(1_000, Math.max(50, Math.floor(o.links / 1_000))),
    });
    consent = { slug, assetId: seeded.assetId, pointIds: seeded.pointIds, adminKey: admin.key, owner, links: o.links, principals };
  }
  const t4 = performance.now();
  if (o.links > 0) log(`${o.links.toLocaleString('en-US')} consent links in one asset of ${orgs[0]!.slug} (${((t4 - t3) / 1000).toFixed(1)} s)`);

  return {
    orgs,
    consent,
    counts: { orgs: o.orgs, grievances: o.grievances, statusChanges, nominees: o.nominees, links: o.links },
    seconds: {
      orgs: (t1 - t0) / 1000,
      grievances: (t2 - t1) / 1000,
      nominees: (t3 - t2) / 1000,
      links: (t4 - t3) / 1000,
      total: (t4 - t0) / 1000,
    },
  };
}
