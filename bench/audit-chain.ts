// The cost of the audit hash chain on a write (issue 18): N transactions, each one audit entry, one
// after another and then 8 at a time, with the chain trigger on and (same store) switched off.
// Usage: DATABASE_URL=postgres://... npx tsx bench/audit-chain.ts [N]   (a scratch database: it creates an organization)
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { recordAudit } from '../src/features/audit/index.js';
import { withTenant } from '../src/platform/db/tenant-tx.js';
import type { TenantContext } from '../src/platform/auth/access.js';

const n = Number(process.argv[2] ?? 2000);
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.DATA_DIR ?? 'memory://' });
await migrate(db);
const orgId = randomUUID();
await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'bench', now())`, [orgId, `bench-${orgId.slice(0, 8)}`]);
const ctx = { orgId, actor: { type: 'api_key', id: orgId }, requestId: null } as unknown as TenantContext;
const write = (i: number) => withTenant(db, orgId, (tx) => recordAudit(tx, ctx, new Date(), { action: 'bench.write', targetType: 'bench', targetId: String(i), details: { i } }));

async function run(label: string) {
  for (const parallel of [1, 8]) {
    const start = performance.now();
    for (let i = 0; i < n; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
    const ms = performance.now() - start;
    console.log(`${db.kind} ${label} parallel=${parallel}: ${n} writes in ${ms.toFixed(0)} ms, ${((ms / n) * 1000).toFixed(0)} µs/write`);
  }
}
await run('chain on ');
await db.system.exec('alter table audit_log disable trigger audit_log_chain');
await db.system.exec('alter table audit_log alter column seq drop not null, alter column prev_hash drop not null, alter column hash drop not null');
await run('chain off');
await db.close();
