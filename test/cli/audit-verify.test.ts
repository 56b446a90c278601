// `assent audit verify <slug>` (contract §10, issue 32), run for real: it seals what is committed,
// exit 0 with the entry count, the tree's root and the signed checkpoints on an intact log, and with a
// checkpoint kept from before (--checkpoint FILE); after a row is changed through SQL, exit 1 naming
// that entry, and a kept checkpoint of another size still checked against the rebuilt tree.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { recordAudit } from '../../src/features/audit/index.js';
import type { TenantContext } from '../../src/platform/auth/access.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { cliJson, createCliStore, runCli, uniqueSlug, type CliStore } from './child.js';

vi.setConfig({ testTimeout: 90_000 });

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterAll(async () => store?.drop());

/** Opens the store in this process (on PGlite only while no child holds the data directory). */
async function withStore<T>(fn: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<T>): Promise<T> {
  const db = await openDatabase({ databaseUrl: store.env.DATABASE_URL ?? null, dataDir: store.dataDir ?? '', poolSize: 1 });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

test('intact chain: exit 0 and the count; a row changed through SQL: exit 1 naming that entry', async () => {
  const slug = uniqueSlug();
  const org = await cliJson<{ id: string }>(['org', 'create', slug], store.env);
  const ctx = { orgId: org.id, actor: { type: 'api_key', id: '0190a0a0-0000-7000-8000-000000000001' }, requestId: null } as unknown as TenantContext;
  await withStore(async (db) => {
    for (let i = 0; i < 4; i++) {
      await withTenant(db, org.id, (tx) => recordAudit(tx, ctx, new Date(), { action: 'test.written', targetType: 'test', targetId: String(i) }));
    }
  });

  const good = await runCli(['audit', 'verify', slug], store.env);
  expect(good.code, good.stderr).toBe(0);
  expect(good.stdout).toMatch(/^Audit log of \S+ verified: 4 entries, hash chain head [0-9a-f]{64}, Merkle root [0-9a-f]{64} \(size 4\), 1 signed checkpoints match\n$/);

  // A checkpoint kept from now (as /.well-known/assent/checkpoints/latest gives it), checked later.
  const [kept] = await store.query<{ jws: string; tree_size: string }>('select jws, tree_size::text from audit_checkpoints where org_id = $1 order by tree_size desc limit 1', [org.id]);
  expect(kept!.tree_size).toBe('4');
  const keptFile = join(mkdtempSync(join(tmpdir(), 'assent-kept-')), 'kept.json');
  writeFileSync(keptFile, JSON.stringify({ tree_size: 4, jws: kept!.jws }));
  const withKept = await runCli(['audit', 'verify', slug, '--checkpoint', keptFile], store.env);
  expect(withKept.code, withKept.stdout + withKept.stderr).toBe(0);
  expect(withKept.stdout).toContain('the kept checkpoint of 4 entries');

  // Changed as the database's owner would, with the trigger that guards sealed entries switched off.
  await store.query(
    `do $$ begin perform set_config('session_replication_role', 'replica', true); update audit_log set target_id = 'forged' where org_id = '${org.id}' and seq = 2; end $$`,
  );
  const [victim] = await store.query<{ id: string }>(`select id from audit_log where org_id = $1 and seq = 2`, [org.id]);
  const bad = await runCli(['audit', 'verify', slug, '--json'], store.env);
  expect(bad.code).toBe(1);
  expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, chain: { ok: false, entries: 1, broken: { id: victim!.id, seq: 2, reason: 'hash does not match the entry content' } } });
  const human = await runCli(['audit', 'verify', slug, '--checkpoint', keptFile], store.env);
  expect(human.code).toBe(1);
  expect(human.stdout).toContain(`BROKEN: the hash chain is broken at entry 2 (${victim!.id}): hash does not match the entry content`);
  const missing = await runCli(['audit', 'verify', slug, '--checkpoint', `${keptFile}.nothing`], store.env);
  expect([missing.code, missing.stdout.trim()]).toEqual([1, `Audit log of ${slug} not verified: no file at ${keptFile}.nothing`]);

  const unknown = await runCli(['audit', 'verify', uniqueSlug()], store.env);
  expect(unknown.code).toBe(1);
});
