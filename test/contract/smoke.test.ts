import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => { t = await buildTestApp(); });
afterAll(async () => t?.close());

test('smoke', async () => {
  const a = await t.tenant();
  const o = (await t.call({ method: 'GET', url: '/openapi.json' })).json();
  console.log(Object.keys(o.paths));
  console.log(JSON.stringify(o.paths['/grievance/{ticket_id}'].put.responses, null, 1).slice(0, 3000));
  const d = await t.call({ method: 'GET', url: '/docs' });
  console.log(d.statusCode, d.headers, d.body.slice(0, 300));
  const show = async (o: any) => { const r = await t.call({ org: a, key: a.key, ...o }); console.log(o.method, o.url, JSON.stringify(o.body)?.slice(0,100), '->', r.statusCode, r.body.slice(0, 600)); return r; };
  await show({ method: 'POST', url: '/grievance', body: { client_user_id: '  ', subject: '', description: 'x'.repeat(10001), category: 5, attachment_url: '   ' } });
  await show({ method: 'POST', url: '/grievance', body: {} });
  await show({ method: 'POST', url: '/grievance', body: [] });
  await show({ method: 'POST', url: '/grievance', body: 'null', headers: { 'content-type': 'application/json' } });
  await show({ method: 'POST', url: '/grievance', body: '', headers: { 'content-type': 'application/json' } });
  await show({ method: 'PUT', url: '/grievance/GRV-AAAAAAAA', body: {} });
  await show({ method: 'PUT', url: '/grievance/GRV-AAAAAAAA', body: { status: null } });
  await show({ method: 'POST', url: '/nominee', body: { user_id: 1, nominee_email: 'bad', nominee_mobile: '12345', relationship: 'x', purpose_of_appointment: '', status: 'verified' } });
  await show({ method: 'PUT', url: '/nominee/abc', body: {} });
  await show({ method: 'GET', url: '/nope' });
  await show({ method: 'POST', url: '/grievance', body: 'x'.repeat(300000), headers: { 'content-type': 'application/json' } });
  await show({ method: 'DELETE', url: '/nominee/abc' });
});
