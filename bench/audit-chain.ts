// The cost of the audit log on a write (issues 18, 31): N transactions, each one audit entry, one after
// another and then 8 at a time, for one organization; then the sequencer sealing all of them into the
// hash chain and the Merkle tree (what happens after the commits, off the request path).
// Before migration 0040 a trigger chained each entry in its writing transaction under the
// organization's head row; run this file at an earlier commit to compare (docs/architecture.md).
// Usage: DATABASE_URL=postgres://... npx tsx bench/audit-chain.ts [N]   (a scratch database: it creates an organization)
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { recordAudit } from '../src/features/audit/index.js';
import { createSequencer } from '../src/features/transparency/index.js';
import { withTenant } from '../src/platform/db/tenant-tx.js';
import { systemClock } from '../src/platform/clock.js';
import type { TenantContext } from '../src/platform/auth/access.js';

const n = Number(process.argv[2] ?? 2000);
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.DATA_DIR ?? 'memory://' });
await migrate(db);
const orgId = randomUUID();
await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'bench', now())`, [orgId, `bench-${orgId.slice(0, 8)}`]);
const ctx = { orgId, actor: { type: 'api_key', id: orgId }, requestId: null } as unknown as TenantContext;
const write = (i: number) => withTenant(db, orgId, (tx) => recordAudit(tx, ctx, new Date(), { action: 'bench.write', targetType: 'bench', targetId: String(i), details: { i } }));
const sequencer = createSequencer({ db, clock: systemClock, log: console });

for (const parallel of [1, 8]) {
  const start = performance.now();
  for (let i = 0; i < n; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
  const ms = performance.now() - start;
  console.log(`${db.kind} writes parallel=${parallel}: ${n} writes in ${ms.toFixed(0)} ms, ${((ms / n) * 1000).toFixed(0)} µs/write`);
  const sealStart = performance.now();
  const sealed = await sequencer.sealNow(orgId);
  const sealMs = performance.now() - sealStart;
  console.log(`${db.kind} sealing: ${sealed.sealed} entries in ${sealMs.toFixed(0)} ms, ${((sealMs / sealed.sealed) * 1000).toFixed(0)} µs/entry (tree size ${sealed.tree_size})`);
}
await sequencer.stop();
await db.close();
