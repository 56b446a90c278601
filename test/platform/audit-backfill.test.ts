// Migration 0013 chains the audit entries written before it: each organization's entries in (at, id)
// order get seq 1.., prev_hash and hash, the head row is set; migration 0040 builds their Merkle tree
// (leaf hashes, nodes, the head's right edge), and new entries, sealed by the sequencer, continue both.
import { afterAll, expect, test } from 'vitest';
import { listMigrations } from '../../src/platform/db/migrate.js';
import { verifyAuditChain } from '../../src/features/audit/index.js';
import { verifyAuditLog } from '../../src/features/transparency/index.js';
import { openDatabase } from '../../src/platform/db/open.js';
import type { Database } from '../../src/platform/db/types.js';
import { createScratchPostgres, storeKind } from '../support/store.js';

let db: Database | undefined;
let drop: (() => Promise<void>) | undefined;
afterAll(async () => {
  await db?.close();
  await drop?.();
});

test('entries from before 0013 are chained per organization and put in a tree; the sequencer continues from the head', async () => {
  if (storeKind() === 'pglite') {
    db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
  } else {
    const scratch = await createScratchPostgres();
    drop = scratch.drop;
    db = await openDatabase({ databaseUrl: scratch.url, dataDir: '', poolSize: 1 });
  }
  const all = listMigrations();
  const before = all.filter((m) => m.version < '0013');
  const rest = all.filter((m) => m.version >= '0013');
  for (const m of before) await db.system.exec(m.sql);

  const orgs = ['0190a0a0-0000-7000-8000-00000000000a', '0190a0a0-0000-7000-8000-00000000000b'];
  for (const id of orgs) {
    await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'x', now())`, [id, `org${id.slice(-1)}`]);
  }
  // Written out of time order, with microseconds the chain drops.
  const at = ['2026-11-20T10:00:00.000123Z', '2026-11-20T09:00:00.000Z', '2026-11-21T08:00:00.5Z'];
  await db.system.transaction(async (tx) => {
    for (const org of orgs) {
      await tx.query(`select set_config('app.org_id', $1, true)`, [org]);
      for (let i = 0; i < at.length; i++) {
        await tx.query(
          `insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, target_id, details)
           values ($1, gen_random_uuid(), $2, 'api_key', $1, $3, 'test', null, $4::jsonb)`,
          [org, at[i], `test.${i}`, JSON.stringify({ i })],
        );
      }
    }
  });
  for (const m of rest) await db.system.exec(m.sql);

  for (const org of orgs) {
    const rows = await db.system.query<{ seq: string; action: string }>('select seq::text, action from audit_log where org_id = $1 order by seq', [org]);
    expect(rows).toEqual([{ seq: '1', action: 'test.1' }, { seq: '2', action: 'test.0' }, { seq: '3', action: 'test.2' }]);
  }
  expect(await verifyAuditChain(db, orgs[0]!)).toMatchObject({ ok: true, entries: 3, head: { seq: 3 } });
  expect(await verifyAuditLog(db, orgs[0]!, { jwks: { keys: [] } })).toMatchObject({ ok: true, tree: { size: 3 } });
  await db.tenantTransaction(orgs[0]!, async (tx) => {
    await tx.query(`insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, details) values ($1, gen_random_uuid(), now(), 'api_key', $1, 'test.after', 'test', '{}')`, [orgs[0]]);
    await tx.query('select * from assent_audit_seal($1, 1000)', [orgs[0]]);
  });
  expect(await verifyAuditChain(db, orgs[0]!)).toMatchObject({ ok: true, entries: 4, head: { seq: 4 } });
  expect(await verifyAuditLog(db, orgs[0]!, { jwks: { keys: [] } })).toMatchObject({ ok: true, tree: { size: 4 } });
  expect(await verifyAuditChain(db, orgs[1]!)).toMatchObject({ ok: true, entries: 3 });
});
