// Organization management (contract §2, the issue's rules): GET /api/v1/organization, API keys and
// members over HTTP, the role matrix of every management endpoint, the owner rules, and the audit
// entry each change appends.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg, UNLIMITED } from '../support/app.js';

type Role = 'owner' | 'admin' | 'member';
const PASSWORD = 'a long enough password';
const ROLE_TOO_LOW = { error: 'Your role does not allow this action', code: 'role_forbidden' };
const NOT_MEMBER = { error: 'User not a member of this tenant', code: 'not_a_member' };
const BEARER_ONLY = { error: 'This endpoint takes a Bearer token (Authorization: Bearer <token>), not an API key', code: 'bearer_token_required' };
const LAST_OWNER = { error: 'The last owner can be neither removed nor demoted: make another member owner first', code: 'conflict' };
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const newEmail = () => `org-${randomBytes(4).toString('hex')}@example.com`;

interface Person {
  id: string;
  email: string;
  token: string;
}

/** A new user with this role in the organization (none: a user of no organization), logged in. */
async function person(org: TestOrg | null, role?: Role): Promise<Person> {
  const email = newEmail();
  const user = await t.app.services.users.createUser({ email, password: PASSWORD });
  if (org && role) await t.app.services.users.addMember(org.id, user.id, role);
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: PASSWORD } });
  expect(res.statusCode).toBe(200);
  return { id: user.id, email, token: res.json().access_token };
}

const as = (p: Person) => ({ authorization: `Bearer ${p.token}` });

async function auditOf(org: TestOrg & { key: string }, action?: string): Promise<any[]> {
  const res = await t.call({ method: 'GET', url: `/api/v1/audit-log${action ? `?action=${action}` : ''}`, org, key: org.key });
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

describe('GET /api/v1/organization', () => {
  test('any member reads the organization and their own role; an admin key gets role null', async () => {
    const org = await t.tenant(['admin']);
    const [record] = await t.db.system.query<{ name: string }>('select name from organizations where id = $1', [org.id]);
    const expected = { id: org.id, slug: org.slug, name: record!.name, created_at: ISO, grievance_period_days: 30, api_rate_limit: Number(UNLIMITED.RATE_LIMIT_PER_KEY), api_rate_limit_default: true, allowed_origins: [] };
    // The test app raises the server's default (500) so that suites may send thousands of requests.
    for (const role of ['owner', 'admin', 'member'] as const) {
      const res = await t.call({ method: 'GET', url: '/api/v1/organization', org, headers: as(await person(org, role)) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...expected, role });
    }
    const byKey = await t.call({ method: 'GET', url: '/api/v1/organization', org, key: org.key });
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json()).toEqual({ ...expected, role: null });
  });
});

interface Cell {
  status: number;
  body?: unknown;
}
type Caller = 'owner' | 'admin' | 'member' | 'non-member' | 'admin key' | 'grievances key';
const ok = (status: number): Cell => ({ status });
const tooLow: Cell = { status: 403, body: ROLE_TOO_LOW };
const notMember: Cell = { status: 403, body: NOT_MEMBER };
const bearerOnly: Cell = { status: 401, body: BEARER_ONLY };
const noScope: Cell = { status: 403, body: { error: 'API key lacks the required scope: admin', code: 'missing_scope' } };

interface Endpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  name: string;
  /** The URL and body, made fresh for each caller (a key to revoke, a member to change). */
  prepare(org: TestOrg): Promise<{ url: string; body?: object }>;
  expected: Record<Caller, Cell>;
}

const keyRoute = (admin: Cell): Record<Caller, Cell> => ({
  owner: admin,
  admin,
  member: tooLow,
  'non-member': notMember,
  'admin key': admin,
  'grievances key': noScope,
});
const memberRoute = (admin: Cell): Record<Caller, Cell> => ({
  owner: admin,
  admin,
  member: tooLow,
  'non-member': notMember,
  'admin key': bearerOnly,
  'grievances key': bearerOnly,
});
const target = async (org: TestOrg) => (await person(org, 'member')).id;

const ENDPOINTS: Endpoint[] = [
  {
    method: 'GET',
    name: '/api/v1/organization',
    prepare: async () => ({ url: '/api/v1/organization' }),
    expected: { ...keyRoute(ok(200)), member: ok(200) },
  },
  { method: 'GET', name: '/api/v1/api-keys', prepare: async () => ({ url: '/api/v1/api-keys' }), expected: keyRoute(ok(200)) },
  {
    method: 'POST',
    name: '/api/v1/api-keys',
    prepare: async () => ({ url: '/api/v1/api-keys', body: { name: 'ci', scopes: ['grievances'] } }),
    expected: keyRoute(ok(201)),
  },
  {
    method: 'DELETE',
    name: '/api/v1/api-keys/:id',
    prepare: async (org) => ({ url: `/api/v1/api-keys/${(await t.app.services.accounts.createApiKey(org.slug, { name: 'old' })).id}` }),
    expected: keyRoute(ok(200)),
  },
  { method: 'GET', name: '/api/v1/members', prepare: async () => ({ url: '/api/v1/members' }), expected: memberRoute(ok(200)) },
  {
    method: 'POST',
    name: '/api/v1/members',
    prepare: async () => {
      const user = await t.app.services.users.createUser({ email: newEmail(), password: PASSWORD });
      return { url: '/api/v1/members', body: { email: user.email, role: 'member' } };
    },
    expected: memberRoute(ok(201)),
  },
  {
    method: 'PATCH',
    name: '/api/v1/members/:user_id',
    prepare: async (org) => ({ url: `/api/v1/members/${await target(org)}`, body: { role: 'admin' } }),
    expected: memberRoute(ok(200)),
  },
  { method: 'DELETE', name: '/api/v1/members/:user_id', prepare: async (org) => ({ url: `/api/v1/members/${await target(org)}` }), expected: memberRoute(ok(204)) },
];

describe.each(ENDPOINTS)('role matrix: $method $name', (endpoint) => {
  test.each(Object.entries(endpoint.expected) as [Caller, Cell][])('%s → %o', async (caller, cell) => {
    const org = await t.tenant(['admin']);
    const { url, body } = await endpoint.prepare(org);
    let auth: { key?: string; headers?: Record<string, string> };
    if (caller === 'admin key') auth = { key: await t.key(org, ['admin']) };
    else if (caller === 'grievances key') auth = { key: await t.key(org, ['grievances']) };
    else if (caller === 'non-member') auth = { headers: as(await person(await t.org(), 'owner')) };
    else auth = { headers: as(await person(org, caller)) };
    const res = await t.call({ method: endpoint.method, url, org, body, ...auth });
    expect(res.statusCode).toBe(cell.status);
    if (cell.body) expect(res.json()).toEqual(cell.body);
  });

  test('no credentials: 401 API key required', async () => {
    const org = await t.tenant(['admin']);
    const { url, body } = await endpoint.prepare(org);
    const res = await t.call({ method: endpoint.method, url, org, body });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'API key required (X-API-Key header)', code: 'api_key_required' });
  });
});

describe('API keys through the API', () => {
  test('create: 201 with the key shown once; the list never shows it; it is stored only as a hash', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const res = await t.call({ method: 'POST', url: '/api/v1/api-keys', org, headers: as(owner), body: { name: ' backend ', scopes: ['nominees', 'grievances', 'nominees'] } });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      key: expect.stringMatching(/^ask_live_[0-9A-Za-z]{32}$/),
      id: UUID,
      name: 'backend',
      prefix: created.key.slice(0, 12),
      scopes: ['nominees', 'grievances'],
      created_at: ISO,
      last_used_at: null,
      revoked_at: null,
    });
    const list = await t.call({ method: 'GET', url: '/api/v1/api-keys', org, headers: as(owner) });
    expect(list.statusCode).toBe(200);
    const { key, ...shown } = created;
    expect(list.json()).toContainEqual(shown);
    expect(list.body).not.toContain(key.slice(12));
    expect(list.json().every((k: object) => !('key' in k))).toBe(true);
    const [row] = await t.db.system.query<Record<string, unknown>>('select * from api_keys where org_id = $1 and id = $2', [org.id, created.id]);
    expect(row!.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key.slice(12));
    // It works at once, with exactly its scopes.
    expect((await t.call({ method: 'GET', url: '/nominee/user/u-1', org, key })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/v1/api-keys', org, key })).json()).toEqual({ error: 'API key lacks the required scope: admin', code: 'missing_scope' });
  });

  test('revoke: 200 with revoked_at; the key is refused at once, even just after use; revoking again changes nothing', async () => {
    const org = await t.tenant(['admin']);
    const admin = await person(org, 'admin');
    const created = (await t.call({ method: 'POST', url: '/api/v1/api-keys', org, headers: as(admin), body: { name: 'temp', scopes: ['grievances'] } })).json();
    expect((await t.call({ method: 'GET', url: '/grievance/user/u-1', org, key: created.key })).statusCode).toBe(200);
    t.clock.advance(1000);
    const res = await t.call({ method: 'DELETE', url: `/api/v1/api-keys/${created.id}`, org, headers: as(admin) });
    expect(res.statusCode).toBe(200);
    // last_used_at is written in batches (within 30 s): not compared here.
    expect({ ...res.json(), last_used_at: null }).toEqual({ ...created, key: undefined, revoked_at: t.clock.now().toISOString(), last_used_at: null });
    const refused = await t.call({ method: 'GET', url: '/grievance/user/u-1', org, key: created.key });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    t.clock.advance(1000);
    const again = await t.call({ method: 'DELETE', url: `/api/v1/api-keys/${created.id}`, org, headers: as(admin) });
    expect(again.statusCode).toBe(200);
    expect(again.json().revoked_at).toBe(res.json().revoked_at);
    expect(await auditOf(org, 'api_key.revoked')).toHaveLength(1);
  });

  test('an admin key may rotate: create a new key, then revoke itself', async () => {
    const org = await t.tenant(['admin']);
    const [own] = await t.app.services.accounts.listApiKeys(org.slug);
    const fresh = await t.call({ method: 'POST', url: '/api/v1/api-keys', org, key: org.key, body: { name: 'next', scopes: ['admin'] } });
    expect(fresh.statusCode).toBe(201);
    const revoked = await t.call({ method: 'DELETE', url: `/api/v1/api-keys/${own!.id}`, org, key: org.key });
    expect(revoked.statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/v1/api-keys', org, key: org.key })).statusCode).toBe(401);
    const list = await t.call({ method: 'GET', url: '/api/v1/api-keys', org, key: fresh.json().key });
    expect(list.json().map((k: { id: string; revoked_at: string | null }) => [k.id, k.revoked_at !== null])).toEqual([
      [own!.id, true],
      [fresh.json().id, false],
    ]);
  });

  test("unknown, malformed and another organization's key ids: 404 API key not found", async () => {
    const org = await t.tenant(['admin']);
    const other = await t.tenant(['admin']);
    const [theirs] = await t.app.services.accounts.listApiKeys(other.slug);
    for (const id of [theirs!.id, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'not-a-uuid']) {
      const res = await t.call({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, org, key: org.key });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'API key not found', code: 'not_found' });
    }
    expect((await t.app.services.accounts.listApiKeys(other.slug))[0]!.revoked_at).toBeNull();
    expect((await t.call({ method: 'GET', url: '/api/v1/api-keys', org, key: org.key })).json()).toHaveLength(1);
  });

  test('a bad body: 400 naming every problem, nothing stored', async () => {
    const org = await t.tenant(['admin']);
    for (const body of [{ name: '', scopes: ['root'] }, { scopes: [] }, { name: 'x', scopes: ['admin'], key: 'ask_live_mine' }]) {
      const res = await t.call({ method: 'POST', url: '/api/v1/api-keys', org, key: org.key, body });
      expect(res.statusCode).toBe(400);
      expect(res.json().details.length).toBeGreaterThan(0);
    }
    expect(await t.app.services.accounts.listApiKeys(org.slug)).toHaveLength(1);
  });
});

describe('members', () => {
  test('list: {data: [{user_id, email, role, created_at}], count, limit, offset} in the order they joined', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const admin = await person(org, 'admin');
    const member = await person(org, 'member');
    await person(await t.org(), 'owner'); // another organization's member is not listed
    const res = await t.call({ method: 'GET', url: '/api/v1/members', org, headers: as(admin) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [
        { user_id: owner.id, email: owner.email, role: 'owner', created_at: ISO },
        { user_id: admin.id, email: admin.email, role: 'admin', created_at: ISO },
        { user_id: member.id, email: member.email, role: 'member', created_at: ISO },
      ],
      count: 3,
      limit: 50,
      offset: 0,
    });
    const page = await t.call({ method: 'GET', url: '/api/v1/members?limit=1&offset=1', org, headers: as(owner) });
    expect(page.json()).toEqual({ data: [expect.objectContaining({ user_id: admin.id })], count: 3, limit: 1, offset: 1 });
    const past = await t.call({ method: 'GET', url: '/api/v1/members?offset=10', org, headers: as(owner) });
    expect(past.json()).toEqual({ data: [], count: 3, limit: 50, offset: 10 });
    expect((await t.call({ method: 'GET', url: '/api/v1/members?limit=0', org, headers: as(owner) })).statusCode).toBe(400);
  });

  test('add an existing user (email in any case): 201, and their token works here at once', async () => {
    const org = await t.tenant(['admin']);
    const admin = await person(org, 'admin');
    const newcomer = await person(null);
    const before = await t.call({ method: 'GET', url: '/api/v1/organization', org, headers: as(newcomer) });
    expect(before.json()).toEqual(NOT_MEMBER);
    const res = await t.call({ method: 'POST', url: '/api/v1/members', org, headers: as(admin), body: { email: ` ${newcomer.email.toUpperCase()} `, role: 'admin' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ user_id: newcomer.id, email: newcomer.email, role: 'admin', created_at: ISO });
    const after = await t.call({ method: 'GET', url: '/api/v1/organization', org, headers: as(newcomer) });
    expect(after.statusCode).toBe(200);
    expect(after.json().role).toBe('admin');
  });

  test('add with a password creates the user, who can then log in (the password as typed)', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const email = newEmail();
    const res = await t.call({ method: 'POST', url: '/api/v1/members', org, headers: as(owner), body: { email, role: 'member', password: ' spaced password ' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ user_id: UUID, email, role: 'member', created_at: ISO });
    expect((await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'spaced password' } })).statusCode).toBe(401);
    const login = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: ' spaced password ' } });
    expect(login.statusCode).toBe(200);
    const me = await t.call({ method: 'GET', url: '/api/v1/organization', org, headers: { authorization: `Bearer ${login.json().access_token}` } });
    expect(me.json().role).toBe('member');
  });

  test('an unknown email without a password: 404; already a member: 409; an existing user with a password: 409; a short password: 400', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const member = await person(org, 'member');
    const outsider = await person(null);
    const post = (body: object) => t.call({ method: 'POST', url: '/api/v1/members', org, headers: as(owner), body });
    const unknown = await post({ email: newEmail(), role: 'member' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'No user with this email: send a password to create one', code: 'not_found' });
    const already = await post({ email: member.email, role: 'admin' });
    expect(already.statusCode).toBe(409);
    expect(already.json()).toEqual({ error: 'This user is already a member of the organization', code: 'conflict' });
    const exists = await post({ email: outsider.email, role: 'member', password: 'another long password' });
    expect(exists.statusCode).toBe(409);
    expect(exists.json()).toEqual({ error: 'A user with this email already exists: add them without a password', code: 'conflict' });
    const short = await post({ email: newEmail(), role: 'member', password: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.json().details).toEqual([{ field: 'password', message: expect.any(String) }]);
    const bad = await post({ email: 'not-an-email', role: 'boss', extra: true });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'extra', 'role']);
    // The member's role is unchanged, and the outsider's password too.
    const list = (await t.call({ method: 'GET', url: '/api/v1/members', org, headers: as(owner) })).json();
    expect(list.count).toBe(2);
    expect(list.data.find((m: { user_id: string }) => m.user_id === member.id).role).toBe('member');
    expect((await t.call({ method: 'POST', url: '/auth/login', body: { email: outsider.email, password: PASSWORD } })).statusCode).toBe(200);
    expect(await auditOf(org, 'member.added')).toEqual([]);
  });

  test('a role change takes effect at once, both ways', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const member = await person(org, 'member');
    const keys = () => t.call({ method: 'GET', url: '/api/v1/api-keys', org, headers: as(member) });
    expect((await keys()).statusCode).toBe(403); // warm: the role is cached
    const promoted = await t.call({ method: 'PATCH', url: `/api/v1/members/${member.id}`, org, headers: as(owner), body: { role: 'admin' } });
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json()).toEqual({ user_id: member.id, email: member.email, role: 'admin', created_at: ISO });
    expect((await keys()).statusCode).toBe(200);
    const demoted = await t.call({ method: 'PATCH', url: `/api/v1/members/${member.id}`, org, headers: as(owner), body: { role: 'member' } });
    expect(demoted.json().role).toBe('member');
    expect((await keys()).json()).toEqual(ROLE_TOO_LOW);
  });

  test('removal: 204, the token is refused here at once; the user and their other memberships stay', async () => {
    const org = await t.tenant(['admin']);
    const elsewhere = await t.org();
    const owner = await person(org, 'owner');
    const admin = await person(org, 'admin');
    await t.app.services.users.addMember(elsewhere.id, admin.id, 'member');
    const read = (o: TestOrg) => t.call({ method: 'GET', url: '/api/v1/organization', org: o, headers: as(admin) });
    expect((await read(org)).statusCode).toBe(200);
    const res = await t.call({ method: 'DELETE', url: `/api/v1/members/${admin.id}`, org, headers: as(owner) });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await read(org)).json()).toEqual(NOT_MEMBER);
    expect((await read(elsewhere)).statusCode).toBe(200);
    const again = await t.call({ method: 'DELETE', url: `/api/v1/members/${admin.id}`, org, headers: as(owner) });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: 'Member not found', code: 'not_found' });
  });

  test("unknown, malformed and another organization's user ids: 404 Member not found", async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const theirs = await person(await t.org(), 'member');
    for (const id of [theirs.id, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'nope']) {
      for (const [method, body] of [['PATCH', { role: 'admin' }], ['DELETE', undefined]] as const) {
        const res = await t.call({ method, url: `/api/v1/members/${id}`, org, headers: as(owner), body });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: 'Member not found', code: 'not_found' });
      }
    }
  });

  test('the last owner can be neither removed nor demoted (409); with two owners, either can go', async () => {
    const org = await t.tenant(['admin']);
    const first = await person(org, 'owner');
    const patch = (by: Person, who: Person, role: Role) => t.call({ method: 'PATCH', url: `/api/v1/members/${who.id}`, org, headers: as(by), body: { role } });
    const remove = (by: Person, who: Person) => t.call({ method: 'DELETE', url: `/api/v1/members/${who.id}`, org, headers: as(by) });
    for (const res of [await patch(first, first, 'admin'), await patch(first, first, 'member'), await remove(first, first)]) {
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual(LAST_OWNER);
    }
    // Setting the role an owner already has is no change, and allowed.
    expect((await patch(first, first, 'owner')).statusCode).toBe(200);
    const second = await person(org, 'admin');
    expect((await patch(first, second, 'owner')).json().role).toBe('owner');
    expect((await patch(second, first, 'member')).statusCode).toBe(200);
    expect((await remove(second, second)).json()).toEqual(LAST_OWNER);
    expect((await patch(second, first, 'owner')).statusCode).toBe(200);
    expect((await remove(second, second)).statusCode).toBe(204);
    const members = await t.call({ method: 'GET', url: '/api/v1/members', org, headers: as(first) });
    expect(members.json().data.map((m: { user_id: string; role: string }) => [m.user_id, m.role])).toEqual([[first.id, 'owner']]);
    expect(await auditOf(org, 'member.removed')).toHaveLength(1);
  });

  test('two owners demoting each other at the same time leave one owner', async () => {
    const org = await t.tenant(['admin']);
    const a = await person(org, 'owner');
    const b = await person(org, 'owner');
    const results = await Promise.all([
      t.call({ method: 'PATCH', url: `/api/v1/members/${b.id}`, org, headers: as(a), body: { role: 'admin' } }),
      t.call({ method: 'PATCH', url: `/api/v1/members/${a.id}`, org, headers: as(b), body: { role: 'admin' } }),
    ]);
    const statuses = results.map((r) => r.statusCode).sort();
    // One wins; the other is refused, either as the last owner or because the winner just took its role away.
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const owners = await t.db.system.query('select user_id from memberships where org_id = $1 and role = $2', [org.id, 'owner']);
    expect(owners).toHaveLength(1);
  });

  test('admins cannot grant, change or take away the owner role (403); owners can', async () => {
    const org = await t.tenant(['admin']);
    const owner = await person(org, 'owner');
    const otherOwner = await person(org, 'owner');
    const admin = await person(org, 'admin');
    const member = await person(org, 'member');
    const outsider = await person(null);
    const attempts = (by: Person) => [
      () => t.call({ method: 'POST', url: '/api/v1/members', org, headers: as(by), body: { email: outsider.email, role: 'owner' } }),
      () => t.call({ method: 'PATCH', url: `/api/v1/members/${member.id}`, org, headers: as(by), body: { role: 'owner' } }),
      () => t.call({ method: 'PATCH', url: `/api/v1/members/${otherOwner.id}`, org, headers: as(by), body: { role: 'admin' } }),
      () => t.call({ method: 'DELETE', url: `/api/v1/members/${otherOwner.id}`, org, headers: as(by) }),
    ];
    for (const attempt of attempts(admin)) {
      const res = await attempt();
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual(ROLE_TOO_LOW);
    }
    expect(await auditOf(org)).toEqual([]);
    // Admins do manage admins and members, themselves included.
    expect((await t.call({ method: 'PATCH', url: `/api/v1/members/${member.id}`, org, headers: as(admin), body: { role: 'admin' } })).statusCode).toBe(200);
    expect((await t.call({ method: 'PATCH', url: `/api/v1/members/${member.id}`, org, headers: as(admin), body: { role: 'member' } })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/members/${member.id}`, org, headers: as(admin) })).statusCode).toBe(204);
    const statuses = [];
    for (const attempt of attempts(owner)) statuses.push((await attempt()).statusCode);
    expect(statuses).toEqual([201, 404, 200, 204]); // the member was removed above: 404
  });
});

describe('audit log', () => {
  test('every change appends one entry with ids and roles, never an email; refused changes append none', async () => {
    const org = await t.tenant(['admin']);
    const [ownKey] = await t.app.services.accounts.listApiKeys(org.slug);
    const owner = await person(org, 'owner');
    const outsider = await person(null);
    const call = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: object, auth: object = { headers: as(owner) }) =>
      t.call({ method, url, org, body, ...auth });

    const key = (await call('POST', '/api/v1/api-keys', { name: 'ci', scopes: ['consent'] }, { key: org.key })).json();
    await call('DELETE', `/api/v1/api-keys/${key.id}`);
    await call('POST', '/api/v1/members', { email: outsider.email, role: 'member' });
    const created = (await call('POST', '/api/v1/members', { email: newEmail(), role: 'admin', password: PASSWORD })).json();
    await call('PATCH', `/api/v1/members/${outsider.id}`, { role: 'admin' });
    await call('PATCH', `/api/v1/members/${outsider.id}`, { role: 'admin' }); // no change: no entry
    await call('DELETE', `/api/v1/members/${outsider.id}`);
    await call('DELETE', `/api/v1/members/${owner.id}`); // the last owner: refused, no entry

    const entries = await auditOf(org);
    const user = { type: 'user', id: owner.id };
    const entry = (actor: object, action: string, target: object, details: object) => ({
      id: UUID,
      at: ISO,
      actor,
      action,
      target,
      request_id: expect.any(String),
      details,
      // The hash chain (audit-chain.test.ts checks the hashes).
      seq: expect.any(Number),
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(entries.reverse()).toEqual([
      entry({ type: 'api_key', id: ownKey!.id }, 'api_key.created', { type: 'api_key', id: key.id }, { scopes: ['consent'] }),
      entry(user, 'api_key.revoked', { type: 'api_key', id: key.id }, {}),
      entry(user, 'member.added', { type: 'member', id: outsider.id }, { role: 'member', user_created: false }),
      entry(user, 'member.added', { type: 'member', id: created.user_id }, { role: 'admin', user_created: true }),
      entry(user, 'member.role_changed', { type: 'member', id: outsider.id }, { role: 'admin', previous_role: 'member' }),
      entry(user, 'member.removed', { type: 'member', id: outsider.id }, { previous_role: 'admin' }),
    ]);
    expect(JSON.stringify(entries)).not.toContain('@');
  });
});
