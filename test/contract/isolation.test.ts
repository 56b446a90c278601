// Tenant isolation in the database (DESIGN "Tenant isolation, two layers"): row-level security holds
// even for a query that forgets its org_id filter, on both stores.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { storeKind } from '../support/store.js';
import type { Database } from '../../src/platform/db/types.js';
import { addressOf, slugFromHost } from '../../src/platform/auth/tenant-host.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const ticket = { client_user_id: 'u', subject: 's', description: 'd', category: 'other' };

test('RLS: a tenant transaction sees only its own rows, even without an org_id filter', async () => {
  const a = await t.tenant();
  const b = await t.tenant();
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  await t.call({ method: 'POST', url: '/grievance', org: b, key: b.key, body: ticket });
  const count = (orgId: string) =>
    t.db.tenantTransaction(orgId, async (tx) => (await tx.query<{ n: number }>('select count(*)::int as n from grievances'))[0]!.n);
  expect(await count(a.id)).toBe(2);
  expect(await count(b.id)).toBe(1);
  const history = await t.db.tenantTransaction(b.id, (tx) => tx.query('select org_id from grievance_status_changes'));
  expect(history).toEqual([{ org_id: b.id }]);
});

test("RLS: a tenant transaction cannot write another organization's rows", async () => {
  const a = await t.tenant();
  const b = await t.tenant();
  await expect(
    t.db.tenantTransaction(b.id, (tx) =>
      tx.query("insert into nominees (org_id, id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, status, created_at, updated_at) values ($1, gen_random_uuid(), 'u', 'n', 'e@x.io', '+911234567890', 'spouse', 'pending', now(), now())", [a.id]),
    ),
  ).rejects.toThrow(/row-level security/);
  const updated = await t.db.tenantTransaction(b.id, (tx) => tx.query("update grievances set status = 'closed' where org_id = $1 returning id", [a.id]));
  expect(updated).toEqual([]);
});

test('RLS: the ticket history is append-only for the service role', async () => {
  const a = await t.tenant();
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  await expect(t.db.tenantTransaction(a.id, (tx) => tx.query("update grievance_status_changes set note = 'x'"))).rejects.toThrow(/permission denied/);
  await expect(t.db.tenantTransaction(a.id, (tx) => tx.query('delete from grievance_status_changes'))).rejects.toThrow(/permission denied/);
});

test('RLS: the tenant transaction runs as the unprivileged role', async () => {
  const a = await t.tenant();
  const [row] = await t.db.tenantTransaction(a.id, (tx) => tx.query<{ u: string; org: string }>("select current_user as u, current_setting('app.org_id') as org"));
  expect(row).toEqual({ u: 'assent_app', org: a.id });
});

test('RLS: the one-round-trip read (tenantQuery) runs as the same role, sees only its rows, and leaves nothing behind', async () => {
  const a = await t.tenant();
  const b = await t.tenant();
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  expect(await t.db.tenantQuery(a.id, "select current_user as u, current_setting('app.org_id') as org")).toEqual([{ u: 'assent_app', org: a.id }]);
  expect(await t.db.tenantQuery<{ n: number }>(b.id, 'select count(*)::int as n from grievances')).toEqual([{ n: 0 }]);
  expect(await t.db.tenantQuery<{ n: number }>(a.id, 'select count(*)::int as n from grievances')).toEqual([{ n: 1 }]);
  await expect(t.db.tenantQuery(b.id, 'select 1/0')).rejects.toThrow(/division by zero/);
  // The pooled connection went back clean: the owner connection is not left in the tenant role.
  const [owner] = await t.db.system.query<{ u: string; org: string | null }>("select current_user as u, nullif(current_setting('app.org_id', true), '') as org");
  expect(owner!.u).not.toBe('assent_app');
  expect(owner!.org).toBeNull();
});

/** The store again with all tenant work on one connection (PostgreSQL; PGlite is one connection anyway). */
function oneConnection(): Promise<Database> {
  return t.store.kind === 'postgres' ? t.store.open({ poolSize: 1, readLanes: 1 }) : Promise.resolve(t.db);
}

test('RLS: tenant reads queued back to back on one connection each see only their own tenant, failures among them included', async () => {
  const db = await oneConnection();
  const a = await t.tenant();
  const b = await t.tenant();
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
  await t.call({ method: 'POST', url: '/grievance', org: b, key: b.key, body: ticket });
  // No org_id filter: only the tenant each read carries can limit what it counts.
  const read = (orgId: string) =>
    db.tenantQuery<{ org: string; n: number }>(orgId, "select current_setting('app.org_id') as org, (select count(*)::int from grievances) as n");
  // All sent in the same tick, so on PostgreSQL they are pipelined on the one connection.
  const outcomes = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      i % 3 === 2 ? db.tenantQuery(b.id, 'select 1/0').then(() => 'answered', (e: Error) => e.message) : read(i % 3 === 0 ? a.id : b.id),
    ),
  );
  outcomes.forEach((outcome, i) => {
    if (i % 3 === 0) expect(outcome).toEqual([{ org: a.id, n: 2 }]);
    else if (i % 3 === 1) expect(outcome).toEqual([{ org: b.id, n: 1 }]);
    else expect(outcome).toMatch(/division by zero/);
  });
  // And a transaction on the same connection afterwards starts from nothing but its own tenant.
  expect(await db.tenantTransaction(a.id, (tx) => tx.query("select current_user as u, current_setting('app.org_id') as org"))).toEqual([
    { u: 'assent_app', org: a.id },
  ]);
});

test.runIf(storeKind() === 'postgres')(
  'RLS: a statement postgres.js sends again after a schema change never answers with another tenant; a tenant read sends itself again',
  async () => {
    const db = await oneConnection();
    const a = await t.tenant();
    const b = await t.tenant();
    // A table with no row-level security and a query with no org_id filter: sent again after another
    // read's tenant, the statement would still answer, and only the tenant read's own check stops it.
    await t.db.system.exec('create table retry_probe (org_id uuid not null, v int not null); grant select on retry_probe to assent_app');
    await t.db.system.query('insert into retry_probe values ($1, 1)', [a.id]);
    const text = "select current_setting('app.org_id') as org, v from retry_probe where v > $1";
    expect(await db.tenantQuery(a.id, text, [0])).toEqual([{ org: a.id, v: 1 }]);
    expect(await db.tenantQuery(b.id, text, [0])).toEqual([{ org: b.id, v: 1 }]);
    expect(await db.tenantTransaction(a.id, (tx) => tx.query(text, [0]))).toEqual([{ org: a.id, v: 1 }]);
    // The prepared statements now fail with "cached plan must not change result type", which postgres.js
    // answers by preparing and sending them again, after what was already queued on the connection.
    await t.db.system.exec('alter table retry_probe alter column v type bigint');
    // Reads of two tenants queued back to back on the one read lane: each statement is sent again after
    // the other tenant was set, and each read then sends itself again, tenant first (int8 comes back as
    // a string).
    const reads = await Promise.all([a, b, a, b].map((org) => db.tenantQuery(org.id, text, [0])));
    expect(reads).toEqual([a, b, a, b].map((org) => [{ org: org.id, v: '1' }]));
    // The lane's new connection and the pooled one then serve reads and transactions as before.
    expect(await db.tenantQuery(b.id, text, [0])).toEqual([{ org: b.id, v: '1' }]);
    expect(await db.tenantTransaction(a.id, (tx) => tx.query(text, [0]))).toEqual([{ org: a.id, v: '1' }]);
    // In a transaction, an invalidated statement is sent again inside the failed transaction and fails
    // there, once per connection; the next transaction prepares it anew.
    await t.db.system.exec('alter table retry_probe alter column v type int');
    await expect(db.tenantTransaction(a.id, (tx) => tx.query(text, [0]))).rejects.toThrow(/cached plan/);
    expect(await db.tenantTransaction(a.id, (tx) => tx.query(text, [0]))).toEqual([{ org: a.id, v: 1 }]);
  },
);

test('§1 tenant from Host: the first label under BASE_DOMAIN, case-insensitive, port ignored', () => {
  expect(slugFromHost('acme.localhost:3000', 'localhost')).toBe('acme');
  expect(slugFromHost('ACME.LocalHost', 'localhost')).toBe('acme');
  expect(slugFromHost('acme.privacy.example.com', 'privacy.example.com')).toBe('acme');
  expect(slugFromHost('localhost:3000', 'localhost')).toBeNull();
  expect(slugFromHost('a.b.localhost', 'localhost')).toBeNull();
  expect(slugFromHost('acme.evil.com', 'localhost')).toBeNull();
  expect(slugFromHost('[::1]:3000', 'localhost')).toBeNull();
  expect(slugFromHost(undefined, 'localhost')).toBeNull();
});

test('§9 the bare host: the base domain and any host that is not under it; an organization host otherwise', () => {
  for (const host of ['localhost:3000', 'LOCALHOST', '127.0.0.1:3000', '[::1]:3000', 'proxy.internal', undefined]) {
    expect(addressOf(host, 'localhost')).toEqual({ kind: 'bare' });
  }
  expect(addressOf('acme.localhost:3000', 'localhost')).toEqual({ kind: 'organization', slug: 'acme' });
  // Under the base domain but not a possible slug: an organization host that names nobody (401).
  expect(addressOf('a.b.localhost', 'localhost')).toEqual({ kind: 'organization', slug: null });
  expect(addressOf('privacy.example.com', 'privacy.example.com')).toEqual({ kind: 'bare' });
});

test('§1 X-Forwarded-Host is ignored unless TRUST_PROXY is set', async () => {
  const a = await t.tenant(['grievances']);
  const b = await t.tenant(['grievances']);
  // Addressed to b's host, forwarded for a's: without TRUST_PROXY the Host decides, and a's key is not b's.
  const res = await t.call({ method: 'GET', url: '/grievance/user/u', org: b, key: a.key, headers: { 'x-forwarded-host': a.host } });
  expect(res.statusCode).toBe(401);
  const proxied = await buildTestApp({ env: { TRUST_PROXY: '1' } });
  try {
    const b = await proxied.tenant(['grievances']);
    const ok = await proxied.call({ method: 'GET', url: '/grievance/user/u', org: 'proxy.internal', key: b.key, headers: { 'x-forwarded-host': b.host } });
    expect(ok.statusCode).toBe(200);
  } finally {
    await proxied.close();
  }
});

test('ASSENT_RLS=off still scopes every query by org_id', async () => {
  const off = await buildTestApp({ rls: false });
  try {
    const a = await off.tenant();
    const b = await off.tenant();
    await off.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: ticket });
    const res = await off.call({ method: 'GET', url: '/grievance/user/u', org: b, key: b.key });
    expect(res.json()).toEqual([]);
    expect((await off.call({ method: 'GET', url: '/grievance/user/u', org: a, key: a.key })).json()).toHaveLength(1);
  } finally {
    await off.close();
  }
});
