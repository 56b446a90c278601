// The cost of webhooks on a write (issue 17 item 8): N grievance creations through the service (ticket,
// history entry, audit entry), one after another and then 8 at a time, with no endpoint subscribed and
// then with three endpoints subscribed to grievance.created (the same write then also stores the event
// and three deliveries; nothing is sent: the worker is not running). Reported per write.
// Usage: DATABASE_URL=postgres://... npx tsx bench/webhook-write.ts [N]   (a scratch database: it creates an organization)
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createGrievanceService } from '../src/features/grievances/index.js';
import { systemClock } from '../src/platform/clock.js';
import type { TenantContext } from '../src/platform/auth/access.js';

const n = Number(process.argv[2] ?? 2000);
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.DATA_DIR ?? 'memory://' });
await migrate(db);
const orgId = randomUUID();
await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'bench', now())`, [orgId, `bench-${orgId.slice(0, 8)}`]);
const keyId = randomUUID();
const ctx = { orgId, slug: 'bench', orgName: 'bench', actor: { type: 'api_key', id: keyId, scopes: ['admin'] }, requestId: 'bench' } as unknown as TenantContext;
const grievances = createGrievanceService({ db, clock: systemClock, publicUrl: new URL('http://localhost:3000') });
const write = (i: number) =>
  grievances.create(ctx, { client_user_id: `user-${i % 500}`, subject: `Benchmark request ${i}`, description: 'Please send me a copy of my data.', category: 'data_access' });

async function run(label: string) {
  const out: string[] = [];
  for (const parallel of [1, 8]) {
    // A short warm-up, unmeasured.
    for (let i = 0; i < 100; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
    const start = performance.now();
    for (let i = 0; i < n; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
    const ms = performance.now() - start;
    out.push(`parallel=${parallel}: ${((ms / n) * 1000).toFixed(0)} µs/write (${(n / (ms / 1000)).toFixed(0)} writes/s)`);
  }
  console.log(`${db.kind} ${label}: ${out.join('; ')}`);
}

await run('no endpoint       ');
for (let e = 0; e < 3; e++) {
  await db.system.query(
    `insert into webhook_endpoints (org_id, id, url, events, secret, enabled, created_at, updated_at)
     values ($1, $2, $3, array['grievance.created'], 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', true, now(), now())`,
    [orgId, randomUUID(), `https://hooks${e}.example.com/assent`],
  );
}
await run('3 endpoints       ');
const [d] = await db.system.query<{ n: number }>('select count(*)::int as n from webhook_deliveries where org_id = $1', [orgId]);
console.log(`${db.kind}: ${d!.n} deliveries stored`);
await db.close();
