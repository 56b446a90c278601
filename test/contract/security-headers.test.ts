// Response headers and what an unauthenticated caller can learn (issue 21, item 12): every API answer
// (each route of the route table, successes and errors) is Cache-Control: no-store and nosniff; /docs has
// a Content-Security-Policy; on a real organization's host the history's X-Org-Id is checked before the
// credentials (contract §2, issue 30), while an unknown host answers 401.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { authHeaders, credentials, routes, urlFor, type Credentials } from '../support/routes.js';

let t: TestApp;
let c: Credentials;
beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_PER_KEY: '10000000', RATE_LIMIT_PER_ADDRESS: '10000000' } });
  c = await credentials(t);
});
afterAll(async () => t?.close());

test('every GET route of the table answers no-store and nosniff (with and without credentials)', async () => {
  const gets = routes(t).filter((r) => r.method === 'GET');
  expect(gets.length).toBeGreaterThan(20);
  for (const route of gets) {
    for (const headers of [authHeaders(route, c), {}]) {
      const res = await t.app.inject({ method: 'GET', url: urlFor(route), headers: { host: c.org.host, ...headers } });
      const label = `${route.url} -> ${res.statusCode}`;
      expect(res.statusCode, label).toBeLessThan(500);
      expect(res.headers['x-content-type-options'], label).toBe('nosniff');
      if (!/^application\/json/.test(String(res.headers['content-type']))) continue;
      // The organization's public signing keys are the one JSON answer meant to be cached: no personal
      // data, and verifiers fetch them often (a rotated key appears within 5 minutes).
      if (route.url === '/.well-known/jwks.json') expect(res.headers['cache-control'], label).toBe('public, max-age=300');
      else expect(res.headers['cache-control'], label).toBe('no-store');
    }
  }
});

test('/docs carries a Content-Security-Policy', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/docs/', headers: { host: 'localhost' } });
  expect(res.statusCode).toBe(200);
  expect(String(res.headers['content-security-policy'])).toMatch(/script-src/);
});

test("contract §2 (issue 30 item 3): on a real organization's host a missing or foreign X-Org-Id is a 400 before the credentials; an unknown host still answers 401", async () => {
  const withHeader = routes(t).filter((r) => r.access !== 'public' && r.access.orgHeader);
  expect(withHeader.length).toBeGreaterThan(0);
  for (const route of withHeader) {
    for (const creds of [{}, { 'x-api-key': 'ask_wrong' }, { authorization: 'Bearer asa_wrong' }]) {
      for (const orgId of [{ 'x-org-id': 'someone-else' }, {}]) {
        const ask = (host: string) => t.app.inject({ method: route.method as 'GET', url: urlFor(route, {}, 'asset_id=x'), headers: { host, ...orgId, ...creds } });
        const real = await ask(c.org.host);
        expect([real.statusCode, real.json().code], `${route.url} ${JSON.stringify({ ...orgId, ...creds })}`).toEqual([
          400,
          'x-org-id' in orgId ? 'org_header_unresolved' : 'org_header_missing',
        ]);
        const unknown = await ask(`no-such-org-${Date.now()}.${t.config.baseDomain}`);
        expect(unknown.statusCode, route.url).toBe(401);
      }
    }
  }
});
