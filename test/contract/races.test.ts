// Concurrent requests that meet the same record at once (issue 34): two first uses of a new data
// principal, a webhook's test event or an event of a change racing the endpoint's DELETE. On PostgreSQL
// the requests really run side by side (the store's pool holds 4 connections); on the embedded store
// they queue, and the answers must be the same. No answer may be a 500.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
});
afterAll(async () => t?.close());

const call = (a: Tenant, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => t.call({ method, url, org: a, key: a.key, body });
const ROUNDS = 20;

async function point(a: Tenant) {
  const asset = await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' });
  expect(asset.statusCode, asset.body).toBe(201);
  const res = await call(a, 'POST', '/api/v1/collection-points', {
    asset_id: asset.json().id,
    name: 'Sign-up',
    notice: 'Notice v1',
    purposes: [{ name: 'Account', required: true }],
  });
  expect(res.statusCode, res.body).toBe(201);
  const p = res.json<{ id: string; purposes: Array<{ id: string }> }>();
  return { id: p.id, purposes: p.purposes.map((x) => ({ id: x.id, granted: true })) };
}

async function principals(a: Tenant, dpId: string): Promise<number> {
  const rows = await t.db.system.query<{ n: number }>('select count(*)::int as n from data_principals where org_id = $1::uuid and dp_id = $2::text', [a.id, dpId]);
  return rows[0]!.n;
}

describe('two requests meeting a new data principal at once', () => {
  test('two first consents for the same new dp_id: both recorded, one person', async () => {
    const a = await t.tenant();
    const p = await point(a);
    for (let i = 0; i < ROUNDS; i++) {
      const dpId = `dp-consent-${i}`;
      const answers = await Promise.all([0, 1].map(() => call(a, 'POST', `/consent/${p.id}/consent`, { dp_id: dpId, purposes: p.purposes })));
      expect(answers.map((r) => r.statusCode), answers.map((r) => r.body).join('\n')).toEqual([201, 201]);
      expect(await principals(a, dpId)).toBe(1);
    }
  });

  test('two tokens minted at once for the same new dp_id: both minted, one person', async () => {
    const a = await t.tenant();
    for (let i = 0; i < ROUNDS; i++) {
      const dpId = `dp-token-${i}`;
      const answers = await Promise.all([0, 1].map(() => call(a, 'POST', `/api/v1/data-principals/${dpId}/tokens`, { ttl_seconds: 120 })));
      expect(answers.map((r) => r.statusCode), answers.map((r) => r.body).join('\n')).toEqual([201, 201]);
      expect(await principals(a, dpId)).toBe(1);
      const [one, two] = answers.map((r) => r.json<{ access_token: string }>().access_token);
      expect(one).not.toBe(two);
    }
  });

  test('a consent racing a token for the same new dp_id: both succeed, one person', async () => {
    const a = await t.tenant();
    const p = await point(a);
    for (let i = 0; i < ROUNDS; i++) {
      const dpId = `dp-mixed-${i}`;
      const answers = await Promise.all([
        call(a, 'POST', `/consent/${p.id}/consent`, { dp_id: dpId, purposes: p.purposes }),
        call(a, 'POST', `/api/v1/data-principals/${dpId}/tokens`, { ttl_seconds: 120 }),
      ]);
      expect(answers.map((r) => r.statusCode), answers.map((r) => r.body).join('\n')).toEqual([201, 201]);
      expect(await principals(a, dpId)).toBe(1);
    }
  });

  test('the first consent receipts of a new organization, signed at once: one signing key', async () => {
    for (let i = 0; i < 5; i++) {
      const a = await t.tenant();
      const p = await point(a);
      await t.db.system.query('delete from signing_keys where org_id = $1::uuid', [a.id]);
      const answers = await Promise.all([0, 1, 2].map((n) => call(a, 'POST', `/consent/${p.id}/consent`, { dp_id: `dp-key-${n}`, purposes: p.purposes })));
      expect(answers.map((r) => r.statusCode), answers.map((r) => r.body).join('\n')).toEqual([201, 201, 201]);
      const keys = await t.db.system.query('select kid from signing_keys where org_id = $1::uuid', [a.id]);
      expect(keys).toHaveLength(1);
    }
  });
});

describe('a webhook endpoint deleted while it is used', () => {
  async function endpoint(a: Tenant, events = ['grievance.created']) {
    const res = await call(a, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  }

  test('POST /webhooks/{id}/test racing DELETE: 202 or 404, never 500; no delivery outlives its endpoint', async () => {
    const a = await t.tenant();
    const seen = new Set<number>();
    for (let i = 0; i < ROUNDS; i++) {
      const id = await endpoint(a);
      const [first, second, del] = await Promise.all([
        call(a, 'POST', `/api/v1/webhooks/${id}/test`),
        call(a, 'POST', `/api/v1/webhooks/${id}/test`),
        call(a, 'DELETE', `/api/v1/webhooks/${id}`),
      ]);
      expect(del.statusCode, del.body).toBe(204);
      for (const r of [first, second]) {
        expect([202, 404], r.body).toContain(r.statusCode);
        seen.add(r.statusCode);
        if (r.statusCode === 404) expect(r.json()).toEqual({ error: 'Webhook endpoint not found', code: 'not_found' });
      }
    }
    const left = await t.db.system.query('select 1 from webhook_deliveries where org_id = $1::uuid', [a.id]);
    expect(left).toHaveLength(0);
    expect(seen.size).toBeGreaterThan(0);
  });

  test('changes whose events go to an endpoint being deleted: all 201, never 500', async () => {
    const a = await t.tenant();
    for (let i = 0; i < ROUNDS; i++) {
      const id = await endpoint(a);
      const answers = await Promise.all([
        call(a, 'POST', '/grievance', { client_user_id: `u-${i}-1`, subject: 'Copy', description: 'Please send a copy.', category: 'data_access' }),
        call(a, 'DELETE', `/api/v1/webhooks/${id}`),
        call(a, 'POST', '/grievance', { client_user_id: `u-${i}-2`, subject: 'Copy', description: 'Please send a copy.', category: 'data_access' }),
      ]);
      expect(answers.map((r) => r.statusCode), answers.map((r) => r.body).join('\n')).toEqual([201, 204, 201]);
    }
    const left = await t.db.system.query('select 1 from webhook_deliveries where org_id = $1::uuid', [a.id]);
    expect(left).toHaveLength(0);
  });
});
