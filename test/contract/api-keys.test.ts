// API keys (contract §2): format, hash-only storage, the warm path without a database round trip,
// last_used_at kept without a write per request, revocation.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { countingDb } from '../support/counting-db.js';

let t: TestApp;
let counter: ReturnType<typeof countingDb>;
beforeAll(async () => {
  t = await buildTestApp({
    wrapDb: (db) => {
      counter = countingDb(db);
      return counter.db;
    },
  });
});
afterAll(async () => t?.close());

test('§2 format: ask_live_ + 32 base62 characters, a 12-character prefix, admin by default', async () => {
  const org = await t.org();
  const created = await t.app.services.accounts.createApiKey(org.slug, {});
  expect(created.key).toMatch(/^ask_live_[0-9A-Za-z]{32}$/);
  expect(created.prefix).toBe(created.key.slice(0, 12));
  expect(created.scopes).toEqual(['admin']);
});

test('§2 stored only as a SHA-256 hash: no column holds the plaintext', async () => {
  const org = await t.org();
  const { key, id } = await t.app.services.accounts.createApiKey(org.slug, { scopes: ['grievances'] });
  const rows = await t.db.system.query<Record<string, unknown>>('select * from api_keys where org_id = $1 and id = $2', [org.id, id]);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
  expect(JSON.stringify(rows[0])).not.toContain(key.slice(12));
});

test('§2 listing shows prefix, name, scopes, created_at, last_used_at, revoked_at and never the key', async () => {
  const org = await t.org();
  const { key, id } = await t.app.services.accounts.createApiKey(org.slug, { scopes: ['nominees', 'grievances'], name: 'backend' });
  const list = await t.app.services.accounts.listApiKeys(org.slug);
  expect(list).toEqual([
    { id, name: 'backend', prefix: key.slice(0, 12), scopes: ['nominees', 'grievances'], created_at: expect.any(Date), last_used_at: null, revoked_at: null },
  ]);
});

test('§2 unknown scopes and bad names are refused, and nothing is stored', async () => {
  const org = await t.org();
  await expect(t.app.services.accounts.createApiKey(org.slug, { scopes: ['root'] })).rejects.toMatchObject({ code: 'validation_failed' });
  await expect(t.app.services.accounts.createApiKey(org.slug, { name: ' ' })).rejects.toMatchObject({ code: 'validation_failed' });
  expect(await t.app.services.accounts.listApiKeys(org.slug)).toEqual([]);
});

test('performance rule: a warm key makes no database round trip for tenant or credentials', async () => {
  const org = await t.tenant(['grievances']);
  const call = () => t.call({ method: 'GET', url: '/grievance/user/nobody', org, key: org.key });
  expect((await call()).statusCode).toBe(200); // cold: host and key looked up
  counter.reset();
  for (let i = 0; i < 5; i++) expect((await call()).statusCode).toBe(200);
  expect(counter.counts.system).toBe(0); // no host or key lookup
  expect(counter.counts.tenant).toBe(5); // one tenant transaction per request: the query itself
});

test('§2 last_used_at is kept in memory and written in one statement on flush, not per request', async () => {
  const org = await t.tenant(['grievances']);
  const [meta] = await t.app.services.accounts.listApiKeys(org.slug);
  await t.app.services.apiKeys.flushUsage();
  const used = t.clock.now();
  await t.call({ method: 'GET', url: '/grievance/user/x', org, key: org.key });
  expect((await t.app.services.accounts.listApiKeys(org.slug))[0]!.last_used_at).toBeNull();
  counter.reset();
  await t.app.services.apiKeys.flushUsage();
  expect(counter.counts.system).toBe(1);
  const after = (await t.app.services.accounts.listApiKeys(org.slug))[0]!;
  expect(after.id).toBe(meta!.id);
  expect(after.last_used_at).toEqual(used);
  // A later use moves it forward; an older one never moves it back.
  t.clock.advance(60_000);
  await t.call({ method: 'GET', url: '/grievance/user/x', org, key: org.key });
  await t.app.services.apiKeys.flushUsage();
  expect((await t.app.services.accounts.listApiKeys(org.slug))[0]!.last_used_at).toEqual(new Date(used.getTime() + 60_000));
});

test('§2 revocation: revoked_at set, the key refused at once, revoking twice keeps the first time', async () => {
  const org = await t.tenant(['grievances']);
  const [meta] = await t.app.services.accounts.listApiKeys(org.slug);
  expect((await t.call({ method: 'GET', url: '/grievance/user/x', org, key: org.key })).statusCode).toBe(200);
  const revoked = await t.app.services.accounts.revokeApiKey(org.slug, meta!.id);
  expect(revoked.revoked_at).toEqual(t.clock.now());
  const res = await t.call({ method: 'GET', url: '/grievance/user/x', org, key: org.key });
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  t.clock.advance(1000);
  const again = await t.app.services.accounts.revokeApiKey(org.slug, meta!.id);
  expect(again.revoked_at).toEqual(revoked.revoked_at);
});

test("§2 revoking an unknown key or another organization's key is not found", async () => {
  const a = await t.tenant();
  const b = await t.tenant();
  const [bKey] = await t.app.services.accounts.listApiKeys(b.slug);
  await expect(t.app.services.accounts.revokeApiKey(a.slug, bKey!.id)).rejects.toMatchObject({ code: 'not_found' });
  await expect(t.app.services.accounts.revokeApiKey(a.slug, 'not-a-uuid')).rejects.toMatchObject({ code: 'not_found' });
  expect((await t.app.services.accounts.listApiKeys(b.slug))[0]!.revoked_at).toBeNull();
});
