// Nominees (original spec §2.2, §3.2, §4.2, §7; contract §3, §4): one test per rule, through HTTP,
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

const RELATIONSHIPS = ['spouse', 'parent', 'child', 'sibling', 'legal_guardian', 'power_of_attorney', 'other'];
const STATUSES = ['pending', 'verified', 'rejected'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RELATIONSHIP_MESSAGE = `must be one of: ${RELATIONSHIPS.join(', ')}`;
const STATUS_MESSAGE = `must be one of: ${STATUSES.join(', ')}`;
const MOBILE_MESSAGE = 'must be E.164 (+ then 8-15 digits) or a 10-digit national number';
const EMAIL_MESSAGE = 'must be a valid email address';
const NUL_MESSAGE = 'must not contain the NUL character (\\u0000)';
const NOT_FOUND = { error: 'Nominee not found', code: 'not_found' };

const tenant = () => t.tenant(['nominees']);
const now = () => t.clock.now().toISOString();

function validBody(overrides: Record<string, unknown> = {}) {
  return {
    user_id: 'dp-1',
    nominee_name: 'Asha Rao',
    nominee_email: 'asha.rao@example.com',
    nominee_mobile: '+919876543210',
    relationship: 'spouse',
    ...overrides,
  };
}

/** What POST answers for validBody(overrides) at the current clock time. */
function expectedNominee(overrides: Record<string, unknown> = {}) {
  const at = now();
  return {
    id: expect.stringMatching(UUID),
    client_user_id: 'dp-1',
    nominee_name: 'Asha Rao',
    nominee_email: 'asha.rao@example.com',
    nominee_mobile: '+919876543210',
    relationship: 'spouse',
    purpose_of_appointment: null,
    status: 'pending',
    verified_at: null,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

function post(a: Tenant, body: unknown, app: TestApp = t) {
  return app.call({ method: 'POST', url: '/nominee', org: a, key: a.key, body });
}

function put(a: Tenant, id: string, body: unknown) {
  return t.call({ method: 'PUT', url: `/nominee/${id}`, org: a, key: a.key, body });
}

function remove(a: Tenant, id: string) {
  return t.call({ method: 'DELETE', url: `/nominee/${id}`, org: a, key: a.key });
}

function list(a: Tenant, userId: string) {
  return t.call({ method: 'GET', url: `/nominee/user/${encodeURIComponent(userId)}`, org: a, key: a.key });
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

async function stored(a: Tenant, app: TestApp = t) {
  return plain(
    await app.db.system.query(
      `select id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment,
              status, verified_at, created_at, updated_at
         from nominees where org_id = $1 order by created_at, id`,
      [a.id],
    ),
  );
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

describe('POST /nominee', () => {
  test('201: the new nominee, whole, status pending and verified_at null; user_id stored as client_user_id', async () => {
    const a = await tenant();
    const expected = expectedNominee({ purpose_of_appointment: 'Acts for me if I am unable to' });
    const res = await post(a, validBody({ purpose_of_appointment: 'Acts for me if I am unable to' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await stored(a)).toEqual([res.json()]);
  });

  test('nominee_email is stored lower-cased', async () => {
    const a = await tenant();
    const expected = expectedNominee({ nominee_email: 'asha.rao@example.co.in' });
    const res = await post(a, validBody({ nominee_email: 'Asha.Rao@Example.CO.IN' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await stored(a)).toEqual([res.json()]);
  });

  test('strings are trimmed before they are stored', async () => {
    const a = await tenant();
    const expected = expectedNominee({ client_user_id: 'dp-9', nominee_name: 'Ravi Kumar', purpose_of_appointment: 'Medical decisions' });
    const res = await post(a, {
      user_id: ' dp-9 ',
      nominee_name: '\tRavi Kumar\n',
      nominee_email: '  asha.rao@example.com ',
      nominee_mobile: ' 9876543210 ',
      relationship: ' spouse ',
      purpose_of_appointment: '  Medical decisions  ',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await stored(a)).toEqual([res.json()]);
  });

  test.each([
    ['a bare 10-digit number gets +91', '9876543210', '+919876543210'],
    ['E.164 is kept (India)', '+919876543210', '+919876543210'],
    ['E.164 is kept (United States)', '+14155552671', '+14155552671'],
    ['E.164 with 8 digits (the fewest) is kept', '+12345678', '+12345678'],
    ['E.164 with 15 digits (the most) is kept', '+123456789012345', '+123456789012345'],
  ])('nominee_mobile: %s', async (_rule, given, storedAs) => {
    const a = await tenant();
    const expected = expectedNominee({ nominee_mobile: storedAs });
    const res = await post(a, validBody({ nominee_mobile: given }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await stored(a)).toEqual([res.json()]);
  });

  test('DEFAULT_COUNTRY_CODE changes the prefix a bare 10-digit number gets; E.164 is still kept', async () => {
    const us = await buildTestApp({ env: { DEFAULT_COUNTRY_CODE: '+1' } });
    try {
      const a = await us.tenant(['nominees']);
      const bare = await post(a, validBody({ nominee_mobile: '4155552671' }), us);
      expect(bare.statusCode).toBe(201);
      const at = us.clock.now().toISOString();
      expect(bare.json()).toEqual({ ...expectedNominee(), nominee_mobile: '+14155552671', created_at: at, updated_at: at });
      const e164 = await post(a, validBody({ nominee_mobile: '+919876543210' }), us);
      expect(e164.json()).toEqual({ ...expectedNominee(), created_at: at, updated_at: at });
      expect((await stored(a, us)).map((n) => n.nominee_mobile)).toEqual(['+14155552671', '+919876543210']);
    } finally {
      await us.close();
    }
  });

  test.each(['12345', '+12', '98765-43210', '98765abcde', 'phone', '+91 98765 43210', '(415) 555-2671', '987654321', '09876543210', '+1234567', '++919876543210', '+91-9876543210'])(
    'nominee_mobile %j (neither E.164 nor 10 digits) is refused',
    async (mobile) => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ nominee_mobile: mobile })), [{ field: 'nominee_mobile', message: MOBILE_MESSAGE }]);
      expect(await stored(a)).toEqual([]);
    },
  );

  test('nominee_mobile longer than E.164 allows is refused', async () => {
    const a = await tenant();
    expectInvalid(await post(a, validBody({ nominee_mobile: '+1234567890123456' })), [
      { field: 'nominee_mobile', message: 'must be at most 16 characters' },
      { field: 'nominee_mobile', message: MOBILE_MESSAGE },
    ]);
    expect(await stored(a)).toEqual([]);
  });

  test.each(['not-an-email', 'asha@', '@example.com', 'asha@example', 'asha rao@example.com', 'asha@@example.com', 'asha@exa mple.com'])(
    'nominee_email %j is refused',
    async (email) => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ nominee_email: email })), [{ field: 'nominee_email', message: EMAIL_MESSAGE }]);
      expect(await stored(a)).toEqual([]);
    },
  );

  test('nominee_email may be 254 characters, not 255', async () => {
    const a = await tenant();
    const longest = 'a'.repeat(242) + '@example.com';
    expect(longest).toHaveLength(254);
    const expected = expectedNominee({ nominee_email: longest });
    expect(await create(a, { nominee_email: longest.toUpperCase() })).toEqual(expected);
    expectInvalid(await post(a, validBody({ nominee_email: 'a' + longest })), [{ field: 'nominee_email', message: 'must be at most 254 characters' }]);
    expect(await stored(a)).toHaveLength(1);
  });

  test.each(RELATIONSHIPS)('relationship %s is accepted', async (relationship) => {
    const a = await tenant();
    const expected = expectedNominee({ relationship });
    const res = await post(a, validBody({ relationship }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expected);
    expect(await stored(a)).toEqual([res.json()]);
  });

  test.each(['friend', 'Spouse', ''])('relationship %j (not in the list) is refused', async (relationship) => {
    const a = await tenant();
    expectInvalid(await post(a, validBody({ relationship })), [{ field: 'relationship', message: RELATIONSHIP_MESSAGE }]);
    expect(await stored(a)).toEqual([]);
  });

  describe('purpose_of_appointment', () => {
    test('is optional: omitted, it is null', async () => {
      const a = await tenant();
      const expected = expectedNominee();
      const res = await post(a, validBody());
      expect(res.json()).toEqual(expected);
      expect((await stored(a))[0]!.purpose_of_appointment).toBeNull();
    });

    test('null means not set', async () => {
      const a = await tenant();
      const expected = expectedNominee();
      const res = await post(a, validBody({ purpose_of_appointment: null }));
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual(expected);
      expect((await stored(a))[0]!.purpose_of_appointment).toBeNull();
    });

    test('may be 1000 characters after trimming, not 1001', async () => {
      const a = await tenant();
      const expected = expectedNominee({ purpose_of_appointment: 'p'.repeat(1000) });
      expect(await create(a, { purpose_of_appointment: ` ${'p'.repeat(1000)} ` })).toEqual(expected);
      expectInvalid(await post(a, validBody({ purpose_of_appointment: 'p'.repeat(1001) })), [
        { field: 'purpose_of_appointment', message: 'must be at most 1000 characters' },
      ]);
      expect(await stored(a)).toHaveLength(1);
    });

    test('when given, must not be empty after trimming', async () => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ purpose_of_appointment: '   ' })), [{ field: 'purpose_of_appointment', message: 'must not be empty' }]);
      expect(await stored(a)).toEqual([]);
    });
  });

  describe('validation: 400 with details listing every problem, and nothing stored', () => {
    test('missing required fields are each listed', async () => {
      const a = await tenant();
      expectInvalid(await post(a, {}), [
        { field: 'user_id', message: 'is required' },
        { field: 'nominee_name', message: 'is required' },
        { field: 'nominee_email', message: 'is required' },
        { field: 'nominee_mobile', message: 'is required' },
        { field: 'relationship', message: 'is required' },
      ]);
      expect(await stored(a)).toEqual([]);
    });

    test('strings that are empty after trimming are each listed', async () => {
      const a = await tenant();
      expectInvalid(await post(a, { user_id: ' ', nominee_name: '', nominee_email: '  ', nominee_mobile: '\t', relationship: 'spouse' }), [
        { field: 'user_id', message: 'must not be empty' },
        { field: 'nominee_name', message: 'must not be empty' },
        { field: 'nominee_email', message: 'must not be empty' },
        { field: 'nominee_mobile', message: 'must not be empty' },
      ]);
      expect(await stored(a)).toEqual([]);
    });

    test('user_id and nominee_name may be 255 characters, not 256', async () => {
      const a = await tenant();
      const expected = expectedNominee({ client_user_id: 'u'.repeat(255), nominee_name: 'n'.repeat(255) });
      expect(await create(a, { user_id: 'u'.repeat(255), nominee_name: 'n'.repeat(255) })).toEqual(expected);
      expectInvalid(await post(a, validBody({ user_id: 'u'.repeat(256), nominee_name: 'n'.repeat(256) })), [
        { field: 'user_id', message: 'must be at most 255 characters' },
        { field: 'nominee_name', message: 'must be at most 255 characters' },
      ]);
      expect(await stored(a)).toHaveLength(1);
    });

    test('a string holding the NUL character is refused (PostgreSQL text cannot store it)', async () => {
      const a = await tenant();
      expectInvalid(
        await post(a, validBody({ user_id: 'dp\u0000', nominee_name: 'A\u0000', nominee_email: 'a\u0000@example.com', nominee_mobile: '98765\u000043210', purpose_of_appointment: '\u0000' })),
        [
          { field: 'user_id', message: NUL_MESSAGE },
          { field: 'nominee_name', message: NUL_MESSAGE },
          { field: 'nominee_email', message: EMAIL_MESSAGE },
          { field: 'nominee_mobile', message: MOBILE_MESSAGE },
          { field: 'purpose_of_appointment', message: NUL_MESSAGE },
        ],
      );
      expect(await stored(a)).toEqual([]);
    });

    test('unknown fields are refused by name: status, verified_at, and client_user_id (the body says user_id)', async () => {
      const a = await tenant();
      expectInvalid(await post(a, validBody({ status: 'verified', verified_at: '2026-01-01T00:00:00Z', client_user_id: 'dp-1', id: randomUUID() })), [
        { field: 'status', message: 'is not an accepted field' },
        { field: 'verified_at', message: 'is not an accepted field' },
        { field: 'client_user_id', message: 'is not an accepted field' },
        { field: 'id', message: 'is not an accepted field' },
      ]);
      expect(await stored(a)).toEqual([]);
    });

    test('a value of the wrong type is listed once per field', async () => {
      const a = await tenant();
      expectInvalid(
        await post(a, { user_id: 1, nominee_name: null, nominee_email: ['a@b.co'], nominee_mobile: 9876543210, relationship: 3, purpose_of_appointment: false }),
        [
          { field: 'user_id', message: 'must be a string' },
          { field: 'nominee_name', message: 'must be a string' },
          { field: 'nominee_email', message: 'must be a string' },
          { field: 'nominee_mobile', message: 'must be a string' },
          { field: 'relationship', message: 'must be a string' },
          { field: 'purpose_of_appointment', message: 'must be a string or null' },
        ],
      );
      expect(await stored(a)).toEqual([]);
    });

    test('every problem of one body is listed together', async () => {
      const a = await tenant();
      expectInvalid(
        await post(a, { user_id: 1, nominee_email: 'bad', nominee_mobile: '12345', relationship: 'x', purpose_of_appointment: '', status: 'verified' }),
        [
          { field: 'nominee_name', message: 'is required' },
          { field: 'status', message: 'is not an accepted field' },
          { field: 'user_id', message: 'must be a string' },
          { field: 'nominee_email', message: EMAIL_MESSAGE },
          { field: 'nominee_mobile', message: MOBILE_MESSAGE },
          { field: 'relationship', message: RELATIONSHIP_MESSAGE },
          { field: 'purpose_of_appointment', message: 'must not be empty' },
        ],
      );
      expect(await stored(a)).toEqual([]);
    });
  });
});

describe('GET /nominee/user/{user_id}', () => {
  test("200: the data principal's nominees, newest first by created_at", async () => {
    const a = await tenant();
    const first = await create(a, { nominee_name: 'First' });
    t.clock.advance(60_000);
    const second = await create(a, { nominee_name: 'Second', relationship: 'parent' });
    t.clock.advance(1);
    const third = await create(a, { nominee_name: 'Third', purpose_of_appointment: 'Finance' });
    const res = await list(a, 'dp-1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([third, second, first]);
  });

  test('200 with an empty array when the data principal has none', async () => {
    const a = await tenant();
    await create(a, { user_id: 'someone' });
    const res = await list(a, 'nobody');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
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

  test("only that data principal's nominees, and only this organization's", async () => {
    const a = await tenant();
    const b = await tenant();
    const mine = await create(a, { user_id: 'alice' });
    await create(a, { user_id: 'bob' });
    await create(a, { user_id: 'ALICE' });
    await create(b, { user_id: 'alice' });
    expect((await list(a, 'alice')).json()).toEqual([mine]);
  });
});

describe('PUT /nominee/{nominee_id}', () => {
  test.each([
    ['nominee_name', { nominee_name: '  Meera Iyer ' }, { nominee_name: 'Meera Iyer' }],
    ['nominee_email (lower-cased)', { nominee_email: 'Meera@Example.ORG' }, { nominee_email: 'meera@example.org' }],
    ['nominee_mobile (a bare 10-digit number gets +91)', { nominee_mobile: '9123456780' }, { nominee_mobile: '+919123456780' }],
    ['nominee_mobile (E.164 kept)', { nominee_mobile: '+447911123456' }, { nominee_mobile: '+447911123456' }],
    ['relationship', { relationship: 'power_of_attorney' }, { relationship: 'power_of_attorney' }],
    ['purpose_of_appointment', { purpose_of_appointment: 'Insurance claims' }, { purpose_of_appointment: 'Insurance claims' }],
    ['status rejected', { status: 'rejected' }, { status: 'rejected' }],
    ['status pending', { status: 'pending' }, { status: 'pending' }],
  ])('%s: 200 with the whole nominee, that field changed, updated_at at the time of the change', async (_field, body, changed) => {
    const a = await tenant();
    const nominee = await create(a);
    t.clock.advance(3_600_000);
    const res = await put(a, nominee.id, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...nominee, ...changed, updated_at: now() });
    expect(await stored(a)).toEqual([res.json()]);
  });

  test('several fields at once; omitted fields are not modified', async () => {
    const a = await tenant();
    const nominee = await create(a, { purpose_of_appointment: 'Banking' });
    t.clock.advance(1000);
    const res = await put(a, nominee.id, { nominee_name: 'New Name', relationship: 'child' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...nominee, nominee_name: 'New Name', relationship: 'child', updated_at: now() });
    expect(await stored(a)).toEqual([res.json()]);
  });

  test('purpose_of_appointment: null clears it', async () => {
    const a = await tenant();
    const nominee = await create(a, { purpose_of_appointment: 'Banking' });
    t.clock.advance(1000);
    const res = await put(a, nominee.id, { purpose_of_appointment: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...nominee, purpose_of_appointment: null, updated_at: now() });
    expect(await stored(a)).toEqual([res.json()]);
  });

  describe('verified_at (contract §4)', () => {
    test('is set to the time of the change when status becomes verified', async () => {
      const a = await tenant();
      const nominee = await create(a);
      t.clock.advance(86_400_000);
      const at = now();
      const res = await put(a, nominee.id, { status: 'verified' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...nominee, status: 'verified', verified_at: at, updated_at: at });
      expect(await stored(a)).toEqual([res.json()]);
    });

    test('is kept, unchanged, while the status stays verified, even as other fields change', async () => {
      const a = await tenant();
      const nominee = await create(a);
      t.clock.advance(1000);
      const verifiedAt = now();
      await put(a, nominee.id, { status: 'verified' });
      t.clock.advance(1000);
      const renamed = await put(a, nominee.id, { nominee_name: 'Renamed', purpose_of_appointment: 'Health' });
      expect(renamed.json()).toEqual({
        ...nominee,
        nominee_name: 'Renamed',
        purpose_of_appointment: 'Health',
        status: 'verified',
        verified_at: verifiedAt,
        updated_at: now(),
      });
      t.clock.advance(1000);
      const again = await put(a, nominee.id, { status: 'verified' });
      expect(again.json()).toEqual({ ...renamed.json(), updated_at: now() });
      expect(await stored(a)).toEqual([again.json()]);
    });

    test.each(['pending', 'rejected'])('is set back to null when the status leaves verified (to %s)', async (status) => {
      const a = await tenant();
      const nominee = await create(a);
      t.clock.advance(1000);
      await put(a, nominee.id, { status: 'verified' });
      t.clock.advance(1000);
      const res = await put(a, nominee.id, { status });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...nominee, status, verified_at: null, updated_at: now() });
      expect(await stored(a)).toEqual([res.json()]);
    });

    test('verifying again later takes the new time', async () => {
      const a = await tenant();
      const nominee = await create(a);
      t.clock.advance(1000);
      await put(a, nominee.id, { status: 'verified' });
      t.clock.advance(1000);
      await put(a, nominee.id, { status: 'rejected' });
      t.clock.advance(1000);
      const at = now();
      const res = await put(a, nominee.id, { status: 'verified' });
      expect(res.json()).toEqual({ ...nominee, status: 'verified', verified_at: at, updated_at: at });
      expect(await stored(a)).toEqual([res.json()]);
    });

    test('stays null while the status is not verified', async () => {
      const a = await tenant();
      const nominee = await create(a);
      for (const status of ['rejected', 'pending', 'rejected']) {
        t.clock.advance(1000);
        expect((await put(a, nominee.id, { status })).json()).toEqual({ ...nominee, status, verified_at: null, updated_at: now() });
      }
      expect((await stored(a))[0]!.verified_at).toBeNull();
    });
  });

  describe('validation: 400 with every problem listed, and the nominee unchanged', () => {
    async function expectRefused(body: unknown, details: Detail[]) {
      const a = await tenant();
      const nominee = await create(a, { purpose_of_appointment: 'Banking' });
      t.clock.advance(1000);
      expectInvalid(await put(a, nominee.id, body), details);
      expect(await stored(a)).toEqual([nominee]);
    }

    test('an empty body {} (no accepted field) is refused', () =>
      expectRefused({}, [
        { field: 'body', message: 'must contain at least one of: nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status' },
      ]));

    test('fields outside the accepted ones are refused by name, even beside a valid one', () =>
      expectRefused({ nominee_name: 'X', user_id: 'dp-2', client_user_id: 'dp-2', verified_at: null, id: randomUUID() }, [
        { field: 'user_id', message: 'is not an accepted field' },
        { field: 'client_user_id', message: 'is not an accepted field' },
        { field: 'verified_at', message: 'is not an accepted field' },
        { field: 'id', message: 'is not an accepted field' },
      ]));

    test.each(['approved', 'VERIFIED', ''])('an invalid status (%j) is refused', (status) =>
      expectRefused({ status }, [{ field: 'status', message: STATUS_MESSAGE }]));

    test('null is refused for fields that are not nullable', () =>
      expectRefused({ nominee_name: null, nominee_email: null, nominee_mobile: null, relationship: null, status: null }, [
        { field: 'nominee_name', message: 'must be a string' },
        { field: 'nominee_email', message: 'must be a string' },
        { field: 'nominee_mobile', message: 'must be a string' },
        { field: 'relationship', message: 'must be a string' },
        { field: 'status', message: 'must be a string' },
      ]));

    test('a string holding the NUL character is refused', () =>
      expectRefused({ nominee_name: 'A\u0000', purpose_of_appointment: 'x\u0000' }, [
        { field: 'nominee_name', message: NUL_MESSAGE },
        { field: 'purpose_of_appointment', message: NUL_MESSAGE },
      ]));

    test('every problem of one body is listed together', () =>
      expectRefused(
        { nominee_name: ' ', nominee_email: 'no', nominee_mobile: '98765-43210', relationship: 'friend', purpose_of_appointment: 'p'.repeat(1001), status: 'x' },
        [
          { field: 'nominee_name', message: 'must not be empty' },
          { field: 'nominee_email', message: EMAIL_MESSAGE },
          { field: 'nominee_mobile', message: MOBILE_MESSAGE },
          { field: 'relationship', message: RELATIONSHIP_MESSAGE },
          { field: 'purpose_of_appointment', message: 'must be at most 1000 characters' },
          { field: 'status', message: STATUS_MESSAGE },
        ],
      ));

    test('validation comes before existence: an invalid body for an unknown nominee is a 400', async () => {
      const a = await tenant();
      expectInvalid(await put(a, randomUUID(), { status: 'bogus' }), [{ field: 'status', message: STATUS_MESSAGE }]);
    });
  });

  describe('404 {"error": "Nominee not found"}', () => {
    test('an unknown UUID', async () => {
      const a = await tenant();
      await create(a);
      const res = await put(a, randomUUID(), { status: 'verified' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    });

    test('a malformed id is an id that does not exist', async () => {
      const a = await tenant();
      const nominee = await create(a);
      for (const id of ['abc', '123', `${nominee.id}0`, nominee.id.replaceAll('-', ''), 'GRV-AAAAAAAA']) {
        const res = await put(a, id, { status: 'verified' });
        expect(res.statusCode, id).toBe(404);
        expect(res.json()).toEqual(NOT_FOUND);
      }
      expect(await stored(a)).toEqual([nominee]);
    });

    test("another organization's nominee: 404, and it is left unchanged", async () => {
      const a = await tenant();
      const b = await tenant();
      const theirs = await create(b);
      t.clock.advance(1000);
      const res = await put(a, theirs.id, { status: 'verified', nominee_name: 'Hijacked' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
      expect(await stored(b)).toEqual([theirs]);
      expect(await stored(a)).toEqual([]);
    });
  });
});

describe('DELETE /nominee/{nominee_id}', () => {
  test('200 with a message; the record is gone for good', async () => {
    const a = await tenant();
    const keep = await create(a, { nominee_name: 'Keep' });
    const gone = await create(a, { nominee_name: 'Gone' });
    const res = await remove(a, gone.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Nominee deleted' });
    expect(await stored(a)).toEqual([keep]);
    expect((await list(a, 'dp-1')).json()).toEqual([keep]);

    const again = await remove(a, gone.id);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(NOT_FOUND);
    const update = await put(a, gone.id, { status: 'verified' });
    expect(update.statusCode).toBe(404);
    expect(update.json()).toEqual(NOT_FOUND);
  });

  test('404 for an unknown UUID or a malformed id', async () => {
    const a = await tenant();
    const nominee = await create(a);
    for (const id of [randomUUID(), 'abc', `${nominee.id}x`]) {
      const res = await remove(a, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toEqual(NOT_FOUND);
    }
    expect(await stored(a)).toEqual([nominee]);
  });

  test("another organization's nominee: 404, and the record survives", async () => {
    const a = await tenant();
    const b = await tenant();
    const theirs = await create(b);
    const res = await remove(a, theirs.id);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(NOT_FOUND);
    expect(await stored(b)).toEqual([theirs]);
    expect((await list(b, 'dp-1')).json()).toEqual([theirs]);
  });
});
