import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => t?.close());

test('smoke', async () => {
  const a = await t.tenant();
  const r = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'u1', subject: ' s ', description: 'd', category: 'erasure' } });
  console.log(r.statusCode, r.body, r.headers);
  const u = await t.call({ method: 'PUT', url: `/grievance/${r.json().ticket_id}`, org: a, key: a.key, body: { status: 'resolved', attachment_url: 'https://x.y/z' } });
  console.log(u.statusCode, u.body);
  const h = await t.call({ method: 'GET', url: `/grievance/${r.json().ticket_id}/history`, org: a, key: a.key });
  console.log(h.statusCode, h.body);
  const bad = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { subject: 5, status: 'x', category: 'nope', attachment_url: 'ftp://x' } });
  console.log(bad.statusCode, bad.body);
  const n = await t.call({ method: 'POST', url: '/nominee', org: a, key: a.key, body: { user_id: 'u1', nominee_name: 'N', nominee_email: 'A@B.com', nominee_mobile: '9876543210', relationship: 'spouse' } });
  console.log(n.statusCode, n.body);
  const nv = await t.call({ method: 'PUT', url: `/nominee/${n.json().id}`, org: a, key: a.key, body: { status: 'verified' } });
  console.log(nv.statusCode, nv.body);
  console.log((await t.call({ method: 'GET', url: '/openapi.json' })).body.slice(0, 300));
  console.log((await t.call({ method: 'GET', url: '/docs' })).statusCode);
  console.log((await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: '{bad', headers: {'content-type': 'application/json'} })).body);
  console.log((await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: 'x', headers: {'content-type': 'text/plain'} })).body);
  expect(r.statusCode).toBe(201);
});
