// Idempotency-Key on creating POSTs (contract §9): the first answer stored per organization and key for
// 24 hours, in the same transaction as the change; replayed with Idempotent-Replayed; 422 for another
// request; 409 while the first runs (in this process, and on PostgreSQL in another one); expiry and purge.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import type { Database, Queryable } from '../../src/platform/db/types.js';
import { storeKind } from '../support/store.js';

type Tenant = TestOrg & { key: string };

// Test controls over the store the app opens its transactions on: hold them, or fail one statement.
let gate: Promise<void> | null = null;
let failOnce: RegExp | null = null;

function controlled(db: Database): Database {
  const failing = (tx: Queryable): Queryable => ({
    query(text, params) {
      if (failOnce?.test(text)) {
        failOnce = null;
        return Promise.reject(new Error('injected failure'));
      }
      return tx.query(text, params);
    },
  });
  return {
    ...db,
    async tenantTransaction(orgId, fn) {
      if (gate) await gate;
      return db.tenantTransaction(orgId, (tx) => fn(failing(tx)));
    },
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ wrapDb: controlled });
});
afterAll(async () => t?.close());

const body = (overrides: Record<string, unknown> = {}) => ({
  client_user_id: 'user-1',
  subject: 'Copy of my data',
  description: 'Please send me a copy of all personal data you hold about me.',
  category: 'data_access',
  ...overrides,
});

function post(a: Tenant, key: string | undefined, payload: unknown, url = '/grievance') {
  return t.call({ method: 'POST', url, org: a, key: a.key, body: payload, headers: key === undefined ? {} : { 'idempotency-key': key } });
}

async function tickets(a: Tenant, user = 'user-1'): Promise<unknown[]> {
  const res = await t.call({ method: 'GET', url: `/grievance/user/${user}`, org: a, key: a.key });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function storedKeys(org: TestOrg): Promise<{ key: string; status_code: number }[]> {
  return t.db.system.query(`select key, status_code from idempotency_keys where org_id = $1::uuid order by key`, [org.id]);
}

describe('Idempotency-Key', () => {
  test('a repeat with the same body gets the first answer, marked replayed, and changes nothing', async () => {
    const a = await t.tenant();
    const first = await post(a, 'order-1', body());
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    // The same body in another key order, with other spacing, is the same request.
    const reordered = JSON.stringify({ category: 'data_access', description: body().description, subject: 'Copy of my data', client_user_id: 'user-1' }, null, 2);
    t.clock.advance(5_000);
    const again = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: reordered, headers: { 'idempotency-key': 'order-1', 'content-type': 'application/json' } });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.body).toBe(first.body);
    expect(await tickets(a)).toHaveLength(1);
    expect(await storedKeys(a)).toEqual([{ key: 'order-1', status_code: 201 }]);
  });

  test('without a key every POST creates, as before', async () => {
    const a = await t.tenant();
    expect((await post(a, undefined, body())).statusCode).toBe(201);
    expect((await post(a, undefined, body())).statusCode).toBe(201);
    expect(await tickets(a)).toHaveLength(2);
    expect(await storedKeys(a)).toEqual([]);
  });

  test('the same key with another body, or on another endpoint: 422 idempotency_key_reused, nothing changes', async () => {
    const a = await t.tenant();
    expect((await post(a, 'k', body())).statusCode).toBe(201);
    const other = await post(a, 'k', body({ subject: 'Something else' }));
    expect(other.statusCode).toBe(422);
    expect(other.json()).toEqual({ error: 'Idempotency-Key was already used with another request body', code: 'idempotency_key_reused' });
    const elsewhere = await post(a, 'k', { user_id: 'user-1', nominee_name: 'Asha', relationship: 'spouse', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210' }, '/nominee');
    expect(elsewhere.statusCode).toBe(422);
    expect(elsewhere.json().code).toBe('idempotency_key_reused');
    expect(await tickets(a)).toHaveLength(1);
  });

  test('while the first request runs, a repeat gets 409 idempotency_key_in_flight; afterwards the answer is replayed', async () => {
    const a = await t.tenant();
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const first = post(a, 'slow', body());
    // The first request is now held before its transaction opens.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await post(a, 'slow', body());
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ error: 'A request with this Idempotency-Key is still being processed: retry later', code: 'idempotency_key_in_flight' });
    gate = null;
    open();
    const done = await first;
    expect(done.statusCode).toBe(201);
    const third = await post(a, 'slow', body());
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(third.body).toBe(done.body);
    expect(await tickets(a)).toHaveLength(1);
  });

  test('concurrent repeats create exactly one ticket: the others are 409s or replays of it', async () => {
    const a = await t.tenant();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(a, 'burst', body())));
    const created = answers.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const r of answers) {
      if (r === created[0]) continue;
      if (r.statusCode === 409) expect(r.json().code).toBe('idempotency_key_in_flight');
      else expect([r.statusCode, r.headers['idempotent-replayed'], r.body]).toEqual([201, 'true', created[0]!.body]);
    }
    expect(await tickets(a)).toHaveLength(1);
  });

  test('two organizations with the same key never meet', async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const fromA = await post(a, 'shared-key', body());
    const fromB = await post(b, 'shared-key', body());
    expect([fromA.statusCode, fromB.statusCode]).toEqual([201, 201]);
    expect(fromB.headers['idempotent-replayed']).toBeUndefined();
    expect(fromB.json().id).not.toBe(fromA.json().id);
    expect(await tickets(a)).toHaveLength(1);
    expect(await tickets(b)).toHaveLength(1);
  });

  test('a key is kept 24 hours: after that the same key creates again; the purge deletes expired keys only', async () => {
    const a = await t.tenant();
    const first = await post(a, 'daily', body());
    t.clock.advance(24 * 60 * 60 * 1000 - 1);
    expect((await post(a, 'daily', body())).headers['idempotent-replayed']).toBe('true');
    t.clock.advance(1);
    const later = await post(a, 'daily', body());
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().id).not.toBe(first.json().id);
    expect((await post(a, 'daily', body())).body).toBe(later.body);
    expect(await tickets(a)).toHaveLength(2);

    await post(a, 'fresh', body({ client_user_id: 'user-2' }));
    t.clock.advance(24 * 60 * 60 * 1000);
    await post(a, 'newest', body({ client_user_id: 'user-3' }));
    const purged = await t.app.idempotencyPurge.runOnce();
    expect(purged).toBeGreaterThanOrEqual(2);
    expect((await storedKeys(a)).map((k) => k.key)).toEqual(['newest']);
  });

  test('a change that fails stores nothing: the same key then creates', async () => {
    const a = await t.tenant();
    failOnce = /insert into grievances/;
    const failed = await post(a, 'retry-me', body());
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toEqual({ error: 'Internal server error', code: 'internal' });
    expect(await storedKeys(a)).toEqual([]);
    expect(await tickets(a)).toHaveLength(0);

    const retried = await post(a, 'retry-me', body());
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await tickets(a)).toHaveLength(1);
  });

  test('an error answer (4xx) is not stored, and its audit entry and change roll back with it', async () => {
    const a = await t.tenant();
    const missing = await t.call({
      method: 'POST',
      url: '/consent/00000000-0000-7000-8000-000000000000/consent',
      org: a,
      key: a.key,
      body: { dp_id: 'dp-1', purposes: [] },
      headers: { 'idempotency-key': 'nope' },
    });
    expect(missing.statusCode).toBeGreaterThanOrEqual(400);
    expect(missing.statusCode).toBeLessThan(500);
    expect(await storedKeys(a)).toEqual([]);
  });

  test('the key must be 1-255 printable characters (400); the credentials are checked first (401)', async () => {
    const a = await t.tenant();
    for (const bad of ['', 'x'.repeat(256)]) {
      const res = await post(a, bad, body());
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', details: [{ field: 'Idempotency-Key' }] });
    }
    expect((await post(a, 'x'.repeat(255), body())).statusCode).toBe(201);
    expect((await post(a, 'with spaces and ~!@#', body({ client_user_id: 'u2' }))).statusCode).toBe(201);
    const wrongKey = await t.call({ method: 'POST', url: '/grievance', org: a, key: 'ask_live_' + 'x'.repeat(32), body: body(), headers: { 'idempotency-key': '' } });
    expect(wrongKey.statusCode).toBe(401);
  });

  test('every creating route takes it: a nominee, an asset and a collection point are replayed too', async () => {
    const a = await t.tenant();
    const cases: [string, unknown][] = [
      ['/nominee', { user_id: 'user-1', nominee_name: 'Asha', relationship: 'spouse', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210' }],
      ['/api/v1/assets', { name: 'Website', kind: 'website' }],
    ];
    for (const [url, payload] of cases) {
      const first = await post(a, `k-${url}`, payload, url);
      expect(first.statusCode, url).toBe(201);
      const again = await post(a, `k-${url}`, payload, url);
      expect([again.statusCode, again.headers['idempotent-replayed'], again.body]).toEqual([201, 'true', first.body]);
    }
  });
});

describe.runIf(storeKind() === 'postgres')('across processes (PostgreSQL)', () => {
  test('a request holding the key in another process makes a repeat here a 409', async () => {
    const a = await t.tenant();
    const other = postgres(t.store.url!, { max: 1, onnotice: () => {} });
    try {
      // What the first request's transaction takes, held here as another process would.
      await other.unsafe(`select pg_advisory_lock(hashtextextended($1::text || ':' || $2::text, 0))`, [a.id, 'elsewhere']);
      const blocked = await post(a, 'elsewhere', body());
      expect(blocked.statusCode).toBe(409);
      expect(blocked.json().code).toBe('idempotency_key_in_flight');
      await other.unsafe(`select pg_advisory_unlock(hashtextextended($1::text || ':' || $2::text, 0))`, [a.id, 'elsewhere']);
      expect((await post(a, 'elsewhere', body())).statusCode).toBe(201);
      expect(await tickets(a)).toHaveLength(1);
    } finally {
      await other.end();
    }
  });
});
