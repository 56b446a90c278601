// CORS for the data principal's surfaces only (contract §9): the organization's allowed origins, set with
// PATCH /api/v1/organization {allowed_origins}, may call /api/v1/me..., the SDK surface and the code
// sign-in from a browser; organization endpoints never send a CORS header. On both stores.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const SHOP = 'https://shop.example.com';
const EVIL = 'https://evil.example.net';

async function allow(org: Tenant, origins: string[]) {
  const res = await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { allowed_origins: origins } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function dpToken(org: Tenant, dpId = 'dp-1'): Promise<string> {
  const res = await t.call({ method: 'POST', url: `/api/v1/data-principals/${dpId}/tokens`, org, key: org.key, body: {} });
  expect(res.statusCode).toBe(201);
  return res.json().access_token;
}

const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('allowed_origins on the organization', () => {
  test('set, normalised, shown, replaced; empty by default', async () => {
    const a = await t.tenant(['admin']);
    const before = await t.call({ method: 'GET', url: '/api/v1/organization', org: a, key: a.key });
    expect(before.json().allowed_origins).toEqual([]);
    const set = await allow(a, [SHOP, 'http://localhost:5173/', SHOP]);
    expect(set.allowed_origins).toEqual([SHOP, 'http://localhost:5173']);
    expect((await allow(a, [])).allowed_origins).toEqual([]);
  });

  test('anything but an http(s) origin is a 400 naming each bad entry; at most 20', async () => {
    const a = await t.tenant(['admin']);
    const bad = ['https://shop.example.com/path', 'ftp://shop.example.com', 'shop.example.com', 'https://user:pw@shop.example.com', 'https://shop.example.com?x=1', '*'];
    const res = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: a.key, body: { allowed_origins: [SHOP, ...bad] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    expect(res.json().details.map((d: { field: string }) => d.field)).toEqual(bad.map((_, i) => `allowed_origins.${i + 1}`));
    const many = Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`);
    const tooMany = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: a.key, body: { allowed_origins: many } });
    expect(tooMany.statusCode).toBe(400);
    // Nothing was stored.
    expect((await t.call({ method: 'GET', url: '/api/v1/organization', org: a, key: a.key })).json().allowed_origins).toEqual([]);
  });
});

describe('answers', () => {
  test("an allowed origin gets the CORS headers on the data principal's routes; another origin does not; Vary: Origin always", async () => {
    const a = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    const token = await dpToken(a);
    const ok = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: { authorization: `Bearer ${token}`, origin: SHOP } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(ok.headers['access-control-expose-headers'])).toContain('X-Request-Id');
    expect(String(ok.headers.vary)).toContain('Origin');
    const other = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: { authorization: `Bearer ${token}`, origin: EVIL } });
    expect(other.statusCode).toBe(200);
    expect(corsHeaders(other.headers)).toEqual([]);
    expect(String(other.headers.vary)).toContain('Origin');
    // Another organization's allowed origin is not this one's.
    const b = await t.tenant(['admin']);
    await allow(b, [EVIL]);
    const theirs = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: { authorization: `Bearer ${token}`, origin: EVIL } });
    expect(corsHeaders(theirs.headers)).toEqual([]);
    // An error the browser must be able to read (a wrong token on the organization's host) carries them too.
    const denied = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: { authorization: `Bearer dpt_${'A'.repeat(43)}`, origin: SHOP } });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe(SHOP);
  });

  test('on the bare host the credential decides: the token\'s organization must allow the origin', async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    await allow(b, [EVIL]);
    const token = await dpToken(a);
    const ok = await t.call({ method: 'GET', url: '/api/v1/me', org: 'localhost:3000', headers: { authorization: `Bearer ${token}`, origin: SHOP } });
    expect([ok.statusCode, ok.headers['access-control-allow-origin']]).toEqual([200, SHOP]);
    const notA = await t.call({ method: 'GET', url: '/api/v1/me', org: 'localhost:3000', headers: { authorization: `Bearer ${token}`, origin: EVIL } });
    expect(corsHeaders(notA.headers)).toEqual([]);
  });

  test('the code sign-in and the SDK surface answer allowed origins', async () => {
    const a = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    const otp = await t.call({ method: 'POST', url: '/rights/otp', org: a, headers: { origin: SHOP }, body: { phone: '+919800000000' } });
    expect([otp.statusCode, otp.headers['access-control-allow-origin']]).toEqual([202, SHOP]);
    const onBare = await t.call({ method: 'POST', url: '/rights/otp', org: 'localhost:3000', headers: { origin: SHOP, 'x-org-id': a.slug }, body: { phone: '+919800000001' } });
    expect([onBare.statusCode, onBare.headers['access-control-allow-origin']]).toEqual([202, SHOP]);
    const sdkKey = await t.key(a, ['sdk']);
    const sdk = await t.call({ method: 'GET', url: '/api/v1/internal/rights-center/settings/global', org: a, key: sdkKey, headers: { origin: SHOP } });
    expect(sdk.statusCode).toBeLessThan(300);
    expect(sdk.headers['access-control-allow-origin']).toBe(SHOP);
  });

  test('organization endpoints never send a CORS header, even to an allowed origin', async () => {
    const a = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    for (const url of ['/grievance/user/u-1', '/api/v1/organization', '/api/v1/api-keys', '/api/v1/data-principals/dp-1']) {
      const res = await t.call({ method: 'GET', url, org: a, key: a.key, headers: { origin: SHOP } });
      expect(res.statusCode, url).toBeLessThan(500);
      expect(corsHeaders(res.headers), url).toEqual([]);
      const preflight = await t.call({ method: 'OPTIONS', url, org: a, headers: { origin: SHOP, 'access-control-request-method': 'GET' } });
      expect(corsHeaders(preflight.headers), url).toEqual([]);
      expect(preflight.statusCode, url).toBe(405);
    }
  });
});

describe('preflight', () => {
  test('an allowed origin: 204 with the methods of that path, the request headers, Max-Age and Vary', async () => {
    const a = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    const res = await t.call({
      method: 'OPTIONS',
      url: '/api/v1/me/nominees',
      org: a,
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(String(res.headers['access-control-allow-methods']).split(', ')).toEqual(expect.arrayContaining(['GET', 'POST']));
    for (const h of ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-User-Id', 'X-Org-Id']) {
      expect(String(res.headers['access-control-allow-headers'])).toContain(h);
    }
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(String(res.headers.vary)).toContain('Origin');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  test('an unknown origin: 204 without any CORS header; on the bare host an origin some organization allows passes', async () => {
    const a = await t.tenant(['admin']);
    await allow(a, [SHOP]);
    const denied = await t.call({ method: 'OPTIONS', url: '/api/v1/me', org: a, headers: { origin: EVIL, 'access-control-request-method': 'GET' } });
    expect(denied.statusCode).toBe(204);
    expect(corsHeaders(denied.headers)).toEqual([]);
    const bare = await t.call({ method: 'OPTIONS', url: '/api/v1/me', org: 'localhost:3000', headers: { origin: SHOP, 'access-control-request-method': 'GET' } });
    expect([bare.statusCode, bare.headers['access-control-allow-origin']]).toEqual([204, SHOP]);
    const nobody = `https://nobody-${a.slug}.example.org`;
    const bareDenied = await t.call({ method: 'OPTIONS', url: '/api/v1/me', org: 'localhost:3000', headers: { origin: nobody, 'access-control-request-method': 'GET' } });
    expect(corsHeaders(bareDenied.headers)).toEqual([]);
  });

  test('a change of allowed_origins takes effect at once in this process', async () => {
    const a = await t.tenant(['admin']);
    const ask = () => t.call({ method: 'OPTIONS', url: '/api/v1/me', org: a, headers: { origin: SHOP, 'access-control-request-method': 'GET' } });
    expect((await ask()).headers['access-control-allow-origin']).toBeUndefined();
    await allow(a, [SHOP]);
    expect((await ask()).headers['access-control-allow-origin']).toBe(SHOP);
    await allow(a, []);
    expect((await ask()).headers['access-control-allow-origin']).toBeUndefined();
  });
});
