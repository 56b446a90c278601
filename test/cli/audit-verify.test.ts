// `assent audit verify <slug>` (contract §10), run for real: exit 0 with the entry count on an intact
// chain; after a row is changed through SQL, exit 1 naming that entry.
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
  expect(good.stdout).toContain('verified: 4 entries');

  const [victim] = await store.query<{ id: string }>(`update audit_log set target_id = 'forged' where org_id = $1 and seq = 2 returning id`, [org.id]);
  const bad = await runCli(['audit', 'verify', slug, '--json'], store.env);
  expect(bad.code).toBe(1);
  expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, entries: 1, broken: { id: victim!.id, seq: 2, reason: 'hash does not match the entry content' } });
  const human = await runCli(['audit', 'verify', slug], store.env);
  expect(human.code).toBe(1);
  expect(human.stdout).toContain(`BROKEN at entry 2 (${victim!.id})`);

  const unknown = await runCli(['audit', 'verify', uniqueSlug()], store.env);
  expect(unknown.code).toBe(1);
});
