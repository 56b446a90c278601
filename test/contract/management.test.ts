// Organization management on the organization's host (contract §2 roles, §4 history notes): the
// organization-wide grievance and nominee lists, a ticket with its history, status changes with a note,
// nominee verification, and who may do what (members read; owners and admins change; keys by scope).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Role = 'owner' | 'admin' | 'member';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const STATUSES = ['open', 'in_progress', 'on_hold', 'resolved', 'rejected', 'closed'];
const CATEGORIES = ['data_access', 'rectification', 'erasure', 'consent_withdrawal', 'nomination', 'data_portability', 'objection', 'complaint', 'other'];
const ROLE_TOO_LOW = { error: 'Your role does not allow this action', code: 'role_forbidden' };
const NOT_MEMBER = { error: 'User not a member of this tenant', code: 'not_a_member' };
const TICKET_GONE = { error: 'Grievance ticket not found', code: 'not_found' };
const NOMINEE_GONE = { error: 'Nominee not found', code: 'not_found' };
const SECOND = 1000;

const now = () => t.clock.now().toISOString();

let users = 0;
/** A new user with this role in the organization, logged in: their id and access token. */
async function login(orgId: string, role: Role): Promise<{ id: string; token: string }> {
  const email = `mgmt${++users}-${orgId.slice(-8)}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(orgId, user.id, role);
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } });
  expect(res.statusCode).toBe(200);
  return { id: user.id, token: res.json().access_token };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A request with an organization's key (the default) or a user's token. */
function call(a: Tenant, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, opts: { token?: string; body?: unknown } = {}) {
  return t.call({ method, url, org: a, key: opts.token ? undefined : a.key, headers: opts.token ? bearer(opts.token) : {}, body: opts.body });
}

async function ticket(a: Tenant, overrides: Record<string, unknown> = {}) {
  const res = await call(a, 'POST', '/grievance', {
    body: { client_user_id: 'user-1', subject: 'Copy of my data', description: 'Please send a copy.', category: 'data_access', ...overrides },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function nominee(a: Tenant, overrides: Record<string, unknown> = {}) {
  const res = await call(a, 'POST', '/nominee', {
    body: { user_id: 'user-1', nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse', ...overrides },
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** Records created one second apart (so the newest is the last), oldest first. */
async function spaced<T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    t.clock.advance(SECOND);
    out.push(await make(i));
  }
  return out;
}

function expectQueryInvalid(res: Awaited<ReturnType<TestApp['call']>>, details: { field: string; message: string }[]) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ error: `Invalid request query: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details });
}

describe('GET /api/v1/grievances', () => {
  test('200 {data, count, limit, offset}: every ticket of the organization, whole, newest first', async () => {
    const a = await t.tenant(['grievances']);
    const tickets = await spaced(3, (i) => ticket(a, { client_user_id: `user-${i}` }));
    const res = await call(a, 'GET', '/api/v1/grievances');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [...tickets].reverse(), count: 3, limit: 50, offset: 0 });
  });

  test('tickets created at the same instant: id descending', async () => {
    const a = await t.tenant(['grievances']);
    const first = await ticket(a);
    const second = await ticket(a);
    expect(first.created_at).toBe(second.created_at);
    const ids = (await call(a, 'GET', '/api/v1/grievances')).json().data.map((g: { id: string }) => g.id);
    expect(ids).toEqual([first.id, second.id].sort().reverse());
  });

  test('no tickets: an empty page with count 0', async () => {
    const a = await t.tenant(['grievances']);
    expect((await call(a, 'GET', '/api/v1/grievances')).json()).toEqual({ data: [], count: 0, limit: 50, offset: 0 });
  });

  test('filters status, category and client_user_id, alone and together; count follows the filters', async () => {
    const a = await t.tenant(['grievances']);
    const [g1, g2, g3, g4] = await spaced(4, (i) =>
      ticket(a, { client_user_id: i % 2 === 0 ? 'alice' : 'bob', category: i < 2 ? 'erasure' : 'complaint' }),
    );
    await call(a, 'PUT', `/grievance/${g2.ticket_id}`, { body: { status: 'resolved' } });
    await call(a, 'PUT', `/grievance/${g3.ticket_id}`, { body: { status: 'resolved' } });
    const ids = async (query: string) => {
      const body = (await call(a, 'GET', `/api/v1/grievances?${query}`)).json();
      expect(body.count).toBe(body.data.length);
      return body.data.map((g: { ticket_id: string }) => g.ticket_id);
    };
    expect(await ids('status=resolved')).toEqual([g3.ticket_id, g2.ticket_id]);
    expect(await ids('status=open')).toEqual([g4.ticket_id, g1.ticket_id]);
    expect(await ids('category=erasure')).toEqual([g2.ticket_id, g1.ticket_id]);
    expect(await ids('client_user_id=alice')).toEqual([g3.ticket_id, g1.ticket_id]);
    expect(await ids('status=resolved&category=complaint&client_user_id=alice')).toEqual([g3.ticket_id]);
    expect(await ids('status=closed')).toEqual([]);
    expect(await ids('client_user_id=nobody')).toEqual([]);
  });

  test('from and to bound created_at inclusively; either alone works; from = to is one instant', async () => {
    const a = await t.tenant(['grievances']);
    const tickets = await spaced(4, () => ticket(a));
    const ids = async (query: string) => (await call(a, 'GET', `/api/v1/grievances?${query}`)).json().data.map((g: { ticket_id: string }) => g.ticket_id);
    const at = (i: number) => encodeURIComponent(tickets[i].created_at);
    const tid = (i: number) => tickets[i].ticket_id;
    expect(await ids(`from=${at(1)}&to=${at(2)}`)).toEqual([tid(2), tid(1)]);
    expect(await ids(`from=${at(2)}`)).toEqual([tid(3), tid(2)]);
    expect(await ids(`to=${at(1)}`)).toEqual([tid(1), tid(0)]);
    expect(await ids(`from=${at(3)}&to=${at(3)}`)).toEqual([tid(3)]);
    // An offset names the same instant: 09:30Z is 15:00+05:30.
    const inIndia = new Date(new Date(tickets[1].created_at).getTime() + 330 * 60_000).toISOString().replace('Z', '+05:30');
    expect(await ids(`from=${encodeURIComponent(inIndia)}&to=${at(1)}`)).toEqual([tid(1)]);
  });

  test('limit and offset page through; count is the whole filtered set; a page past the end is empty with the count', async () => {
    const a = await t.tenant(['grievances']);
    const tickets = (await spaced(5, () => ticket(a))).reverse();
    const page = async (query: string) => (await call(a, 'GET', `/api/v1/grievances?${query}`)).json();
    expect(await page('limit=2')).toEqual({ data: tickets.slice(0, 2), count: 5, limit: 2, offset: 0 });
    expect(await page('limit=2&offset=2')).toEqual({ data: tickets.slice(2, 4), count: 5, limit: 2, offset: 2 });
    expect(await page('limit=2&offset=4')).toEqual({ data: tickets.slice(4), count: 5, limit: 2, offset: 4 });
    expect(await page('limit=2&offset=10')).toEqual({ data: [], count: 5, limit: 2, offset: 10 });
    expect(await page('limit=200')).toEqual({ data: tickets, count: 5, limit: 200, offset: 0 });
  });

  test('400 for values out of bounds or not in the lists, every problem listed', async () => {
    const a = await t.tenant(['grievances']);
    const get = (query: string) => call(a, 'GET', `/api/v1/grievances?${query}`);
    expectQueryInvalid(await get('limit=0'), [{ field: 'limit', message: 'must be at least 1' }]);
    expectQueryInvalid(await get('limit=201'), [{ field: 'limit', message: 'must be at most 200' }]);
    expectQueryInvalid(await get('offset=-1'), [{ field: 'offset', message: 'must be at least 0' }]);
    expectQueryInvalid(await get('limit=ten'), [{ field: 'limit', message: 'must be an integer' }]);
    expectQueryInvalid(await get('status=done'), [{ field: 'status', message: `must be one of: ${STATUSES.join(', ')}` }]);
    expectQueryInvalid(await get('category=misc'), [{ field: 'category', message: `must be one of: ${CATEGORIES.join(', ')}` }]);
    expectQueryInvalid(await get('status=done&limit=0'), [
      { field: 'status', message: `must be one of: ${STATUSES.join(', ')}` },
      { field: 'limit', message: 'must be at least 1' },
    ]);
    expectQueryInvalid(await get(`client_user_id=${'x'.repeat(256)}`), [{ field: 'client_user_id', message: 'must be at most 255 characters' }]);
  });

  test('400 for from/to that are not ISO 8601 date-times with a zone, and for to before from', async () => {
    const a = await t.tenant(['grievances']);
    const get = (query: string) => call(a, 'GET', `/api/v1/grievances?${query}`);
    const TIMESTAMP = 'must be an ISO 8601 date-time with a time zone';
    expectQueryInvalid(await get('from=2026-11-22'), [{ field: 'from', message: TIMESTAMP }]);
    expectQueryInvalid(await get('to=2026-11-22T09:30:00'), [{ field: 'to', message: TIMESTAMP }]);
    expectQueryInvalid(await get('from=yesterday'), [{ field: 'from', message: TIMESTAMP }]);
    expectQueryInvalid(await get(`from=${encodeURIComponent('2026-11-22T10:00:00Z')}&to=${encodeURIComponent('2026-11-22T09:59:59.999Z')}`), [
      { field: 'to', message: 'must not be before from' },
    ]);
    // The same instant written in two zones is not "before".
    const ok = await get(`from=${encodeURIComponent('2026-11-22T10:00:00Z')}&to=${encodeURIComponent('2026-11-22T15:30:00+05:30')}`);
    expect(ok.statusCode).toBe(200);
  });

  test('sort created_at or updated_at, order desc (default) or asc; ties by id in the same direction', async () => {
    const a = await t.tenant(['grievances']);
    const [g1, g2, g3] = await spaced(3, () => ticket(a));
    // Updated later: g3, then g1; g2 keeps its creation time.
    t.clock.advance(SECOND);
    await call(a, 'PUT', `/grievance/${g3.ticket_id}`, { body: { status: 'in_progress' } });
    t.clock.advance(SECOND);
    await call(a, 'PUT', `/grievance/${g1.ticket_id}`, { body: { status: 'on_hold' } });
    const ids = async (query: string) => (await call(a, 'GET', `/api/v1/grievances?${query}`)).json().data.map((g: { ticket_id: string }) => g.ticket_id);
    expect(await ids('sort=created_at&order=asc')).toEqual([g1.ticket_id, g2.ticket_id, g3.ticket_id]);
    expect(await ids('order=asc')).toEqual([g1.ticket_id, g2.ticket_id, g3.ticket_id]);
    expect(await ids('sort=created_at')).toEqual([g3.ticket_id, g2.ticket_id, g1.ticket_id]);
    expect(await ids('sort=updated_at')).toEqual([g1.ticket_id, g3.ticket_id, g2.ticket_id]);
    expect(await ids('sort=updated_at&order=asc&limit=2')).toEqual([g2.ticket_id, g3.ticket_id]);
    expect(await ids('sort=updated_at&order=asc&status=open')).toEqual([g2.ticket_id]);
    const same = await Promise.all([ticket(a), ticket(a)]);
    const tie = (await ids('order=asc')).slice(-2);
    expect(tie).toEqual([...same].sort((x, y) => (x.id < y.id ? -1 : 1)).map((g) => g.ticket_id));
  });

  test('400 for a sort or order not in the lists', async () => {
    const a = await t.tenant(['grievances']);
    expectQueryInvalid(await call(a, 'GET', '/api/v1/grievances?sort=subject&order=up'), [
      { field: 'sort', message: 'must be one of: created_at, updated_at, due_at' },
      { field: 'order', message: 'must be one of: desc, asc' },
    ]);
  });

  test("another organization's tickets never appear", async () => {
    const a = await t.tenant(['grievances']);
    const b = await t.tenant(['grievances']);
    const mine = await ticket(a);
    await ticket(b);
    expect((await call(a, 'GET', '/api/v1/grievances')).json()).toEqual({ data: [mine], count: 1, limit: 50, offset: 0 });
  });
});

describe('GET /api/v1/grievances/summary', () => {
  const zeros = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, 0]));

  test('200: every status and category listed; open = open + in_progress + on_hold, by category', async () => {
    const a = await t.tenant(['grievances']);
    const make = (category: string) => ticket(a, { category });
    const [e1, e2, , c2, o1] = await Promise.all([make('erasure'), make('erasure'), make('erasure'), make('complaint'), make('other')]);
    const move = (g: { ticket_id: string }, status: string) => call(a, 'PUT', `/grievance/${g.ticket_id}`, { body: { status } });
    await move(e1, 'in_progress');
    await move(e2, 'resolved');
    await move(c2, 'on_hold');
    await move(o1, 'closed');
    const res = await call(a, 'GET', '/api/v1/grievances/summary');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      total: 5,
      open: 3,
      by_status: { ...zeros(STATUSES), open: 1, in_progress: 1, on_hold: 1, resolved: 1, closed: 1 },
      open_by_category: { ...zeros(CATEGORIES), erasure: 2, complaint: 1 },
      // The clock counts (grievance-clocks.test.ts tests them): nothing late, e1 and c2 open but not due this week.
      overdue: 0,
      due_this_week: 0,
      median_time_to_resolve_seconds: 0,
      grievance_period_days: 30,
    });
  });

  test('no tickets: zeros everywhere; another organization is not counted', async () => {
    const a = await t.tenant(['grievances']);
    const b = await t.tenant(['grievances']);
    await ticket(b);
    expect((await call(a, 'GET', '/api/v1/grievances/summary')).json()).toEqual({
      total: 0,
      open: 0,
      by_status: zeros(STATUSES),
      open_by_category: zeros(CATEGORIES),
      overdue: 0,
      due_this_week: 0,
      median_time_to_resolve_seconds: null,
      grievance_period_days: 30,
    });
  });
});

describe('GET /api/v1/grievances/:ticket_id', () => {
  test('200: the ticket, whole, with its history oldest first, notes included', async () => {
    const a = await t.tenant(['grievances']);
    const owner = await login(a.id, 'owner');
    const g = await ticket(a);
    t.clock.advance(SECOND);
    const putAt = now();
    await call(a, 'PUT', `/grievance/${g.ticket_id}`, { body: { status: 'in_progress' } });
    t.clock.advance(SECOND);
    const changed = await call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { token: owner.token, body: { status: 'resolved', note: 'Copy sent by post' } });
    expect(changed.statusCode).toBe(200);
    const res = await call(a, 'GET', `/api/v1/grievances/${g.ticket_id}`, { token: owner.token });
    expect(res.statusCode).toBe(200);
    const keyId = expect.stringMatching(UUID);
    expect(res.json()).toEqual({
      ...changed.json(),
      history: [
        { status: 'open', previous_status: null, changed_at: g.created_at, actor: { type: 'api_key', id: keyId }, note: null },
        { status: 'in_progress', previous_status: 'open', changed_at: putAt, actor: { type: 'api_key', id: keyId }, note: null },
        { status: 'resolved', previous_status: 'in_progress', changed_at: now(), actor: { type: 'user', id: owner.id }, note: 'Copy sent by post' },
      ],
    });
  });

  test('404 for an unknown, malformed or another organization\'s ticket_id', async () => {
    const a = await t.tenant(['grievances']);
    const b = await t.tenant(['grievances']);
    const theirs = await ticket(b);
    for (const id of ['GRV-ZZZZZZZZ', 'nope', theirs.ticket_id, theirs.id]) {
      const res = await call(a, 'GET', `/api/v1/grievances/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(TICKET_GONE);
    }
  });
});

describe('POST /api/v1/grievances/:ticket_id/status', () => {
  test('200: the updated ticket; the history entry carries the note and the user who made the change', async () => {
    const a = await t.tenant(['grievances']);
    const admin = await login(a.id, 'admin');
    const g = await ticket(a);
    t.clock.advance(SECOND);
    const res = await call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { token: admin.token, body: { status: 'on_hold', note: '  Waiting for ID proof  ' } });
    expect(res.statusCode).toBe(200);
    // on_hold pauses the ticket's clock, the note its reason (grievance-clocks.test.ts).
    expect(res.json()).toEqual({ ...g, status: 'on_hold', updated_at: now(), paused: [{ from: now(), to: null, reason: 'Waiting for ID proof' }] });
    const history = (await call(a, 'GET', `/grievance/${g.ticket_id}/history`)).json();
    expect(history.at(-1)).toEqual({ status: 'on_hold', previous_status: 'open', changed_at: now(), actor: { type: 'user', id: admin.id }, note: 'Waiting for ID proof' });
  });

  test('without a note the entry has note null; a grievances key may change status too', async () => {
    const a = await t.tenant(['grievances']);
    const g = await ticket(a);
    const res = await call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { body: { status: 'closed' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('closed');
    const history = (await call(a, 'GET', `/grievance/${g.ticket_id}/history`)).json();
    expect(history).toHaveLength(2);
    expect(history[1]).toMatchObject({ status: 'closed', previous_status: 'open', actor: { type: 'api_key' }, note: null });
  });

  test('409 when the ticket already has that status: nothing changes, no history entry', async () => {
    const a = await t.tenant(['grievances']);
    const g = await ticket(a);
    t.clock.advance(SECOND);
    const res = await call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { body: { status: 'open', note: 'Still open' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'The ticket is already open', code: 'conflict' });
    expect((await call(a, 'GET', `/api/v1/grievances/${g.ticket_id}`)).json()).toEqual({ ...g, history: [expect.objectContaining({ status: 'open' })] });
  });

  test('400: status required and from the list, note 1-2000 characters after trimming, unknown fields refused', async () => {
    const a = await t.tenant(['grievances']);
    const g = await ticket(a);
    const post = (body: unknown) => call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { body });
    const invalid = async (body: unknown, details: { field: string; message: string }[]) => {
      const res = await post(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: `Invalid request body: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details });
    };
    await invalid({}, [{ field: 'status', message: 'is required' }]);
    await invalid({ status: 'done' }, [{ field: 'status', message: `must be one of: ${STATUSES.join(', ')}` }]);
    await invalid({ status: 'closed', note: '   ' }, [{ field: 'note', message: 'must not be empty' }]);
    await invalid({ status: 'closed', note: 'x'.repeat(2001) }, [{ field: 'note', message: 'must be at most 2000 characters' }]);
    await invalid({ status: 'closed', note: null }, [{ field: 'note', message: 'must be a string' }]);
    await invalid({ status: 'closed', attachment_url: 'https://example.com/a.pdf' }, [{ field: 'attachment_url', message: 'is not an accepted field' }]);
    expect((await post({ status: 'closed', note: 'x'.repeat(2000) })).statusCode).toBe(200);
  });

  test('404 for an unknown, malformed or another organization\'s ticket; nothing changes', async () => {
    const a = await t.tenant(['grievances']);
    const b = await t.tenant(['grievances']);
    const theirs = await ticket(b);
    for (const id of ['GRV-ZZZZZZZZ', 'nope', theirs.ticket_id]) {
      const res = await call(a, 'POST', `/api/v1/grievances/${id}/status`, { body: { status: 'closed' } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(TICKET_GONE);
    }
    expect((await call(b, 'GET', `/api/v1/grievances/${theirs.ticket_id}`)).json().status).toBe('open');
  });
});

describe('GET /api/v1/nominees', () => {
  test('200 {data, count, limit, offset}: every nominee of the organization, whole, newest first', async () => {
    const a = await t.tenant(['nominees']);
    const nominees = await spaced(3, (i) => nominee(a, { user_id: `user-${i}` }));
    const res = await call(a, 'GET', '/api/v1/nominees');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [...nominees].reverse(), count: 3, limit: 50, offset: 0 });
  });

  test('filter by status; paging with count over the filtered set', async () => {
    const a = await t.tenant(['nominees']);
    const [n1, n2, n3, n4] = await spaced(4, () => nominee(a));
    await call(a, 'POST', `/api/v1/nominees/${n2.id}/verify`);
    await call(a, 'POST', `/api/v1/nominees/${n4.id}/verify`);
    await call(a, 'POST', `/api/v1/nominees/${n3.id}/reject`);
    const page = async (query: string) => (await call(a, 'GET', `/api/v1/nominees?${query}`)).json();
    const ids = (body: { data: { id: string }[] }) => body.data.map((n) => n.id);
    expect(ids(await page('status=verified'))).toEqual([n4.id, n2.id]);
    expect(ids(await page('status=rejected'))).toEqual([n3.id]);
    expect(ids(await page('status=pending'))).toEqual([n1.id]);
    const second = await page('limit=1&offset=1&status=verified');
    expect(second).toMatchObject({ count: 2, limit: 1, offset: 1 });
    expect(ids(second)).toEqual([n2.id]);
    expect(await page('offset=9')).toEqual({ data: [], count: 4, limit: 50, offset: 9 });
  });

  test('filter by relationship and client_user_id, alone and with status', async () => {
    const a = await t.tenant(['nominees']);
    const [n1, n2, n3] = await spaced(3, (i) => nominee(a, { user_id: i === 2 ? 'user-2' : 'user-1', relationship: i === 0 ? 'parent' : 'spouse' }));
    await call(a, 'POST', `/api/v1/nominees/${n2.id}/verify`);
    const ids = async (query: string) => {
      const body = (await call(a, 'GET', `/api/v1/nominees?${query}`)).json();
      expect(body.count).toBe(body.data.length);
      return body.data.map((n: { id: string }) => n.id);
    };
    expect(await ids('relationship=spouse')).toEqual([n3.id, n2.id]);
    expect(await ids('client_user_id=user-1')).toEqual([n2.id, n1.id]);
    expect(await ids('client_user_id=user-1&relationship=spouse&status=verified')).toEqual([n2.id]);
    expect(await ids('client_user_id=nobody')).toEqual([]);
    expectQueryInvalid(await call(a, 'GET', '/api/v1/nominees?relationship=friend'), [
      { field: 'relationship', message: 'must be one of: spouse, parent, child, sibling, legal_guardian, power_of_attorney, other' },
    ]);
  });

  test('400 for an unknown status or paging out of bounds', async () => {
    const a = await t.tenant(['nominees']);
    expectQueryInvalid(await call(a, 'GET', '/api/v1/nominees?status=done'), [{ field: 'status', message: 'must be one of: pending, verified, rejected' }]);
    expectQueryInvalid(await call(a, 'GET', '/api/v1/nominees?limit=201&offset=-1'), [
      { field: 'limit', message: 'must be at most 200' },
      { field: 'offset', message: 'must be at least 0' },
    ]);
  });
});

describe('POST /api/v1/nominees/:nominee_id/verify and /reject', () => {
  test('verify: status verified, verified_at now; again: verified_at kept; reject: verified_at null', async () => {
    const a = await t.tenant(['nominees']);
    const owner = await login(a.id, 'owner');
    const n = await nominee(a);
    t.clock.advance(SECOND);
    const verifiedAt = now();
    const verified = await call(a, 'POST', `/api/v1/nominees/${n.id}/verify`, { token: owner.token });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toEqual({ ...n, status: 'verified', verified_at: verifiedAt, updated_at: verifiedAt });
    t.clock.advance(SECOND);
    const again = await call(a, 'POST', `/api/v1/nominees/${n.id}/verify`, { token: owner.token });
    expect(again.json()).toEqual({ ...n, status: 'verified', verified_at: verifiedAt, updated_at: now() });
    t.clock.advance(SECOND);
    const rejected = await call(a, 'POST', `/api/v1/nominees/${n.id}/reject`, { token: owner.token });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toEqual({ ...n, status: 'rejected', verified_at: null, updated_at: now() });
    // What the nominee API reads back is the same.
    expect((await call(a, 'GET', '/nominee/user/user-1')).json()).toEqual([rejected.json()]);
  });

  test('404 for an unknown, malformed or another organization\'s nominee; nothing changes', async () => {
    const a = await t.tenant(['nominees']);
    const b = await t.tenant(['nominees']);
    const theirs = await nominee(b);
    for (const verb of ['verify', 'reject']) {
      for (const id of [randomUUID(), 'nope', theirs.id]) {
        const res = await call(a, 'POST', `/api/v1/nominees/${id}/${verb}`);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual(NOMINEE_GONE);
      }
    }
    expect((await call(b, 'GET', '/api/v1/nominees')).json().data).toEqual([theirs]);
  });
});

describe('roles: members read, owners and admins change', () => {
  async function setting() {
    const a = await t.tenant(['admin']);
    const g = await ticket(a);
    const n = await nominee(a);
    const asset = (await call(a, 'POST', '/api/v1/assets', { body: { name: 'Web', kind: 'website' } })).json();
    return { a, g, n, asset };
  }

  test.each(['owner', 'admin', 'member'] as const)('%s: 200 on every read', async (role) => {
    const { a, g, asset } = await setting();
    const { token } = await login(a.id, role);
    for (const url of ['/api/v1/grievances', `/api/v1/grievances/${g.ticket_id}`, '/api/v1/nominees', '/api/v1/assets', `/api/v1/assets/${asset.id}`, '/api/v1/collection-points']) {
      const res = await call(a, 'GET', url, { token });
      expect(res.statusCode, url).toBe(200);
    }
  });

  test.each(['owner', 'admin'] as const)('%s: may change a ticket status, verify and reject a nominee, edit an asset', async (role) => {
    const { a, g, n, asset } = await setting();
    const { token } = await login(a.id, role);
    expect((await call(a, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { token, body: { status: 'in_progress' } })).statusCode).toBe(200);
    expect((await call(a, 'POST', `/api/v1/nominees/${n.id}/verify`, { token })).statusCode).toBe(200);
    expect((await call(a, 'POST', `/api/v1/nominees/${n.id}/reject`, { token })).statusCode).toBe(200);
    expect((await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { token, body: { name: 'Website' } })).statusCode).toBe(200);
  });

  test('member: 403 Your role does not allow this action on every change, before validation; nothing changes', async () => {
    const { a, g, n, asset } = await setting();
    const { token } = await login(a.id, 'member');
    const changes: [('POST' | 'PATCH'), string, unknown][] = [
      ['POST', `/api/v1/grievances/${g.ticket_id}/status`, { status: 'closed', note: 'No' }],
      ['POST', `/api/v1/grievances/${g.ticket_id}/status`, { nope: 1 }],
      ['POST', `/api/v1/nominees/${n.id}/verify`, undefined],
      ['POST', `/api/v1/nominees/${n.id}/reject`, undefined],
      ['POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' }],
      ['PATCH', `/api/v1/assets/${asset.id}`, { status: 'inactive' }],
      ['POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'x', notice: 'y', purposes: [{ name: 'z' }] }],
    ];
    for (const [method, url, body] of changes) {
      const res = await call(a, method, url, { token, body });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toEqual(ROLE_TOO_LOW);
    }
    expect((await call(a, 'GET', `/api/v1/grievances/${g.ticket_id}`)).json().status).toBe('open');
    expect((await call(a, 'GET', '/api/v1/nominees')).json().data).toEqual([n]);
    expect((await call(a, 'GET', '/api/v1/assets')).json().data).toEqual([asset]);
  });

  test("a user of another organization: 403 User not a member of this tenant, reads and changes alike", async () => {
    const { a, g, n } = await setting();
    const other = await t.tenant();
    const { token } = await login(other.id, 'owner');
    for (const [method, url] of [
      ['GET', '/api/v1/grievances'],
      ['GET', `/api/v1/grievances/${g.ticket_id}`],
      ['GET', '/api/v1/nominees'],
      ['POST', `/api/v1/nominees/${n.id}/verify`],
    ] as const) {
      const res = await call(a, method, url, { token });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual(NOT_MEMBER);
    }
  });

  test('keys: the matching scope or admin; another scope is 403 naming the narrower one', async () => {
    const { a, g, n } = await setting();
    const consentKey = await t.key(a, ['consent']);
    const grievancesKey = await t.key(a, ['grievances']);
    const nomineesKey = await t.key(a, ['nominees']);
    const withKey = (key: string, method: 'GET' | 'POST', url: string, body?: unknown) => t.call({ method, url, org: a, key, body });
    expect((await withKey(grievancesKey, 'GET', '/api/v1/grievances')).statusCode).toBe(200);
    expect((await withKey(nomineesKey, 'GET', '/api/v1/nominees')).statusCode).toBe(200);
    expect((await withKey(nomineesKey, 'GET', '/api/v1/grievances')).json()).toEqual({ error: 'API key lacks the required scope: grievances', code: 'missing_scope' });
    expect((await withKey(grievancesKey, 'POST', `/api/v1/nominees/${n.id}/verify`)).json()).toEqual({ error: 'API key lacks the required scope: nominees', code: 'missing_scope' });
    expect((await withKey(consentKey, 'POST', `/api/v1/grievances/${g.ticket_id}/status`, { status: 'closed' })).json()).toEqual({
      error: 'API key lacks the required scope: grievances', code: 'missing_scope',
    });
    expect((await withKey(grievancesKey, 'GET', '/api/v1/assets')).json()).toEqual({ error: 'API key lacks the required scope: admin', code: 'missing_scope' });
  });
});
