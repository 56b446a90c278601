// Grievance tickets (original spec §2.1, §3.1, §4.1, §7; contract §3, §4): one test per rule, through HTTP,
// checking the status, the whole body, and what was stored.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Detail = { field: string; message: string };
type Response = Awaited<ReturnType<TestApp['call']>>;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const CATEGORIES = ['data_access', 'rectification', 'erasure', 'consent_withdrawal', 'nomination', 'data_portability', 'objection', 'complaint', 'other'];
const STATUSES = ['open', 'in_progress', 'on_hold', 'resolved', 'rejected', 'closed'];
const TICKET_ID = /^GRV-[A-Z0-9]{8}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CATEGORY_MESSAGE = `must be one of: ${CATEGORIES.join(', ')}`;
const STATUS_MESSAGE = `must be one of: ${STATUSES.join(', ')}`;
const NUL_MESSAGE = 'must not contain the NUL character (\\u0000)';
const NOT_FOUND = { error: 'Grievance ticket not found', code: 'not_found' };

const tenant = () => t.tenant(['grievances']);
const now = () => t.clock.now().toISOString();

function validBody(overrides: Record<string, unknown> = {}) {
  return {
    client_user_id: 'user-1',
    subject: 'Copy of my data',
    description: 'Please send me a copy of all personal data you hold about me.',
    category: 'data_access',
    ...overrides,
  };
}

/** What POST answers for validBody(overrides) at the current clock time. */
function expectedTicket(overrides: Record<string, unknown> = {}) {
  const at = now();
  return {
    id: expect.stringMatching(UUID),
    ticket_id: expect.stringMatching(TICKET_ID),
    client_user_id: 'user-1',
    user_id: null,
    subject: 'Copy of my data',
    description: 'Please send me a copy of all personal data you hold about me.',
    category: 'data_access',
    status: 'open',
    attachment_url: null,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

// The clock fields tickets gained (due_at, days_left, overdue, paused, resolved_at: contract §10) are
// tested in grievance-clocks.test.ts; here every answer is compared on the seed's fields alone, which
// must not change. withoutClock drops the clock fields (and only those) from a ticket or a list.
const CLOCK_FIELDS = ['due_at', 'days_left', 'overdue', 'paused', 'resolved_at'];
function withoutClock(value: any): any {
  if (Array.isArray(value)) return value.map(withoutClock);
  if (value && typeof value === 'object' && 'ticket_id' in value) {
    for (const f of CLOCK_FIELDS) expect(value, `ticket answer lacks ${f}`).toHaveProperty(f);
    return Object.fromEntries(Object.entries(value).filter(([k]) => !CLOCK_FIELDS.includes(k)));
  }
  return value;
}
async function seedView(answer: Promise<Response>): Promise<Response> {
  const res = await answer;
  const json = res.json.bind(res);
  return Object.assign(res, { json: () => (res.statusCode < 300 ? withoutClock(json()) : json()) });
}

function post(a: Tenant, body: unknown) {
  return seedView(t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body }));
}

function put(a: Tenant, ticketId: string, body: unknown) {
  return seedView(t.call({ method: 'PUT', url: `/grievance/${ticketId}`, org: a, key: a.key, body }));
}

function list(a: Tenant, userId: string) {
  return seedView(t.call({ method: 'GET', url: `/grievance/user/${encodeURIComponent(userId)}`, org: a, key: a.key }));
}

function history(a: Tenant, ticketId: string) {
  return t.call({ method: 'GET', url: `/grievance/${ticketId}/history`, org: a, key: a.key });
}

async function create(a: Tenant, overrides: Record<string, unknown> = {}) {
  const res = await post(a, validBody(overrides));
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** Rows as the API would show them: timestamps as ISO strings. */
function plain(rows: Record<string, unknown>[]) {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
}

async function storedTickets(a: Tenant) {
  return plain(
    await t.db.system.query(
      `select id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at
         from grievances where org_id = $1 order by created_at, id`,
      [a.id],
    ),
  );
}

async function storedHistory(a: Tenant) {
  return plain(
    await t.db.system.query(
      `select g.ticket_id, h.status, h.previous_status, h.changed_at, h.actor_type, h.actor_id, h.note
         from grievance_status_changes h join grievances g on g.org_id = h.org_id and g.id = h.grievance_id
        where h.org_id = $1 order by h.changed_at, h.id`,
      [a.id],
    ),
  );
}

/** The id of the key whose plaintext is given (keys list their 12-character display prefix). */
async function keyIdOf(a: TestOrg, key: string): Promise<string> {
  const keys = await t.app.services.accounts.listApiKeys(a.slug);
  const match = keys.find((k) => key.startsWith(k.prefix));
  if (!match) throw new Error('key not found');
  return match.id;
}

const byField = (a: Detail, b: Detail) => `${a.field} ${a.message}`.localeCompare(`${b.field} ${b.message}`);

/** A 400 whose body is exactly {error, details} and whose details are exactly the given problems (any order). */
function expectInvalid(res: Response, expected: Detail[]) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect([...body.details].sort(byField)).toEqual([...expected].sort(byField));
  expect(body).toEqual({
    error: `Invalid request body: ${body.details.map((d: Detail) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed',
    details: body.details,
  });
}

async function expectNothingStored(a: Tenant) {
  expect(await storedTickets(a)).toEqual([]);
  expect(await storedHistory(a)).toEqual([]);
}

describe('POST /grievance', () => {
  test('201: the new ticket, whole, with a generated id and ticket_id, status open, user_id and attachment_url null', async () => {
    const a = await tenant();
    const at = now();
    const res = await post(a, validBody());
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(UUID),
      ticket_id: expect.stringMatching(TICKET_ID),
      client_user_id: 'user-1',
      user_id: null,
      subject: 'Copy of my data',
      description: 'Please send me a copy of all personal data you hold about me.',
      category: 'data_access',
      status: 'open',
      attachment_url: null,
      created_at: at,
      updated_at: at,
    });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('ticket_id is GRV- and 8 characters of A-Z0-9, a different one for each ticket', async () => {
    const a = await tenant();
    const ids = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const ticket = await create(a);
      expect(ticket.ticket_id).toMatch(TICKET_ID);
      ids.add(ticket.ticket_id);
    }
    expect(ids.size).toBe(10);
  });

  test('attachment_url, when given, is stored and returned', async () => {
    const a = await tenant();
    const expected = expectedTicket({ attachment_url: 'https://files.example.com/id-proof.pdf' });
    const res = await post(a, validBody({ attachment_url: 'https://files.example.com/id-proof.pdf' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('attachment_url: null on create means not set', async () => {
    const a = await tenant();
    const expected = expectedTicket({ attachment_url: null });
    const res = await post(a, validBody({ attachment_url: null }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('strings are trimmed before they are stored', async () => {
    const a = await tenant();
    const at = now();
    const res = await post(a, {
      client_user_id: '  user-7\t',
      subject: '\n Erase my account ',
      description: '  Delete everything.\n\nThanks.  ',
      category: ' erasure ',
      attachment_url: ' http://example.com/letter.pdf ',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(UUID),
      ticket_id: expect.stringMatching(TICKET_ID),
      client_user_id: 'user-7',
      user_id: null,
      subject: 'Erase my account',
      description: 'Delete everything.\n\nThanks.',
      category: 'erasure',
      status: 'open',
      attachment_url: 'http://example.com/letter.pdf',
      created_at: at,
      updated_at: at,
    });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('the maximum lengths are accepted, counted after trimming (client_user_id 255, subject 200, description 10000, attachment_url 2048)', async () => {
    const a = await tenant();
    const url = 'https://example.com/' + 'a'.repeat(2048 - 'https://example.com/'.length);
    const body = {
      client_user_id: `  ${'u'.repeat(255)}  `,
      subject: ` ${'s'.repeat(200)} `,
      description: `\n${'d'.repeat(10_000)}\n`,
      category: 'other',
      attachment_url: ` ${url} `,
    };
    const expected = expectedTicket({ client_user_id: 'u'.repeat(255), subject: 's'.repeat(200), description: 'd'.repeat(10_000), category: 'other', attachment_url: url });
    const res = await post(a, body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('lengths count characters, not UTF-16 code units: 200 emoji make a valid subject', async () => {
    const a = await tenant();
    const expected = expectedTicket({ subject: '😀'.repeat(200) });
    const res = await post(a, validBody({ subject: '😀'.repeat(200) }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expectInvalid(await post(a, validBody({ subject: '😀'.repeat(201) })), [{ field: 'subject', message: 'must be at most 200 characters' }]);
  });

  test.each(CATEGORIES)('category %s is accepted', async (category) => {
    const a = await tenant();
    const expected = expectedTicket({ category });
    const res = await post(a, validBody({ category }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  describe('validation: 400 with details listing every problem, and nothing stored', () => {
    test('missing required fields are each listed', async () => {
      const a = await tenant();
      expectInvalid(await post(a, {}), [
        { field: 'client_user_id', message: 'is required' },
        { field: 'subject', message: 'is required' },
        { field: 'description', message: 'is required' },
        { field: 'category', message: 'is required' },
      ]);
      await expectNothingStored(a);
    });

    test('strings that are empty after trimming are each listed', async () => {
      const a = await tenant();
      expectInvalid(await post(a, { client_user_id: '   ', subject: '', description: '\n\t ', category: 'erasure', attachment_url: '  ' }), [
        { field: 'client_user_id', message: 'must not be empty' },
        { field: 'subject', message: 'must not be empty' },
        { field: 'description', message: 'must not be empty' },
        { field: 'attachment_url', message: 'must not be empty' },
      ]);
      await expectNothingStored(a);
    });

    test('strings over their maximum length are each listed', async () => {
      const a = await tenant();
      const url = 'https://example.com/' + 'a'.repeat(2049 - 'https://example.com/'.length);
      expectInvalid(
        await post(a, { client_user_id: 'u'.repeat(256), subject: 's'.repeat(201), description: 'd'.repeat(10_001), category: 'other', attachment_url: url }),
        [
          { field: 'client_user_id', message: 'must be at most 255 characters' },
          { field: 'subject', message: 'must be at most 200 characters' },
          { field: 'description', message: 'must be at most 10000 characters' },
          { field: 'attachment_url', message: 'must be at most 2048 characters' },
        ],
      );
      await expectNothingStored(a);
    });

    test.each(['ftp://example.com/file.pdf', 'example.com/file.pdf', 'javascript:alert(1)', 'https://', 'http://exa mple.com', 'mailto:dpo@example.com', 'https://example.com/a\u0001b'])(
      'attachment_url must be an http(s) URL: %s is refused',
      async (url) => {
        const a = await tenant();
        expectInvalid(await post(a, validBody({ attachment_url: url })), [{ field: 'attachment_url', message: 'must be an http(s) URL' }]);
        await expectNothingStored(a);
      },
    );

    test('unknown fields are refused by name, status included (the service sets it)', async () => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ status: 'open', ticket_id: 'GRV-AAAAAAAA', user_id: randomUUID(), priority: 'high' })), [
        { field: 'status', message: 'is not an accepted field' },
        { field: 'ticket_id', message: 'is not an accepted field' },
        { field: 'user_id', message: 'is not an accepted field' },
        { field: 'priority', message: 'is not an accepted field' },
      ]);
      await expectNothingStored(a);
    });

    test('a value of the wrong type is listed once per field', async () => {
      const a = await tenant();
      expectInvalid(await post(a, { client_user_id: 42, subject: true, description: ['text'], category: 5, attachment_url: 7 }), [
        { field: 'client_user_id', message: 'must be a string' },
        { field: 'subject', message: 'must be a string' },
        { field: 'description', message: 'must be a string' },
        { field: 'category', message: 'must be a string' },
        { field: 'attachment_url', message: 'must be a string or null' },
      ]);
      await expectNothingStored(a);
    });

    test('null is not a value for a required field', async () => {
      const a = await tenant();
      expectInvalid(await post(a, { client_user_id: null, subject: null, description: null, category: null }), [
        { field: 'client_user_id', message: 'must be a string' },
        { field: 'subject', message: 'must be a string' },
        { field: 'description', message: 'must be a string' },
        { field: 'category', message: 'must be a string' },
      ]);
      await expectNothingStored(a);
    });

    test('a string holding the NUL character is refused (PostgreSQL text cannot store it)', async () => {
      const a = await tenant();
      expectInvalid(
        await post(a, { client_user_id: 'user\u0000', subject: 'a\u0000b', description: '\u0000', category: 'other', attachment_url: 'https://example.com/\u0000' }),
        [
          { field: 'client_user_id', message: NUL_MESSAGE },
          { field: 'subject', message: NUL_MESSAGE },
          { field: 'description', message: NUL_MESSAGE },
          { field: 'attachment_url', message: 'must be an http(s) URL' },
        ],
      );
      await expectNothingStored(a);
    });

    test.each(['DATA_ACCESS', 'deletion', ''])('a category outside the list (%j) is refused', async (category) => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ category })), [{ field: 'category', message: CATEGORY_MESSAGE }]);
      await expectNothingStored(a);
    });

    test('every problem of one body is listed together', async () => {
      const a = await tenant();
      expectInvalid(await post(a, { subject: 5, description: ' ', category: 'nope', attachment_url: 'ftp://x', status: 'closed' }), [
        { field: 'client_user_id', message: 'is required' },
        { field: 'status', message: 'is not an accepted field' },
        { field: 'subject', message: 'must be a string' },
        { field: 'description', message: 'must not be empty' },
        { field: 'category', message: CATEGORY_MESSAGE },
        { field: 'attachment_url', message: 'must be an http(s) URL' },
      ]);
      await expectNothingStored(a);
    });
  });

  describe('user_id mapping (contract §4)', () => {
    async function recordDataPrincipal(a: Tenant, dpId: string): Promise<string> {
      const id = randomUUID();
      await t.db.tenantTransaction(a.id, (tx) =>
        tx.query('insert into data_principals (org_id, id, dp_id, created_at) values ($1, $2, $3, $4)', [a.id, id, dpId, t.clock.now()]),
      );
      return id;
    }

    test('user_id is the internal id of the data principal with that client_user_id', async () => {
      const a = await tenant();
      const principalId = await recordDataPrincipal(a, 'dp-42');
      const expected = expectedTicket({ client_user_id: 'dp-42', user_id: principalId });
      const res = await post(a, validBody({ client_user_id: 'dp-42' }));
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual(expected);
      expect(await storedTickets(a)).toEqual([res.json()]);
    });

    test('user_id is null for a client_user_id with no data principal on record, even one known to another organization', async () => {
      const a = await tenant();
      const b = await tenant();
      await recordDataPrincipal(a, 'dp-1');
      await recordDataPrincipal(b, 'dp-2');
      expect((await create(a, { client_user_id: 'dp-2' })).user_id).toBeNull();
      expect((await create(a, { client_user_id: 'someone-else' })).user_id).toBeNull();
      expect((await storedTickets(a)).map((r) => r.user_id)).toEqual([null, null]);
    });

    test('older tickets are not back-filled when the data principal is recorded later', async () => {
      const a = await tenant();
      const before = await create(a, { client_user_id: 'dp-late' });
      const principalId = await recordDataPrincipal(a, 'dp-late');
      t.clock.advance(1000);
      const after = await create(a, { client_user_id: 'dp-late' });
      expect(before.user_id).toBeNull();
      expect(after.user_id).toBe(principalId);
      const res = await list(a, 'dp-late');
      expect(res.json()).toEqual([after, before]);
    });
  });
});

describe('GET /grievance/user/{user_id}', () => {
  test('200: the user\'s tickets, newest first by created_at', async () => {
    const a = await tenant();
    const first = await create(a, { subject: 'first' });
    t.clock.advance(60_000);
    const second = await create(a, { subject: 'second', category: 'erasure' });
    t.clock.advance(1);
    const third = await create(a, { subject: 'third', attachment_url: 'https://example.com/x' });
    const res = await list(a, 'user-1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([third, second, first]);
  });

  test('the list shows tickets as they are now, after updates', async () => {
    const a = await tenant();
    const ticket = await create(a);
    t.clock.advance(1000);
    const updated = (await put(a, ticket.ticket_id, { status: 'in_progress' })).json();
    expect((await list(a, 'user-1')).json()).toEqual([updated]);
  });

  test('200 with an empty array for a user with no tickets', async () => {
    const a = await tenant();
    await create(a, { client_user_id: 'someone' });
    const res = await list(a, 'nobody');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  test("only that user's tickets, and only this organization's", async () => {
    const a = await tenant();
    const b = await tenant();
    const mine = await create(a, { client_user_id: 'alice' });
    await create(a, { client_user_id: 'bob' });
    await create(a, { client_user_id: 'Alice' });
    await create(a, { client_user_id: 'alice2' });
    await create(b, { client_user_id: 'alice' });
    expect((await list(a, 'alice')).json()).toEqual([mine]);
  });

  test('a user id holding the NUL character: 400 with details (no such id can be stored)', async () => {
    const a = await tenant();
    const res = await list(a, 'a\u0000b');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: `Invalid request path: user_id ${NUL_MESSAGE}`, code: 'validation_failed',
      details: [{ field: 'user_id', message: NUL_MESSAGE }],
    });
  });

  test('a user id with reserved characters is matched exactly when percent-encoded in the path', async () => {
    const a = await tenant();
    const userId = 'mail:jo.doe+x@example.com/a b?c#d';
    const ticket = await create(a, { client_user_id: userId });
    const res = await list(a, userId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([ticket]);
  });
});

describe('PUT /grievance/{ticket_id}', () => {
  test('a status change: 200 with the whole ticket, updated_at at the time of the change, the rest kept', async () => {
    const a = await tenant();
    const ticket = await create(a, { attachment_url: 'https://example.com/a.pdf' });
    t.clock.advance(3_600_000);
    const at = now();
    const res = await put(a, ticket.ticket_id, { status: 'in_progress' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, status: 'in_progress', updated_at: at });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('an attachment_url change: stored and returned, status kept', async () => {
    const a = await tenant();
    const ticket = await create(a);
    t.clock.advance(5000);
    const at = now();
    const res = await put(a, ticket.ticket_id, { attachment_url: ' https://example.com/new.pdf ' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, attachment_url: 'https://example.com/new.pdf', updated_at: at });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('attachment_url: null clears it', async () => {
    const a = await tenant();
    const ticket = await create(a, { attachment_url: 'https://example.com/a.pdf' });
    t.clock.advance(5000);
    const res = await put(a, ticket.ticket_id, { attachment_url: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, attachment_url: null, updated_at: now() });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('both fields at once', async () => {
    const a = await tenant();
    const ticket = await create(a);
    t.clock.advance(5000);
    const res = await put(a, ticket.ticket_id, { status: 'resolved', attachment_url: 'http://example.com/answer.pdf' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, status: 'resolved', attachment_url: 'http://example.com/answer.pdf', updated_at: now() });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('omitted fields are not modified', async () => {
    const a = await tenant();
    const ticket = await create(a, { attachment_url: 'https://example.com/a.pdf' });
    t.clock.advance(1000);
    const statusOnly = await put(a, ticket.ticket_id, { status: 'on_hold' });
    expect(statusOnly.json()).toEqual({ ...ticket, status: 'on_hold', updated_at: now() });
    t.clock.advance(1000);
    const attachmentOnly = await put(a, ticket.ticket_id, { attachment_url: 'https://example.com/b.pdf' });
    expect(attachmentOnly.json()).toEqual({ ...ticket, status: 'on_hold', attachment_url: 'https://example.com/b.pdf', updated_at: now() });
    expect(await storedTickets(a)).toEqual([attachmentOnly.json()]);
  });

  test('updated_at changes even when the status is set to the one it already has', async () => {
    const a = await tenant();
    const ticket = await create(a);
    t.clock.advance(42_000);
    const res = await put(a, ticket.ticket_id, { status: 'open' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, updated_at: now() });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test.each(STATUSES)('status %s is accepted', async (status) => {
    const a = await tenant();
    const ticket = await create(a);
    t.clock.advance(1000);
    const res = await put(a, ticket.ticket_id, { status });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...ticket, status, updated_at: now() });
    expect(await storedTickets(a)).toEqual([res.json()]);
  });

  test('any status may move to any other', async () => {
    const a = await tenant();
    const ticket = await create(a);
    let current = 'open';
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        if (from === to) continue;
        if (current !== from) {
          expect((await put(a, ticket.ticket_id, { status: from })).statusCode).toBe(200);
        }
        const res = await put(a, ticket.ticket_id, { status: to });
        expect(res.statusCode, `${from} -> ${to}`).toBe(200);
        expect(res.json().status).toBe(to);
        current = to;
      }
    }
    expect((await storedTickets(a))[0]!.status).toBe(current);
  });

  describe('validation: 400 with every problem listed, and the ticket unchanged', () => {
    async function expectRefused(body: unknown, details: Detail[]) {
      const a = await tenant();
      const ticket = await create(a, { attachment_url: 'https://example.com/a.pdf' });
      t.clock.advance(1000);
      expectInvalid(await put(a, ticket.ticket_id, body), details);
      expect(await storedTickets(a)).toEqual([ticket]);
      expect(await storedHistory(a)).toHaveLength(1);
    }

    test('an empty body {} (no updatable field) is refused', () =>
      expectRefused({}, [{ field: 'body', message: 'must contain at least one of: status, attachment_url' }]));

    test('unknown fields are refused by name, even beside a valid one', () =>
      expectRefused({ status: 'resolved', subject: 'new', ticket_id: 'GRV-AAAAAAAA', note: 'x' }, [
        { field: 'subject', message: 'is not an accepted field' },
        { field: 'ticket_id', message: 'is not an accepted field' },
        { field: 'note', message: 'is not an accepted field' },
      ]));

    test.each(['done', 'OPEN', '', 'pending'])('an invalid status (%j) is refused', (status) =>
      expectRefused({ status }, [{ field: 'status', message: STATUS_MESSAGE }]));

    test('status null is refused: it is not nullable', () => expectRefused({ status: null }, [{ field: 'status', message: 'must be a string' }]));

    test('attachment_url of the wrong type, empty, too long, not http(s) or holding a control character is refused', async () => {
      await expectRefused({ attachment_url: 'https://example.com/\u0000' }, [{ field: 'attachment_url', message: 'must be an http(s) URL' }]);
      await expectRefused({ attachment_url: 12 }, [{ field: 'attachment_url', message: 'must be a string or null' }]);
      await expectRefused({ attachment_url: '   ' }, [{ field: 'attachment_url', message: 'must not be empty' }]);
      await expectRefused({ attachment_url: 'ftp://example.com/a' }, [{ field: 'attachment_url', message: 'must be an http(s) URL' }]);
      await expectRefused({ attachment_url: 'https://example.com/' + 'a'.repeat(2029) }, [
        { field: 'attachment_url', message: 'must be at most 2048 characters' },
      ]);
    });

    test('every problem of one body is listed together', () =>
      expectRefused({ status: 7, attachment_url: 'nope', priority: 1 }, [
        { field: 'priority', message: 'is not an accepted field' },
        { field: 'status', message: 'must be a string' },
        { field: 'attachment_url', message: 'must be an http(s) URL' },
      ]));

    test('validation comes before existence: an invalid body for an unknown ticket is a 400', async () => {
      const a = await tenant();
      expectInvalid(await put(a, 'GRV-ZZZZZZZZ', { status: 'bogus' }), [{ field: 'status', message: STATUS_MESSAGE }]);
    });
  });

  describe('404 {"error": "Grievance ticket not found"}', () => {
    test('an unknown ticket_id', async () => {
      const a = await tenant();
      await create(a);
      const res = await put(a, 'GRV-00000000', { status: 'resolved' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    });

    test('malformed ticket ids, the internal UUID among them, are ids that do not exist', async () => {
      const a = await tenant();
      const ticket = await create(a);
      for (const id of ['abc', ticket.id, randomUUID(), ticket.ticket_id.toLowerCase(), `${ticket.ticket_id}X`, ticket.ticket_id.slice(4)]) {
        const res = await put(a, encodeURIComponent(id), { status: 'resolved' });
        expect(res.statusCode, id).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      }
      expect(await storedTickets(a)).toEqual([ticket]);
    });

    test("another organization's ticket: 404, and it is left unchanged", async () => {
      const a = await tenant();
      const b = await tenant();
      const theirs = await create(b, { attachment_url: 'https://example.com/a.pdf' });
      t.clock.advance(1000);
      for (const body of [{ status: 'closed' }, { attachment_url: null }]) {
        const res = await put(a, theirs.ticket_id, body);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      }
      expect(await storedTickets(b)).toEqual([theirs]);
      expect(await storedHistory(b)).toHaveLength(1);
      expect(await storedTickets(a)).toEqual([]);
    });
  });
});

describe('GET /grievance/{ticket_id}/history', () => {
  test('creation adds the first entry: open, previous_status null, the creating key as actor, note null', async () => {
    const a = await tenant();
    const at = now();
    const ticket = await create(a);
    const res = await history(a, ticket.ticket_id);
    expect(res.statusCode).toBe(200);
    const keyId = await keyIdOf(a, a.key);
    expect(res.json()).toEqual([{ status: 'open', previous_status: null, changed_at: at, actor: { type: 'api_key', id: keyId }, note: null }]);
    expect(await storedHistory(a)).toEqual([
      { ticket_id: ticket.ticket_id, status: 'open', previous_status: null, changed_at: at, actor_type: 'api_key', actor_id: keyId, note: null },
    ]);
  });

  test('each status change is appended, oldest first, with previous_status, time and the key that made it', async () => {
    const a = await tenant();
    const otherKey = await t.key(a, ['admin']);
    const creator = await keyIdOf(a, a.key);
    const changer = await keyIdOf(a, otherKey);
    const created = now();
    const ticket = await create(a);
    t.clock.advance(60_000);
    const first = now();
    await put(a, ticket.ticket_id, { status: 'in_progress' });
    t.clock.advance(60_000);
    const second = now();
    await t.call({ method: 'PUT', url: `/grievance/${ticket.ticket_id}`, org: a, key: otherKey, body: { status: 'resolved' } });
    t.clock.advance(60_000);
    const third = now();
    await put(a, ticket.ticket_id, { status: 'in_progress' });

    const res = await history(a, ticket.ticket_id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { status: 'open', previous_status: null, changed_at: created, actor: { type: 'api_key', id: creator }, note: null },
      { status: 'in_progress', previous_status: 'open', changed_at: first, actor: { type: 'api_key', id: creator }, note: null },
      { status: 'resolved', previous_status: 'in_progress', changed_at: second, actor: { type: 'api_key', id: changer }, note: null },
      { status: 'in_progress', previous_status: 'resolved', changed_at: third, actor: { type: 'api_key', id: creator }, note: null },
    ]);
    expect((await storedHistory(a)).map((h) => [h.status, h.previous_status, h.changed_at, h.actor_id])).toEqual([
      ['open', null, created, creator],
      ['in_progress', 'open', first, creator],
      ['resolved', 'in_progress', second, changer],
      ['in_progress', 'resolved', third, creator],
    ]);
  });

  test('changes made within the same millisecond are still listed in the order they were made', async () => {
    const a = await tenant();
    const ticket = await create(a);
    for (const status of ['in_progress', 'on_hold', 'resolved', 'closed']) await put(a, ticket.ticket_id, { status });
    const res = await history(a, ticket.ticket_id);
    expect(res.json().map((h: { status: string; previous_status: string | null }) => [h.previous_status, h.status])).toEqual([
      [null, 'open'],
      ['open', 'in_progress'],
      ['in_progress', 'on_hold'],
      ['on_hold', 'resolved'],
      ['resolved', 'closed'],
    ]);
  });

  test('concurrent status changes each add one entry, oldest first, each following the one before it', async () => {
    const a = await tenant();
    const changes = ['in_progress', 'on_hold', 'resolved', 'rejected', 'closed'];
    for (let round = 0; round < 10; round++) {
      const ticket = await create(a, { client_user_id: `race-${round}` });
      const results = await Promise.all(changes.map((status) => put(a, ticket.ticket_id, { status })));
      expect(results.map((r) => r.statusCode)).toEqual(changes.map(() => 200));
      const entries: { status: string; previous_status: string | null; changed_at: string }[] = (await history(a, ticket.ticket_id)).json();
      expect(entries).toHaveLength(6);
      expect(entries[0]).toEqual(expect.objectContaining({ status: 'open', previous_status: null }));
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i]!.previous_status, `round ${round}, entry ${i}`).toBe(entries[i - 1]!.status);
        expect(entries[i]!.changed_at >= entries[i - 1]!.changed_at).toBe(true);
      }
      expect(entries.slice(1).map((e) => e.status).sort()).toEqual([...changes].sort());
      expect((await list(a, `race-${round}`)).json()[0].status).toBe(entries[5]!.status);
    }
  });

  test('a PUT that leaves the status as it was adds no entry', async () => {
    const a = await tenant();
    const ticket = await create(a);
    const before = (await history(a, ticket.ticket_id)).json();
    t.clock.advance(1000);
    expect((await put(a, ticket.ticket_id, { status: 'open' })).statusCode).toBe(200);
    expect((await put(a, ticket.ticket_id, { status: 'open', attachment_url: 'https://example.com/a' })).statusCode).toBe(200);
    expect((await history(a, ticket.ticket_id)).json()).toEqual(before);
    expect(await storedHistory(a)).toHaveLength(1);
  });

  test('an attachment-only PUT adds no entry', async () => {
    const a = await tenant();
    const ticket = await create(a);
    const before = (await history(a, ticket.ticket_id)).json();
    t.clock.advance(1000);
    expect((await put(a, ticket.ticket_id, { attachment_url: 'https://example.com/a' })).statusCode).toBe(200);
    expect((await put(a, ticket.ticket_id, { attachment_url: null })).statusCode).toBe(200);
    expect((await history(a, ticket.ticket_id)).json()).toEqual(before);
    expect(await storedHistory(a)).toHaveLength(1);
  });

  test('a refused or unknown-ticket PUT adds no entry', async () => {
    const a = await tenant();
    const ticket = await create(a);
    expect((await put(a, ticket.ticket_id, { status: 'bogus' })).statusCode).toBe(400);
    expect((await put(a, 'GRV-00000000', { status: 'closed' })).statusCode).toBe(404);
    expect(await storedHistory(a)).toHaveLength(1);
  });

  test('each ticket has its own history', async () => {
    const a = await tenant();
    const one = await create(a);
    const two = await create(a);
    await put(a, one.ticket_id, { status: 'closed' });
    const actor = { type: 'api_key', id: await keyIdOf(a, a.key) };
    expect((await history(a, two.ticket_id)).json()).toEqual([{ status: 'open', previous_status: null, changed_at: two.created_at, actor, note: null }]);
    expect((await history(a, one.ticket_id)).json()).toEqual([
      { status: 'open', previous_status: null, changed_at: one.created_at, actor, note: null },
      { status: 'closed', previous_status: 'open', changed_at: now(), actor, note: null },
    ]);
  });

  describe('404 {"error": "Grievance ticket not found"}', () => {
    test('an unknown or malformed ticket_id', async () => {
      const a = await tenant();
      const ticket = await create(a);
      for (const id of ['GRV-00000000', 'abc', ticket.id, ticket.ticket_id.toLowerCase()]) {
        const res = await history(a, id);
        expect(res.statusCode, id).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      }
    });

    test("another organization's ticket", async () => {
      const a = await tenant();
      const b = await tenant();
      const theirs = await create(b);
      const res = await history(a, theirs.ticket_id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    });
  });
});
