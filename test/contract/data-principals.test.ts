// Data principals (contract §7), through HTTP on both stores: the organization's record of their contacts
// (and a consent link's phone), tokens minted by the organization, the one-time-code sign-in with its
// limits (injected clock), the principal's own profile, the contact person, and a walk over every route
// of the app proving that a DP token reaches no organization endpoint.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
const LINK = '/api/v1/external/public/consent-link';
const DP_TOKEN = /^dpt_[0-9A-Za-z]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const INCORRECT = { error: 'Incorrect or expired code', code: 'incorrect_code' };
const DP_ONLY = { error: 'This token acts for one data principal only', code: 'dp_token_forbidden' };
const INVALID_TOKEN = { error: 'Invalid or expired token', code: 'invalid_token' };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const now = () => t.clock.now().toISOString();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function putContact(a: Tenant, dpId: string, body: object) {
  return t.call({ method: 'PUT', url: `/api/v1/data-principals/${encodeURIComponent(dpId)}`, org: a, key: a.key, body });
}

async function mint(a: Tenant, dpId: string, body: object = {}): Promise<string> {
  const res = await t.call({ method: 'POST', url: `/api/v1/data-principals/${dpId}/tokens`, org: a, key: a.key, body });
  expect(res.statusCode).toBe(201);
  return res.json().access_token;
}

/** The last code sent to this recipient, read from the outbox (the message body holds it). */
async function lastCodeFor(a: TestOrg, recipient: string): Promise<string | null> {
  const rows = await t.db.system.query<{ body: string }>(
    'select body from outbound_messages where org_id = $1 and recipient = $2 order by created_at desc, id desc limit 1',
    [a.id, recipient],
  );
  return rows[0] ? /\b(\d{6})\b/.exec(rows[0].body)![1]! : null;
}

const outboxCount = async (a: TestOrg) => (await t.db.system.query<{ n: number }>('select count(*)::int as n from outbound_messages where org_id = $1', [a.id]))[0]!.n;

const audit = async (a: TestOrg) =>
  (
    await t.db.system.query<{ actor_type: string; actor_id: string; action: string; target_id: string | null; details: unknown }>(
      'select actor_type, actor_id, action, target_id, details from audit_log where org_id = $1 order by at, id',
      [a.id],
    )
  ).map((r) => ({ ...r }));

describe('contacts (PUT|GET /api/v1/data-principals/{dp_id})', () => {
  test('PUT creates (201) with phone normalised and email lower-cased, then changes (200); omitted fields are kept, null clears', async () => {
    const a = await t.tenant();
    const created = await putContact(a, 'dp-1', { phone: '9876543210', email: 'Asha@Example.COM', name: 'Asha' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ dp_id: 'dp-1', phone: '+919876543210', email: 'asha@example.com', name: 'Asha', created_at: now(), updated_at: now() });
    t.clock.advance(1000);
    const changed = await putContact(a, 'dp-1', { email: null, name: 'Asha Rao' });
    expect(changed.statusCode).toBe(200);
    const expected = { dp_id: 'dp-1', phone: '+919876543210', email: null, name: 'Asha Rao', created_at: created.json().created_at, updated_at: now() };
    expect(changed.json()).toEqual(expected);
    const read = await t.call({ method: 'GET', url: '/api/v1/data-principals/dp-1', org: a, key: a.key });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(expected);
    // The audit log names the fields, never their values.
    const entries = await audit(a);
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['data_principal.contact_created', { fields: ['phone', 'email', 'name'] }],
      ['data_principal.contact_updated', { fields: ['email', 'name'] }],
    ]);
    expect(JSON.stringify(entries)).not.toContain('9876543210');
  });

  test('bad input: 400 naming each field; an empty body is refused', async () => {
    const a = await t.tenant();
    const bad = await putContact(a, 'dp-1', { phone: '12345', email: 'not-an-email', name: '', extra: 1 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'extra', 'name', 'phone']);
    const empty = await putContact(a, 'dp-1', {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json().code).toBe('validation_failed');
  });

  test('GET: 404 for a person never recorded; null contacts for one known only from a consent', async () => {
    const a = await t.tenant();
    const missing = await t.call({ method: 'GET', url: '/api/v1/data-principals/nobody', org: a, key: a.key });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'Data principal not found', code: 'not_found' });
    await mint(a, 'dp-known');
    const known = await t.call({ method: 'GET', url: '/api/v1/data-principals/dp-known', org: a, key: a.key });
    expect(known.statusCode).toBe(200);
    expect(known.json()).toEqual({ dp_id: 'dp-known', phone: null, email: null, name: null, created_at: now(), updated_at: now() });
  });

  test("a consent link's phone is recorded when the person has none, and never replaces one on file", async () => {
    const a = await t.tenant();
    const asset = (await t.call({ method: 'POST', url: '/api/v1/assets', org: a, key: a.key, body: { name: 'App', kind: 'mobile_app' } })).json();
    const point = (
      await t.call({ method: 'POST', url: '/api/v1/collection-points', org: a, key: a.key, body: { asset_id: asset.id, name: 'Sign-up', notice: 'N', purposes: [{ name: 'Account', required: true }] } })
    ).json();
    const link = (phone: string, dpId?: string) =>
      t.call({ method: 'POST', url: LINK, org: a, key: a.key, body: { asset_id: asset.id, collection_point_id: point.id, phone, dp_id: dpId, send_sms: false } });
    expect((await link('9876500001', 'dp-new')).statusCode).toBe(201);
    await putContact(a, 'dp-kept', { phone: '+919876500002' });
    expect((await link('9876500003', 'dp-kept')).statusCode).toBe(201);
    expect((await link('9876500004')).statusCode).toBe(201);
    const read = async (dpId: string) => (await t.call({ method: 'GET', url: `/api/v1/data-principals/${dpId}`, org: a, key: a.key })).json().phone;
    expect(await read('dp-new')).toBe('+919876500001');
    expect(await read('dp-kept')).toBe('+919876500002');
  });
});

describe('tokens minted by the organization (POST /api/v1/data-principals/{dp_id}/tokens)', () => {
  test('201 with the token, its lifetime and dp_id; works on /api/v1/me until it expires', async () => {
    const a = await t.tenant(['consent']);
    const res = await t.call({ method: 'POST', url: '/api/v1/data-principals/dp-7/tokens', org: a, key: a.key, body: { ttl_seconds: 120 } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ access_token: expect.stringMatching(DP_TOKEN), token_type: 'Bearer', expires_in: 120, dp_id: 'dp-7' });
    const me = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: bearer(body.access_token) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      dp_id: 'dp-7',
      name: null,
      phone: null,
      email: null,
      organization: { slug: a.slug, name: a.slug },
      contact: null,
      grievance_period_days: 30,
    });
    t.clock.advance(120_000);
    const expired = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: bearer(body.access_token) });
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toEqual(INVALID_TOKEN);
  });

  test('ttl_seconds defaults to 3600 (no body) and must be 60-3600; a grievances key lacks the scope', async () => {
    const a = await t.tenant(['consent']);
    const noBody = await t.call({ method: 'POST', url: '/api/v1/data-principals/dp-1/tokens', org: a, key: a.key });
    expect(noBody.statusCode).toBe(201);
    expect(noBody.json().expires_in).toBe(3600);
    for (const ttl of [59, 3601, 1.5]) {
      const res = await t.call({ method: 'POST', url: '/api/v1/data-principals/dp-1/tokens', org: a, key: a.key, body: { ttl_seconds: ttl } });
      expect(res.statusCode).toBe(400);
      expect(res.json().details[0].field).toBe('ttl_seconds');
    }
    const g = await t.key(a, ['grievances']);
    const refused = await t.call({ method: 'POST', url: '/api/v1/data-principals/dp-1/tokens', org: a, key: g, body: {} });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'API key lacks the required scope: consent', code: 'missing_scope' });
  });

  test("a token is its organization's only: on another organization's host it is an invalid token", async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const token = await mint(a, 'dp-1');
    const res = await t.call({ method: 'GET', url: '/api/v1/me', org: b, headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID_TOKEN);
  });

  test('/api/v1/me masks the contacts on file and shows the contact person', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210', email: 'asha@example.com', name: 'Asha' });
    const dpo = await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: a, key: a.key, body: { full_name: 'Meera Iyer', email: 'DPO@Example.com', working_hours: 'Mon-Fri 10-18' } });
    expect(dpo.statusCode).toBe(201);
    const token = await mint(a, 'dp-1');
    const me = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toEqual({
      dp_id: 'dp-1',
      name: 'Asha',
      phone: '+********3210',
      email: 'a***@example.com',
      organization: { slug: a.slug, name: a.slug },
      contact: dpo.json(),
      grievance_period_days: 30,
    });
  });
});

describe('one-time code sign-in (POST /rights/otp, /rights/otp/verify)', () => {
  const send = (a: TestOrg | string, body: object) => t.call({ method: 'POST', url: '/rights/otp', org: a, body });
  const verify = (a: TestOrg | string, body: object) => t.call({ method: 'POST', url: '/rights/otp/verify', org: a, body });
  const SENT = { message: 'If this contact is on file, a code is on its way', expires_in: 600, resend_after: 30 };

  test('a phone on file gets a code by SMS; the code gives a token for that data principal, once', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210' });
    const res = await send(a, { phone: '9876543210' });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual(SENT);
    const rows = await t.db.system.query<{ channel: string; status: string }>('select channel, status from outbound_messages where org_id = $1', [a.id]);
    expect(rows.map((r) => ({ ...r }))).toEqual([{ channel: 'sms', status: 'queued' }]);
    const code = (await lastCodeFor(a, '+919876543210'))!;
    const ok = await verify(a, { phone: '+919876543210', code });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ access_token: expect.stringMatching(DP_TOKEN), token_type: 'Bearer', expires_in: 3600, dp_id: 'dp-1' });
    const me = await t.call({ method: 'GET', url: '/api/v1/me', org: a, headers: bearer(ok.json().access_token) });
    expect(me.json().dp_id).toBe('dp-1');
    // Used once.
    const again = await verify(a, { phone: '+919876543210', code });
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual(INCORRECT);
    // The sign-in is the person's own act in the audit log.
    const entries = await audit(a);
    const signIn = entries.find((e) => e.action === 'data_principal.signed_in')!;
    expect(signIn).toEqual({ actor_type: 'data_principal', actor_id: signIn.target_id, action: 'data_principal.signed_in', target_id: expect.any(String), details: { method: 'code', expires_in: 3600 } });
  });

  test('an email on file gets the code by email', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-2', { email: 'ravi@example.com' });
    expect((await send(a, { email: 'Ravi@Example.com' })).statusCode).toBe(202);
    const code = (await lastCodeFor(a, 'ravi@example.com'))!;
    const ok = await verify(a, { email: 'ravi@example.com', code: `${code.slice(0, 3)} ${code.slice(3)}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().dp_id).toBe('dp-2');
  });

  test('the same answer whether or not the contact is on file, or the host names an organization; nothing is sent to an unknown contact', async () => {
    const a = await t.tenant();
    for (const org of [a, 'no-such-org.localhost', 'localhost:3000']) {
      const res = await send(org, { phone: '+919800000000' });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual(SENT);
    }
    expect(await outboxCount(a)).toBe(0);
    // Any code for an unknown contact is incorrect, and the limits apply to it as to any other.
    const res = await verify(a, { phone: '+919800000000', code: '123456' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INCORRECT);
    const resend = await send(a, { phone: '+919800000000' });
    expect(resend.statusCode).toBe(429);
    expect(resend.headers['retry-after']).toBe('30');
    const unknownHost = await verify('no-such-org.localhost', { phone: '+919800000000', code: '123456' });
    expect(unknownHost.statusCode).toBe(401);
    expect(unknownHost.json()).toEqual(INCORRECT);
  });

  test('phone or email, exactly one: 400', async () => {
    const a = await t.tenant();
    for (const body of [{}, { phone: '+919876543210', email: 'a@example.com' }]) {
      const res = await send(a, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
      expect(res.json().details[0].field).toBe('phone');
    }
    const bad = await send(a, { phone: 'abc' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toEqual([{ field: 'phone', message: 'must be E.164 (+ then 8-15 digits) or a 10-digit national number' }]);
  });

  test('a resend is refused for 30 s, and at most 3 codes per contact per 15 minutes (429 with Retry-After)', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210' });
    expect((await send(a, { phone: '+919876543210' })).statusCode).toBe(202);
    t.clock.advance(10_000);
    const soon = await send(a, { phone: '+919876543210' });
    expect(soon.statusCode).toBe(429);
    expect(soon.headers['retry-after']).toBe('20');
    expect(soon.json()).toEqual({ error: 'A code was just sent: ask again in 20 seconds', code: 'too_many_codes' });
    t.clock.advance(20_000);
    expect((await send(a, { phone: '+919876543210' })).statusCode).toBe(202);
    t.clock.advance(30_000);
    expect((await send(a, { phone: '+919876543210' })).statusCode).toBe(202);
    t.clock.advance(30_000);
    const fourth = await send(a, { phone: '+919876543210' });
    expect(fourth.statusCode).toBe(429);
    // The window began 90 s ago: 810 s to go.
    expect(fourth.headers['retry-after']).toBe('810');
    expect(fourth.json()).toEqual({ error: 'Too many codes were sent to this contact: ask again in 810 seconds', code: 'too_many_codes' });
    expect(await outboxCount(a)).toBe(3);
    t.clock.advance(810_000);
    expect((await send(a, { phone: '+919876543210' })).statusCode).toBe(202);
    expect(await outboxCount(a)).toBe(4);
  });

  test('a code lives 10 minutes', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210' });
    await send(a, { phone: '+919876543210' });
    const code = (await lastCodeFor(a, '+919876543210'))!;
    t.clock.advance(600_000);
    const res = await verify(a, { phone: '+919876543210', code });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INCORRECT);
  });

  test('5 wrong tries use the code up: even the right one is then refused', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210' });
    await send(a, { phone: '+919876543210' });
    const code = (await lastCodeFor(a, '+919876543210'))!;
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await verify(a, { phone: '+919876543210', code: wrong });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INCORRECT);
    }
    const right = await verify(a, { phone: '+919876543210', code });
    expect(right.statusCode).toBe(401);
    // A new code starts over.
    t.clock.advance(30_000);
    await send(a, { phone: '+919876543210' });
    const fresh = (await lastCodeFor(a, '+919876543210'))!;
    expect((await verify(a, { phone: '+919876543210', code: fresh })).statusCode).toBe(200);
  });

  test('codes are stored hashed, never in clear', async () => {
    const a = await t.tenant();
    await putContact(a, 'dp-1', { phone: '+919876543210' });
    await send(a, { phone: '+919876543210' });
    const code = (await lastCodeFor(a, '+919876543210'))!;
    const rows = await t.db.system.query<Record<string, unknown>>('select * from dp_sign_in_codes where org_id = $1', [a.id]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(JSON.stringify(rows)).not.toContain('9876543210');
  });
});

describe('the contact person (GET /dpo, PUT /api/v1/organization/dpo)', () => {
  test('404 until set; set (201, then 200) with the whole record; read with any key, a member token or a DP token', async () => {
    const a = await t.tenant();
    const none = await t.call({ method: 'GET', url: '/dpo', org: a, key: a.key });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ error: 'No contact person configured', code: 'not_found' });
    const body = {
      full_name: 'Meera Iyer',
      email: 'dpo@example.com',
      phone: '9876543210',
      appointment_date: '2026-01-01T00:00:00+05:30',
      qualifications: 'CIPP/E',
      responsibilities: 'Answers data principals',
      working_hours: 'Mon-Fri 10:00-18:00 IST',
      response_time: 'Within 7 days',
    };
    const set = await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: a, key: a.key, body });
    expect(set.statusCode).toBe(201);
    const expected = { ...body, id: expect.any(String), phone: '+919876543210', appointment_date: '2025-12-31T18:30:00.000Z', created_at: now(), updated_at: now() };
    expect(set.json()).toEqual(expected);
    t.clock.advance(1000);
    const changed = await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: a, key: a.key, body: { full_name: 'Meera Iyer', email: 'dpo@example.com' } });
    expect(changed.statusCode).toBe(200);
    const after = {
      id: set.json().id,
      full_name: 'Meera Iyer',
      email: 'dpo@example.com',
      phone: null,
      appointment_date: null,
      qualifications: null,
      responsibilities: null,
      working_hours: null,
      response_time: null,
      created_at: set.json().created_at,
      updated_at: now(),
    };
    expect(changed.json()).toEqual(after);
    const anyKey = await t.key(a, ['nominees']);
    // Contract §10: GET /dpo shows the organization's grievance period (the default, then what PATCH set); PUT answers the person alone.
    for (const headers of [{ 'x-api-key': anyKey }, bearer(await mint(a, 'dp-1'))]) {
      const res = await t.call({ method: 'GET', url: '/dpo', org: a, headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...after, grievance_period_days: 30 });
    }
    const patched = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: a.key, body: { grievance_period_days: 45 } });
    expect(patched.statusCode, patched.body).toBe(200);
    const withPeriod = await t.call({ method: 'GET', url: '/dpo', org: a, key: anyKey });
    expect(withPeriod.json()).toEqual({ ...after, grievance_period_days: 45 });
    // The SDK surface's copy answers the same.
    const sdk = await t.call({ method: 'GET', url: '/api/v1/internal/dpo', org: a, key: anyKey });
    expect(sdk.json()).toEqual({ ...after, grievance_period_days: 45 });
    // Another organization's period is not this one's.
    const b = await t.tenant();
    await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: b, key: b.key, body: { full_name: 'B', email: 'b@example.com' } });
    expect((await t.call({ method: 'GET', url: '/dpo', org: b, key: b.key })).json().grievance_period_days).toBe(30);
    const noKey = await t.call({ method: 'GET', url: '/dpo', org: a });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json()).toEqual({ error: 'API key required (X-API-Key header)', code: 'api_key_required' });
    const other = await t.tenant(['nominees']);
    for (const [host, key] of [[a.host, other.key], [a.host, 'ask_live_' + 'A'.repeat(32)], ['no-such-org.localhost', a.key]] as const) {
      const res = await t.call({ method: 'GET', url: '/dpo', org: host, key });
      expect(res.statusCode).toBe(401);
      // Another organization's key (or a key on an unknown host) also gets a hint saying where it works.
      expect(res.json()).toMatchObject({ error: 'Invalid API key', code: 'invalid_api_key' });
    }
    const g = await t.key(a, ['grievances']);
    const refused = await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: a, key: g, body });
    expect(refused.statusCode).toBe(403);
  });
});

describe('a DP token reaches no organization endpoint (a walk over every route of the app)', () => {
  /** A value for each path parameter: any will do, access is decided before the path is read. */
  const sample: Record<string, string> = {
    ticket_id: 'GRV-AAAAAAAA',
    nominee_id: '0190a0a0-0000-7000-8000-000000000000',
    id: '0190a0a0-0000-7000-8000-000000000000',
    user_id: 'dp-1',
    dp_id: 'dp-1',
    request_id: '0190a0a0-0000-7000-8000-000000000000',
    collection_point_id: '0190a0a0-0000-7000-8000-000000000000',
    delivery_id: '0190a0a0-0000-7000-8000-000000000000',
    consent_id: '0190a0a0-0000-7000-8000-000000000000',
  };
  const urlOf = (pattern: string) => pattern.replace(/:([a-z_]+)/g, (_, name: string) => sample[name] ?? 'x').replace(/\*$/, 'x');

  test('every tenant route that does not act for a data principal answers 403 to a valid DP token, and 401 to an invalid one', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const routes = t.app.routeAccess.filter((r) => r.access !== 'public' && !r.access.dataPrincipal);
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      const res = await t.call({ method: route.method as 'GET', url: urlOf(route.url), org: a, headers: { ...bearer(token), ...(route.access !== 'public' && route.access.orgHeader ? { 'x-org-id': a.slug } : {}) }, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect({ route: `${route.method} ${route.url}`, status: res.statusCode, body: res.json() }).toEqual({ route: `${route.method} ${route.url}`, status: 403, body: DP_ONLY });
      const forged = await t.call({ method: route.method as 'GET', url: urlOf(route.url), org: a, headers: { ...bearer('dpt_' + 'A'.repeat(32)), ...(route.access !== 'public' && route.access.orgHeader ? { 'x-org-id': a.slug } : {}) }, body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect({ route: `${route.method} ${route.url}`, status: forged.statusCode, body: forged.json() }).toEqual({ route: `${route.method} ${route.url}`, status: 401, body: INVALID_TOKEN });
    }
  });

  test('routes that act for a data principal refuse an API key and a member token, and take only their own token', async () => {
    const a = await t.tenant();
    const routes = t.app.routeAccess.filter((r) => r.access !== 'public' && r.access.dataPrincipal && !r.access.apiKey && !r.access.bearer);
    expect(routes.map((r) => `${r.method} ${r.url}`)).toContain('GET /api/v1/me');
    const user = await t.app.services.users.createUser({ email: `owner-${a.slug}@example.com`, password: 'a long enough password' });
    await t.app.services.users.addMember(a.id, user.id, 'owner');
    const login = await t.call({ method: 'POST', url: '/auth/login', body: { email: `owner-${a.slug}@example.com`, password: 'a long enough password' } });
    const memberToken = login.json().access_token;
    for (const route of routes) {
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      const withKey = await t.call({ method: route.method as 'GET', url: urlOf(route.url), org: a, key: a.key, body });
      expect([route.url, withKey.statusCode, withKey.json().code]).toEqual([route.url, 401, 'bearer_token_required']);
      const withMember = await t.call({ method: route.method as 'GET', url: urlOf(route.url), org: a, headers: bearer(memberToken), body });
      expect([route.url, withMember.statusCode, withMember.json().code]).toEqual([route.url, 401, 'dp_token_required']);
      const without = await t.call({ method: route.method as 'GET', url: urlOf(route.url), org: a, body });
      expect([route.url, without.statusCode, without.json().code]).toEqual([route.url, 401, 'api_key_required']);
    }
  });

  test("a DP token never reaches another data principal's records: every /api/v1/me route, walked with the other person's ids", async () => {
    const a = await t.tenant();
    const asset = (await t.call({ method: 'POST', url: '/api/v1/assets', org: a, key: a.key, body: { name: 'App', kind: 'mobile_app' } })).json();
    const point = (
      await t.call({ method: 'POST', url: '/api/v1/collection-points', org: a, key: a.key, body: { asset_id: asset.id, name: 'Sign-up', notice: 'N', purposes: [{ name: 'Account', required: true }] } })
    ).json();
    // The other person's records, made by the organization.
    const consent = (await t.call({ method: 'POST', url: `/consent/${point.id}/consent`, org: a, key: a.key, body: { dp_id: 'dp-2', purposes: [{ id: point.purposes[0].id, granted: true }] } })).json();
    const ticket = (await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'dp-2', subject: 'S', description: 'D', category: 'other' } })).json();
    const nominee = (
      await t.call({ method: 'POST', url: '/nominee', org: a, key: a.key, body: { user_id: 'dp-2', nominee_name: 'N', nominee_email: 'n@example.com', nominee_mobile: '9876500000', relationship: 'other' } })
    ).json();
    await t.call({ method: 'POST', url: `/grievance/${ticket.ticket_id}/messages`, org: a, key: a.key, body: { message: 'For dp-2' } });
    const snapshot = async () =>
      JSON.stringify(
        await Promise.all([
          t.call({ method: 'GET', url: `/consent/${point.id}/consent?dp_id=dp-2`, org: a, key: a.key }).then((r) => r.json()),
          t.call({ method: 'GET', url: `/api/v1/grievances/${ticket.ticket_id}`, org: a, key: a.key }).then((r) => r.json()),
          t.call({ method: 'GET', url: `/grievance/${ticket.ticket_id}/messages`, org: a, key: a.key }).then((r) => r.json()),
          t.call({ method: 'GET', url: '/nominee/user/dp-2', org: a, key: a.key }).then((r) => r.json()),
        ]),
      );
    const before = await snapshot();
    const token = await mint(a, 'dp-1');
    const ids: Record<string, string> = { ticket_id: ticket.ticket_id, id: nominee.id, collection_point_id: point.id, consent_id: consent.consent_id };
    // A valid body for each route that takes one, so that only the record decides the answer.
    const bodies: Record<string, object> = {
      'POST /api/v1/me/grievances/:ticket_id/messages': { message: 'Not mine' },
      'PATCH /api/v1/me/nominees/:id': { nominee_name: 'Changed' },
      'POST /api/v1/me/grievances': { subject: 'S', description: 'D', category: 'other' },
      'POST /api/v1/me/nominees': { nominee_name: 'M', nominee_email: 'm@example.com', nominee_mobile: '9876500001', relationship: 'other' },
      'POST /api/v1/me/consents/:collection_point_id': { purposes: [{ id: point.purposes[0].id, granted: false }] },
    };
    // Routes whose path names no record of a person: they act on the caller's own records only.
    const ownOnly = new Set(['GET /api/v1/me', 'POST /api/v1/me/grievances', 'POST /api/v1/me/nominees', 'POST /api/v1/me/consents/:collection_point_id']);
    // The caller's own changes last, so that dp-1 has nothing of their own while the others are tried.
    const routes = t.app.routeAccess
      .filter((r) => r.access !== 'public' && r.access.dataPrincipal && !r.access.apiKey && !r.access.bearer && r.url.startsWith('/api/v1/me'))
      .sort((x, y) => Number(ownOnly.has(`${x.method} ${x.url}`)) - Number(ownOnly.has(`${y.method} ${y.url}`)));
    expect(routes.length).toBeGreaterThanOrEqual(14);
    const leaked = [consent.consent_id, ticket.ticket_id, nominee.id, 'dp-2', 'For dp-2'];
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      const url = route.url.replace(/:([a-z_]+)/g, (_, p: string) => ids[p] ?? expect.fail(`${name}: no sample for :${p}`));
      const res = await t.call({ method: route.method as 'GET', url, org: a, headers: bearer(token), body: route.method === 'POST' || route.method === 'PATCH' ? (bodies[name] ?? {}) : undefined });
      for (const id of leaked) expect(res.body, `${name} reveals ${id}`).not.toContain(id);
      if (ownOnly.has(name) || !route.url.includes(':')) expect([name, res.statusCode < 300]).toEqual([name, true]);
      else expect([name, res.statusCode, res.json().code]).toEqual([name, 404, 'not_found']);
    }
    // Nothing of theirs changed; what dp-1 did is dp-1's.
    expect(await snapshot()).toBe(before);
    const own = (await t.call({ method: 'GET', url: '/api/v1/me/consents', org: a, headers: bearer(token) })).json();
    expect(own.map((c: { consent_action: string }) => c.consent_action)).toEqual(['declined']);
  });

  test('timestamps are ISO 8601 UTC with milliseconds', async () => {
    const a = await t.tenant();
    const res = await putContact(a, 'dp-1', { name: 'A' });
    expect(res.json().created_at).toMatch(ISO);
  });
});
