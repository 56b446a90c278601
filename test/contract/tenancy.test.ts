// The shared tenancy and auth-order suite (contract §1-§3), driven by one route table: every tenant
// endpoint is checked for host, credentials, key validity, scope, order against validation, and
// cross-tenant ids. A meta-test fails when a registered route is missing from the table.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

interface Fixture {
  org: TestOrg & { key: string };
  ticketId: string;
  nomineeId: string;
}

interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The route pattern as registered. */
  path: string;
  scope: 'grievances' | 'nominees';
  url(f: Fixture): string;
  body?: object;
  /** The URL names a record of the fixture's organization. */
  ownsRecord?: boolean;
}

const grievanceBody = { client_user_id: 'u-1', subject: 'Access my data', description: 'Please send a copy', category: 'data_access' };
const nomineeBody = {
  user_id: 'u-1',
  nominee_name: 'Asha Rao',
  nominee_email: 'asha@example.com',
  nominee_mobile: '+919876543210',
  relationship: 'spouse',
};

const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/grievance/user/:user_id', scope: 'grievances', url: () => '/grievance/user/u-1' },
  { method: 'POST', path: '/grievance', scope: 'grievances', url: () => '/grievance', body: grievanceBody },
  { method: 'PUT', path: '/grievance/:ticket_id', scope: 'grievances', url: (f) => `/grievance/${f.ticketId}`, body: { status: 'in_progress' }, ownsRecord: true },
  { method: 'GET', path: '/grievance/:ticket_id/history', scope: 'grievances', url: (f) => `/grievance/${f.ticketId}/history`, ownsRecord: true },
  { method: 'GET', path: '/nominee/user/:user_id', scope: 'nominees', url: () => '/nominee/user/u-1' },
  { method: 'POST', path: '/nominee', scope: 'nominees', url: () => '/nominee', body: nomineeBody },
  { method: 'PUT', path: '/nominee/:nominee_id', scope: 'nominees', url: (f) => `/nominee/${f.nomineeId}`, body: { status: 'verified' }, ownsRecord: true },
  { method: 'DELETE', path: '/nominee/:nominee_id', scope: 'nominees', url: (f) => `/nominee/${f.nomineeId}`, ownsRecord: true },
];

const KEY_REQUIRED = { error: 'API key required (X-API-Key header)' };
const INVALID_KEY = { error: 'Invalid API key' };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

async function fixture(): Promise<Fixture> {
  const org = await t.tenant(['admin']);
  const ticket = await t.call({ method: 'POST', url: '/grievance', org, key: org.key, body: grievanceBody });
  const nominee = await t.call({ method: 'POST', url: '/nominee', org, key: org.key, body: nomineeBody });
  expect(ticket.statusCode).toBe(201);
  expect(nominee.statusCode).toBe(201);
  return { org, ticketId: ticket.json().ticket_id, nomineeId: nominee.json().id };
}

test('meta: every registered tenant route is in the route table, and every table entry is registered', () => {
  const registered = t.app.routeAccess
    .filter((r) => r.access !== 'public')
    .map((r) => `${r.method} ${r.url}`)
    .sort();
  const table = ROUTES.map((r) => `${r.method} ${r.path}`).sort();
  expect(registered).toEqual(table);
});

test('meta: every tenant route declares the scope the table expects', () => {
  for (const r of ROUTES) {
    const entry = t.app.routeAccess.find((e) => e.method === r.method && e.url === r.path);
    expect(entry?.access).toMatchObject({ apiKey: r.scope });
  }
});

describe.each(ROUTES)('$method $path', (route) => {
  const send = (f: Fixture, opts: { host?: string; key?: string; headers?: Record<string, string>; body?: unknown }) =>
    t.call({
      method: route.method,
      url: route.url(f),
      org: opts.host ?? f.org.host,
      key: opts.key,
      headers: opts.headers,
      body: opts.body === undefined ? route.body : opts.body,
    });

  test('§2 no credentials: 401 API key required', async () => {
    const f = await fixture();
    const res = await send(f, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(KEY_REQUIRED);
  });

  test('§2 an empty X-API-Key counts as missing', async () => {
    const f = await fixture();
    const res = await send(f, { key: '' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(KEY_REQUIRED);
  });

  test('§2 a Bearer token on an API-key endpoint counts as no API key', async () => {
    const f = await fixture();
    const res = await send(f, { headers: { authorization: 'Bearer some-token' } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(KEY_REQUIRED);
  });

  test('§2 a key that matches nothing: 401 Invalid API key', async () => {
    const f = await fixture();
    for (const key of ['nope', 'ask_live_' + 'A'.repeat(32)]) {
      const res = await send(f, { key });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_KEY);
    }
  });

  test("§1 another organization's valid key on this host: 401 Invalid API key", async () => {
    const f = await fixture();
    const other = await t.tenant(['admin']);
    const res = await send(f, { key: other.key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID_KEY);
  });

  test('§1 an unknown organization host looks exactly like a wrong key', async () => {
    const f = await fixture();
    const withKey = await send(f, { host: 'no-such-org.localhost', key: f.org.key });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json()).toEqual(INVALID_KEY);
    const withoutKey = await send(f, { host: 'no-such-org.localhost' });
    expect(withoutKey.statusCode).toBe(401);
    expect(withoutKey.json()).toEqual(KEY_REQUIRED);
  });

  test('§3 the bare base domain behaves like an unknown organization', async () => {
    const f = await fixture();
    const withKey = await send(f, { host: 'localhost:3000', key: f.org.key });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json()).toEqual(INVALID_KEY);
    const withoutKey = await send(f, { host: 'localhost:3000' });
    expect(withoutKey.json()).toEqual(KEY_REQUIRED);
  });

  test('§2 a revoked key is refused at once, even when it was just used', async () => {
    const f = await fixture();
    const key = await t.key(f.org, [route.scope]);
    const warm = await t.call({ method: 'GET', url: `/${route.path.split('/')[1]}/user/u-1`, org: f.org, key });
    expect(warm.statusCode).toBe(200);
    const [meta] = (await t.app.services.accounts.listApiKeys(f.org.slug)).filter((k) => key.startsWith(k.prefix) && k.scopes[0] === route.scope);
    await t.app.services.accounts.revokeApiKey(f.org.slug, meta!.id);
    const res = await send(f, { key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID_KEY);
  });

  test('§2 a key without the scope: 403 naming the narrower scope', async () => {
    const f = await fixture();
    const key = await t.key(f.org, ['consent']);
    const res = await send(f, { key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: `API key lacks the required scope: ${route.scope}` });
  });

  test('§2 the endpoint scope alone is enough, and admin is enough', async () => {
    for (const scopes of [[route.scope], ['admin']]) {
      const f = await fixture();
      const key = await t.key(f.org, scopes);
      const res = await send(f, { key });
      expect(res.statusCode).toBeLessThan(300);
    }
  });

  if (route.body) {
    test('§2 order: a bad body with a bad key is 401, never 400', async () => {
      const f = await fixture();
      const res = await send(f, { key: 'wrong', body: '{not json', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_KEY);
      const unknownField = await send(f, { body: { nope: 1 } });
      expect(unknownField.statusCode).toBe(401);
      expect(unknownField.json()).toEqual(KEY_REQUIRED);
    });

    test('§2 order: a bad body with a key lacking the scope is 403, never 400', async () => {
      const f = await fixture();
      const key = await t.key(f.org, ['consent']);
      const res = await send(f, { key, body: { nope: 1 } });
      expect(res.statusCode).toBe(403);
    });

    test('§2 order: a bad body with a good key is 400', async () => {
      const f = await fixture();
      const res = await send(f, { key: f.org.key, body: { nope: 1 } });
      expect(res.statusCode).toBe(400);
      expect(res.json().details).toContainEqual({ field: 'nope', message: 'is not an accepted field' });
    });
  }

  if (route.ownsRecord) {
    test("§3 another organization's id: 404, and the record is untouched", async () => {
      const f = await fixture();
      const other = await t.tenant(['admin']);
      const res = await t.call({ method: route.method, url: route.url(f), org: other, key: other.key, body: route.body });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: route.scope === 'grievances' ? 'Grievance ticket not found' : 'Nominee not found' });
      // Still there, unchanged, for its owner.
      const list = await t.call({ method: 'GET', url: `/${route.path.split('/')[1]}/user/u-1`, org: f.org, key: f.org.key });
      const records = list.json<Array<{ status: string }>>();
      expect(records).toHaveLength(1);
      expect(records[0]!.status).toBe(route.scope === 'grievances' ? 'open' : 'pending');
    });
  }
});
