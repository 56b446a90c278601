// Addressing without subdomains (contract §9), over real HTTP with Node's own fetch to
// http://127.0.0.1:PORT: no Host header is set by the test (fetch sends `127.0.0.1:PORT`, which is the
// bare host). A key selects its own organization, a member's token selects with X-Org-Id, a data
// principal's token selects its own organization and reaches only that person; a key on another
// organization's subdomain stays 401. On both stores.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => t?.close());

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const grievance = (user: string) => ({ client_user_id: user, subject: 'Access my data', description: 'Please send a copy', category: 'data_access' });

let users = 0;
async function member(org: TestOrg, role: 'owner' | 'admin' | 'member'): Promise<{ token: string; userId: string }> {
  const email = `bare${++users}-${org.slug}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(org.id, user.id, role);
  const res = await call('POST', '/auth/login', {}, { email, password: 'a long enough password' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { token: res.body.access_token, userId: user.id };
}

describe('an API key on the bare host', () => {
  test('selects its own organization, and reaches only its records', async () => {
    const a: Tenant = await t.tenant(['admin']);
    const b: Tenant = await t.tenant(['admin']);
    const created = await call('POST', '/grievance', { 'x-api-key': a.key }, grievance('u-bare'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ticket = created.body.ticket_id as string;

    // Stored in a's organization: a's subdomain sees it (through inject: fetch cannot name *.localhost).
    const onHost = await t.call({ method: 'GET', url: '/grievance/user/u-bare', org: a, key: a.key });
    expect(onHost.json().map((g: { ticket_id: string }) => g.ticket_id)).toEqual([ticket]);

    expect((await call('GET', '/api/v1/organization', { 'x-api-key': a.key })).body).toMatchObject({ id: a.id, slug: a.slug, role: null });
    expect((await call('GET', '/api/v1/organization', { 'x-api-key': b.key })).body).toMatchObject({ id: b.id, slug: b.slug });

    // b's key on the bare host acts in b: a's records do not exist there.
    const theirs = await call('GET', '/grievance/user/u-bare', { 'x-api-key': b.key });
    expect([theirs.status, theirs.body]).toEqual([200, []]);
    const put = await call('PUT', `/grievance/${ticket}`, { 'x-api-key': b.key }, { status: 'resolved' });
    expect([put.status, put.body]).toEqual([404, { error: 'Grievance ticket not found', code: 'not_found' }]);
    const mine = await call('GET', `/grievance/${ticket}/history`, { 'x-api-key': a.key });
    expect(mine.status).toBe(200);
    expect(mine.body).toHaveLength(1);
  });

  test('an unknown or revoked key: 401 Invalid API key; no key: 401 API key required', async () => {
    const a = await t.tenant(['admin']);
    const spare = await t.app.services.accounts.createApiKey(a.slug, { scopes: ['admin'] });
    expect((await call('GET', '/api/v1/organization', { 'x-api-key': spare.key })).status).toBe(200);
    await t.app.services.accounts.revokeApiKey(a.slug, spare.id);
    for (const key of [spare.key, 'ask_live_' + 'A'.repeat(32), 'nope']) {
      const res = await call('GET', '/api/v1/organization', { 'x-api-key': key });
      expect([res.status, res.body]).toEqual([401, { error: 'Invalid API key', code: 'invalid_api_key' }]);
    }
    const none = await call('GET', '/grievance/user/u-1');
    expect([none.status, none.body]).toEqual([401, { error: 'API key required (X-API-Key header)', code: 'api_key_required' }]);
  });

  test("X-Org-Id, when sent with a key, must name the key's organization; the history's X-Org-Id likewise", async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    const same = await call('GET', '/api/v1/organization', { 'x-api-key': a.key, 'x-org-id': a.slug });
    expect(same.status).toBe(200);
    const other = await call('GET', '/api/v1/organization', { 'x-api-key': a.key, 'x-org-id': b.slug });
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('org_header_unresolved');
    const history = '/api/v1/external/public/consent-link/history?asset_id=none';
    const missing = await call('GET', history, { 'x-api-key': a.key });
    expect([missing.status, missing.body.code]).toEqual([400, 'org_header_missing']);
    const named = await call('GET', history, { 'x-api-key': a.key, 'x-org-id': a.slug });
    expect([401, 403, 400]).not.toContain(named.status);
  });

  test("a key sent to another organization's subdomain stays 401 invalid_api_key, with a hint that says where it works", async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    const res = await t.call({ method: 'GET', url: '/api/v1/organization', org: b, key: a.key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'Invalid API key', code: 'invalid_api_key' });
    expect(res.json().hint).toMatch(/another organization.*base host/);
    // An unknown subdomain too; a key that is nobody's gets no hint (the key is what to fix).
    const unknown = await t.call({ method: 'GET', url: '/api/v1/organization', org: 'no-such-org.localhost', key: a.key });
    expect([unknown.statusCode, unknown.json().code]).toEqual([401, 'invalid_api_key']);
    const nobodys = await t.call({ method: 'GET', url: '/api/v1/organization', org: b, key: 'ask_live_' + 'B'.repeat(32) });
    expect(nobodys.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  });
});

describe("a member's Bearer token on the bare host", () => {
  test('X-Org-Id selects the organization; missing, unknown and not-a-member are told apart', async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    const { token, userId } = await member(a, 'owner');
    // The same user is also an admin of b.
    await t.app.services.users.addMember(b.id, userId, 'admin');
    const auth = { authorization: `Bearer ${token}` };

    const inA = await call('GET', '/api/v1/organization', { ...auth, 'x-org-id': a.slug });
    expect(inA.status).toBe(200);
    expect(inA.body).toMatchObject({ id: a.id, role: 'owner' });
    const inB = await call('GET', '/api/v1/organization', { ...auth, 'x-org-id': b.slug });
    expect(inB.body).toMatchObject({ id: b.id, role: 'admin' });

    const missing = await call('GET', '/api/v1/organization', auth);
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('org_header_missing');
    expect(missing.body.error).toMatch(/missing.*Bearer token on the base host/);

    const unknown = await call('GET', '/api/v1/organization', { ...auth, 'x-org-id': 'no-such-org' });
    expect([unknown.status, unknown.body]).toEqual([400, { error: 'X-Org-Id could not be resolved: no organization has this slug', code: 'org_header_unresolved' }]);

    const c = await t.tenant(['admin']);
    const notMember = await call('GET', '/api/v1/organization', { ...auth, 'x-org-id': c.slug });
    expect([notMember.status, notMember.body]).toEqual([403, { error: 'User not a member of this tenant', code: 'not_a_member' }]);

    // Credentials come first: a bad token with a good X-Org-Id is 401, never 400 or 200.
    const bad = await call('GET', '/api/v1/organization', { authorization: 'Bearer nope', 'x-org-id': a.slug });
    expect([bad.status, bad.body.code]).toEqual([401, 'invalid_token']);
    // A write lands in the organization X-Org-Id names.
    const asset = await call('POST', '/api/v1/assets', { ...auth, 'x-org-id': b.slug }, { name: 'Web', kind: 'website' });
    expect(asset.status).toBe(201);
    const listed = await t.call({ method: 'GET', url: '/api/v1/assets', org: b, key: b.key });
    expect(listed.json().data.map((x: { id: string }) => x.id)).toContain(asset.body.id);
    const notInA = await t.call({ method: 'GET', url: `/api/v1/assets/${asset.body.id}`, org: a, key: a.key });
    expect(notInA.statusCode).toBe(404);
  });
});

describe("a data principal's token on the bare host", () => {
  test('selects its own organization and reaches only that person', async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    const mint = async (org: Tenant, dpId: string) => {
      const res = await call('POST', `/api/v1/data-principals/${dpId}/tokens`, { 'x-api-key': org.key }, {});
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.access_token as string;
    };
    // Tickets for two people of a, and one of b with the same dp_id as a's first.
    for (const [org, user] of [[a, 'dp-1'], [a, 'dp-2'], [b, 'dp-1']] as const) {
      expect((await call('POST', '/grievance', { 'x-api-key': org.key }, grievance(user))).status).toBe(201);
    }
    const token = await mint(a, 'dp-1');
    const me = await call('GET', '/api/v1/me', { authorization: `Bearer ${token}` });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body).toMatchObject({ dp_id: 'dp-1', organization: { slug: a.slug } });
    const tickets = await call('GET', '/api/v1/me/grievances', { authorization: `Bearer ${token}` });
    expect(tickets.status).toBe(200);
    const list = Array.isArray(tickets.body) ? tickets.body : tickets.body.data;
    expect(list).toHaveLength(1);
    const b1 = await call('GET', '/grievance/user/dp-1', { 'x-api-key': b.key });
    expect(list[0].ticket_id).not.toBe(b1.body[0].ticket_id);
    // Organization endpoints stay closed to it; a token that is nobody's is 401.
    const org = await call('GET', '/grievance/user/dp-1', { authorization: `Bearer ${token}` });
    expect([org.status, org.body.code]).toEqual([403, 'dp_token_forbidden']);
    const asOrg = await call('GET', '/api/v1/organization', { authorization: `Bearer ${token}` });
    expect([asOrg.status, asOrg.body.code]).toEqual([403, 'dp_token_forbidden']);
    const unknown = await call('GET', '/api/v1/me', { authorization: `Bearer dpt_${'A'.repeat(43)}` });
    expect([unknown.status, unknown.body.code]).toEqual([401, 'invalid_token']);
    // X-Org-Id naming another organization is refused, never followed.
    const named = await call('GET', '/api/v1/me', { authorization: `Bearer ${token}`, 'x-org-id': b.slug });
    expect([named.status, named.body.code]).toEqual([400, 'org_header_unresolved']);
    // Expired: refused on the bare host as on the organization's.
    t.clock.advance(3601_000);
    try {
      const late = await call('GET', '/api/v1/me', { authorization: `Bearer ${token}` });
      expect([late.status, late.body.code]).toEqual([401, 'invalid_token']);
    } finally {
      t.clock.advance(-3601_000);
    }
  });
});
