// Consent links: create and regenerate (original spec §4.4; contract §1 PUBLIC_URL, §4 phones, §5): one
// test per rule, through HTTP, checking the status, the whole body, and what was stored (requests, link
// instances, daily rollups, outbox). Auth, scopes and cross-tenant ids are in tenancy.test.ts.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { countingDb } from '../support/counting-db.js';

type Tenant = TestOrg & { key: string };
type Detail = { field: string; message: string };
type Response = Awaited<ReturnType<TestApp['call']>>;

let t: TestApp;
let counter: ReturnType<typeof countingDb>;
beforeAll(async () => {
  t = await buildTestApp({
    wrapDb: (db) => {
      counter = countingDb(db);
      return counter.db;
    },
  });
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINK = '/api/v1/external/public/consent-link';
const HOUR = 3_600_000;
const PHONE_MESSAGE = 'must be E.164 (+ then 8-15 digits) or a 10-digit national number';
const REQUEST_NOT_FOUND = { error: 'Consent request not found', code: 'not_found' };

const tenant = () => t.tenant(['admin']);
const now = () => t.clock.now().toISOString();
const inHours = (h: number) => new Date(t.clock.now().getTime() + h * HOUR).toISOString();
const linkPattern = (slug: string, origin = 'http://SLUG.localhost:3000') =>
  new RegExp(`^${origin.replace('SLUG', slug).replace(/\./g, '\\.')}/c/[0-9A-Za-z]{32}$`);
const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function call(a: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, app: TestApp = t) {
  return app.call({ method, url, org: a, key: a.key, body });
}

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

interface Setup {
  assetId: string;
  pointId: string;
  displayId: string;
  purposeIds: string[];
}

/** An active asset with one active collection point (a required and an optional purpose). */
async function setup(a: Tenant, app: TestApp = t): Promise<Setup> {
  const asset = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' }, app));
  const point = await ok(
    await call(
      a,
      'POST',
      '/api/v1/collection-points',
      { asset_id: asset.id, name: 'Sign-up', notice: 'We use your data to run your account.', purposes: [{ name: 'Account', required: true }, { name: 'Offers' }] },
      app,
    ),
  );
  return { assetId: asset.id, pointId: point.id, displayId: point.display_id, purposeIds: point.purposes.map((p: { id: string }) => p.id) };
}

const linkBody = (s: Setup, overrides: Record<string, unknown> = {}) => ({
  asset_id: s.assetId,
  collection_point_id: s.pointId,
  phone: '+919876543210',
  dp_id: 'dp-1',
  ...overrides,
});

const createLink = async (a: Tenant, s: Setup, overrides: Record<string, unknown> = {}) => ok(await call(a, 'POST', LINK, linkBody(s, overrides)));
const duplicate = (a: Tenant, requestId: string, body?: unknown) => call(a, 'POST', `${LINK}/duplicate/${requestId}`, body);

const byField = (x: Detail, y: Detail) => `${x.field} ${x.message}`.localeCompare(`${y.field} ${y.message}`);

function expectInvalid(res: Response, expected: Detail[]) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect([...body.details].sort(byField)).toEqual([...expected].sort(byField));
  expect(body).toEqual({ error: `Invalid request body: ${body.details.map((d: Detail) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details: body.details });
}

function plain(rows: Record<string, unknown>[]) {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
}

const storedRequests = async (a: TestOrg, app: TestApp = t) =>
  plain(
    await app.db.system.query(
      `select id, asset_id, collection_point_id, dp_id, phone, current_event_id, created_at, expires_at, completed_at, consent_action, regeneration_count
         from consent_requests where org_id = $1 order by created_at, id`,
      [a.id],
    ),
  );

const storedEvents = async (a: TestOrg, app: TestApp = t) =>
  plain(
    await app.db.system.query(
      'select id, request_id, token_hash, created_at, expires_at, superseded_at from consent_link_events where org_id = $1 order by created_at, id',
      [a.id],
    ),
  );

const storedMessages = async (a: TestOrg) =>
  plain(
    await t.db.system.query(
      `select channel, recipient, body, request_id, event_id, status, attempts, next_attempt_at, created_at, sent_at
         from outbound_messages where org_id = $1 order by created_at, channel, id`,
      [a.id],
    ),
  );

const storedDailyCounts = async (a: TestOrg) =>
  plain(
    await t.db.system.query(
      // A day's counts are kept in several rows (migration 0085): what counts is their sum.
      `select asset_id, to_char(day, 'YYYY-MM-DD') as day, collection_point_id, sum(created)::int as created, sum(completed)::int as completed
         from consent_link_daily_counts where org_id = $1 group by asset_id, day, collection_point_id order by day, collection_point_id`,
      [a.id],
    ),
  );

async function expectNothingStored(a: TestOrg) {
  expect(await storedRequests(a)).toEqual([]);
  expect(await storedEvents(a)).toEqual([]);
  expect(await storedMessages(a)).toEqual([]);
  expect(await storedDailyCounts(a)).toEqual([]);
}

/** Records a consent through the link instance eventId (completes its request). */
async function consentThrough(a: Tenant, s: Setup, eventId: string, dpId = 'dp-1') {
  return ok(await call(a, 'POST', `/consent/${s.pointId}/consent`, { dp_id: dpId, event_id: eventId, purposes: s.purposeIds.map((id) => ({ id, granted: true })) }));
}

describe('POST /api/v1/external/public/consent-link', () => {
  test('§5 201: {request_id, event_id, consent_link, expires_at, delivery_status}; the request, its link and the day rollup are stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    const res = await call(a, 'POST', LINK, linkBody(s));
    expect(res.statusCode).toBe(201);
    const link = res.json();
    expect(link).toEqual({
      request_id: expect.stringMatching(UUID),
      event_id: expect.stringMatching(UUID),
      consent_link: expect.stringMatching(linkPattern(a.slug)),
      expires_at: inHours(24),
      delivery_status: { sms: 'queued' },
    });
    expect(link.event_id).not.toBe(link.request_id);
    expect(await storedRequests(a)).toEqual([
      {
        id: link.request_id,
        asset_id: s.assetId,
        collection_point_id: s.pointId,
        dp_id: 'dp-1',
        phone: '+919876543210',
        current_event_id: link.event_id,
        created_at: now(),
        expires_at: inHours(24),
        completed_at: null,
        consent_action: null,
        regeneration_count: 0,
      },
    ]);
    expect(await storedEvents(a)).toEqual([
      { id: link.event_id, request_id: link.request_id, token_hash: sha256(tokenOf(link.consent_link)), created_at: now(), expires_at: inHours(24), superseded_at: null },
    ]);
    expect(await storedDailyCounts(a)).toEqual([{ asset_id: s.assetId, day: now().slice(0, 10), collection_point_id: s.pointId, created: 1, completed: 0 }]);
  });

  test('§1 the link is built on PUBLIC_URL: https://<slug>.privacy.example.com/c/<token>', async () => {
    const other = await buildTestApp({ env: { PUBLIC_URL: 'https://privacy.example.com', BASE_DOMAIN: 'privacy.example.com' } });
    try {
      const a = await other.tenant(['admin']);
      expect(a.host).toBe(`${a.slug}.privacy.example.com`);
      const s = await setup(a, other);
      const res = await call(a, 'POST', LINK, linkBody(s), other);
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        request_id: expect.stringMatching(UUID),
        event_id: expect.stringMatching(UUID),
        consent_link: expect.stringMatching(linkPattern(a.slug, 'https://SLUG.privacy.example.com')),
        expires_at: new Date(other.clock.now().getTime() + 24 * HOUR).toISOString(),
        delivery_status: { sms: 'queued' },
      });
      expect(await storedRequests(a, other)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  test('§5 the token is random, stored only as its SHA-256 hash, and unrelated to event_id', async () => {
    const a = await tenant();
    const s = await setup(a);
    const links = [];
    for (let i = 0; i < 3; i++) links.push(await createLink(a, s, { dp_id: `dp-${i}` }));
    const tokens = links.map((l) => tokenOf(l.consent_link));
    expect(new Set(tokens).size).toBe(3);
    const events = await storedEvents(a);
    expect(events.map((e) => e.token_hash)).toEqual(tokens.map(sha256));
    const rows = await t.db.system.query<{ row: string }>(
      `select row_to_json(r)::text as row from consent_requests r where org_id = $1
        union all select row_to_json(e)::text from consent_link_events e where org_id = $1`,
      [a.id],
    );
    expect(rows).toHaveLength(6);
    for (const token of tokens) {
      for (const { row } of rows) expect(row).not.toContain(token);
    }
    for (const l of links) {
      const token = tokenOf(l.consent_link);
      expect(token).not.toContain(l.event_id.replace(/-/g, ''));
      expect(token).not.toContain(l.request_id.replace(/-/g, ''));
    }
  });

  test('§5 expires_at is the creation time plus expiry_hours (1-24)', async () => {
    const a = await tenant();
    const s = await setup(a);
    for (const hours of [1, 12, 24]) {
      const link = await createLink(a, s, { expiry_hours: hours });
      expect(link.expires_at).toBe(inHours(hours));
    }
    expect((await storedRequests(a)).map((r) => r.expires_at)).toEqual([inHours(1), inHours(12), inHours(24)]);
  });

  test('§5 expiry_hours outside 1-24, fractional, or a string: 400, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    const cases: [unknown, Detail][] = [
      [0, { field: 'expiry_hours', message: 'must be at least 1' }],
      [25, { field: 'expiry_hours', message: 'must be at most 24' }],
      [1.5, { field: 'expiry_hours', message: 'must be an integer' }],
      ['3', { field: 'expiry_hours', message: 'must be an integer' }],
      [null, { field: 'expiry_hours', message: 'must be an integer' }],
    ];
    for (const [value, detail] of cases) expectInvalid(await call(a, 'POST', LINK, linkBody(s, { expiry_hours: value })), [detail]);
    await expectNothingStored(a);
  });

  test('§4 phone: a bare 10-digit number gets +91; E.164 is kept as given', async () => {
    const a = await tenant();
    const s = await setup(a);
    await createLink(a, s, { phone: '9876543210', dp_id: 'in' });
    await createLink(a, s, { phone: '+14155550123', dp_id: 'us' });
    await createLink(a, s, { phone: ' +4420794600 ', dp_id: 'uk' });
    expect((await storedRequests(a)).map((r) => r.phone)).toEqual(['+919876543210', '+14155550123', '+4420794600']);
    expect((await storedMessages(a)).map((m) => m.recipient)).toEqual(['+919876543210', '+14155550123', '+4420794600']);
  });

  test('§4 DEFAULT_COUNTRY_CODE changes the prefix of a bare 10-digit number', async () => {
    const other = await buildTestApp({ env: { DEFAULT_COUNTRY_CODE: '+1' } });
    try {
      const a = await other.tenant(['admin']);
      const s = await setup(a, other);
      expect((await call(a, 'POST', LINK, linkBody(s, { phone: '4155550123' }), other)).statusCode).toBe(201);
      expect((await storedRequests(a, other)).map((r) => r.phone)).toEqual(['+14155550123']);
    } finally {
      await other.close();
    }
  });

  test('§4 any other phone: 400, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    for (const phone of ['98765', '919876543210', '+1234567', '+91 98765 4321', '98765-43210', 'phone', '']) {
      const res = await call(a, 'POST', LINK, linkBody(s, { phone }));
      expectInvalid(res, [{ field: 'phone', message: phone === '' ? 'must not be empty' : PHONE_MESSAGE }]);
    }
    // 16 digits is also over the length limit, which may be reported as well.
    const tooLong = await call(a, 'POST', LINK, linkBody(s, { phone: '+1234567890123456' }));
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().details).toContainEqual({ field: 'phone', message: PHONE_MESSAGE });
    await expectNothingStored(a);
  });

  test('§5 required and unknown fields: 400 listing each problem, nothing stored', async () => {
    const a = await tenant();
    await setup(a);
    expectInvalid(await call(a, 'POST', LINK, { status: 'active', event_id: randomUUID() }), [
      { field: 'asset_id', message: 'is required' },
      { field: 'collection_point_id', message: 'is required' },
      { field: 'phone', message: 'is required' },
      { field: 'status', message: 'is not an accepted field' },
      { field: 'event_id', message: 'is not an accepted field' },
    ]);
    await expectNothingStored(a);
  });

  test('§5 collection_point_id may be the display_id', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { collection_point_id: s.displayId });
    expect(link).toEqual({
      request_id: expect.stringMatching(UUID),
      event_id: expect.stringMatching(UUID),
      consent_link: expect.stringMatching(linkPattern(a.slug)),
      expires_at: inHours(24),
      delivery_status: { sms: 'queued' },
    });
    expect((await storedRequests(a)).map((r) => [r.id, r.collection_point_id])).toEqual([[link.request_id, s.pointId]]);
  });

  test('§5 an unknown collection point (UUID or display_id): 404, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    for (const id of [randomUUID(), 'CP999', 'cp001']) {
      const res = await call(a, 'POST', LINK, linkBody(s, { collection_point_id: id }));
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Collection point not found', code: 'not_found' });
    }
    await expectNothingStored(a);
  });

  test("§5 an asset_id that is not the collection point's asset: 400, nothing stored", async () => {
    const a = await tenant();
    const s = await setup(a);
    const other = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' }));
    for (const assetId of [other.id, randomUUID()]) {
      const res = await call(a, 'POST', LINK, linkBody(s, { asset_id: assetId }));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: 'asset_id is not the asset of this collection point', code: 'validation_failed',
        details: [{ field: 'asset_id', message: 'is not the asset of collection point CP001' }],
      });
    }
    expectInvalid(await call(a, 'POST', LINK, linkBody(s, { asset_id: 'web' })), [{ field: 'asset_id', message: 'must be a UUID' }]);
    await expectNothingStored(a);
  });

  test('§5 asset_id and collection_point_id match whatever the letter case of the UUIDs', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { asset_id: s.assetId.toUpperCase(), collection_point_id: s.pointId.toUpperCase() });
    expect((await storedRequests(a)).map((r) => [r.id, r.asset_id, r.collection_point_id])).toEqual([[link.request_id, s.assetId, s.pointId]]);
  });

  test('§5 an inactive collection point: 400, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    await ok(await call(a, 'PATCH', `/api/v1/collection-points/${s.pointId}`, { status: 'inactive' }), 200);
    const res = await call(a, 'POST', LINK, linkBody(s));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Collection point CP001 is inactive: no new consent links can be created for it', code: 'validation_failed',
      details: [{ field: 'collection_point_id', message: 'is inactive' }],
    });
    await expectNothingStored(a);
  });

  test('§5 a collection point of an inactive asset: 400, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    await ok(await call(a, 'PATCH', `/api/v1/assets/${s.assetId}`, { status: 'inactive' }), 200);
    const res = await call(a, 'POST', LINK, linkBody(s));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Its asset is inactive: no new consent links can be created for it', code: 'validation_failed',
      details: [{ field: 'collection_point_id', message: 'is inactive' }],
    });
    await expectNothingStored(a);
  });

  test('§5 delivery_status: {sms} by default, {} with send_sms false, {sms, email} with an email, {email} with both', async () => {
    const a = await tenant();
    const s = await setup(a);
    const cases: [Record<string, unknown>, object][] = [
      [{}, { sms: 'queued' }],
      [{ send_sms: true }, { sms: 'queued' }],
      [{ send_sms: false }, {}],
      [{ email: 'Asha@Example.com' }, { sms: 'queued', email: 'queued' }],
      [{ email: 'asha@example.com', send_sms: false }, { email: 'queued' }],
    ];
    for (const [overrides, delivery] of cases) {
      const link = await createLink(a, s, overrides);
      expect(link).toEqual({
        request_id: expect.stringMatching(UUID),
        event_id: expect.stringMatching(UUID),
        consent_link: expect.stringMatching(linkPattern(a.slug)),
        expires_at: inHours(24),
        delivery_status: delivery,
      });
    }
    expect(await storedRequests(a)).toHaveLength(5);
  });

  test('§5 an outbox row per channel, status queued, carrying the link, written with the request', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { email: 'Asha@Example.com' });
    const body = expect.stringContaining(link.consent_link);
    const row = { body, request_id: link.request_id, event_id: link.event_id, status: 'queued', attempts: 0, next_attempt_at: now(), created_at: now(), sent_at: null };
    expect(await storedMessages(a)).toEqual([
      { channel: 'email', recipient: 'asha@example.com', ...row },
      { channel: 'sms', recipient: '+919876543210', ...row },
    ]);
    const silent = await createLink(a, s, { send_sms: false });
    expect((await storedMessages(a)).filter((m) => m.event_id === silent.event_id)).toEqual([]);
  });

  test('§5 an email that is not an address: 400, nothing stored', async () => {
    const a = await tenant();
    const s = await setup(a);
    expectInvalid(await call(a, 'POST', LINK, linkBody(s, { email: 'not-an-email' })), [{ field: 'email', message: 'must be a valid email address' }]);
    await expectNothingStored(a);
  });

  test('a refused create (unknown point by UUID or display_id, wrong asset, inactive point or asset) leaves no request, link, rollup change, outbox row or audit entry', async () => {
    const a = await tenant();
    const s = await setup(a);
    const inactivePoint = await ok(
      await call(a, 'POST', '/api/v1/collection-points', { asset_id: s.assetId, name: 'Old form', notice: 'Retired.', purposes: [{ name: 'Account', required: true }] }),
    );
    await ok(await call(a, 'PATCH', `/api/v1/collection-points/${inactivePoint.id}`, { status: 'inactive' }), 200);
    const inactiveAsset = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'Kiosk', kind: 'offline' }));
    const pointOfInactiveAsset = await ok(
      await call(a, 'POST', '/api/v1/collection-points', { asset_id: inactiveAsset.id, name: 'Kiosk form', notice: 'Paper.', purposes: [{ name: 'Account', required: true }] }),
    );
    await ok(await call(a, 'PATCH', `/api/v1/assets/${inactiveAsset.id}`, { status: 'inactive' }), 200);
    const other = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' }));
    // One link created today, so the day's rollup row exists and a refusal could have changed it.
    await createLink(a, s, { email: 'asha@example.com' });
    const stored = async () => ({
      requests: await storedRequests(a),
      events: await storedEvents(a),
      messages: await storedMessages(a),
      daily: await storedDailyCounts(a),
      audit: await t.db.system.query('select * from audit_log where org_id = $1 order by at, id', [a.id]),
    });
    const before = await stored();
    expect(before.daily).toEqual([{ asset_id: s.assetId, day: now().slice(0, 10), collection_point_id: s.pointId, created: 1, completed: 0 }]);
    expect(before.audit.filter((e) => e.action === 'consent_link.created')).toHaveLength(1);

    const refused: [Record<string, unknown>, number, string][] = [
      [{ collection_point_id: randomUUID() }, 404, 'Collection point not found'],
      [{ collection_point_id: 'CP999' }, 404, 'Collection point not found'],
      [{ asset_id: other.id }, 400, 'asset_id is not the asset of this collection point'],
      [{ asset_id: other.id, collection_point_id: s.displayId }, 400, 'asset_id is not the asset of this collection point'],
      // The body schema takes a urn:uuid: UUID; it names no asset.
      [{ asset_id: `urn:uuid:${s.assetId}` }, 400, 'asset_id is not the asset of this collection point'],
      [{ collection_point_id: inactivePoint.id }, 400, `Collection point ${inactivePoint.display_id} is inactive: no new consent links can be created for it`],
      [{ collection_point_id: inactivePoint.display_id }, 400, `Collection point ${inactivePoint.display_id} is inactive: no new consent links can be created for it`],
      [{ asset_id: inactiveAsset.id, collection_point_id: pointOfInactiveAsset.id }, 400, 'Its asset is inactive: no new consent links can be created for it'],
      [{ asset_id: inactiveAsset.id, collection_point_id: pointOfInactiveAsset.display_id }, 400, 'Its asset is inactive: no new consent links can be created for it'],
    ];
    for (const [overrides, status, error] of refused) {
      const res = await call(a, 'POST', LINK, linkBody(s, { email: 'asha@example.com', ...overrides }));
      expect(res.statusCode, JSON.stringify(overrides)).toBe(status);
      expect(res.json().error).toBe(error);
    }
    expect(await stored()).toEqual(before);
  });

  // The change, its audit entry and its webhook event (its data read in SQL from the row just written)
  // leave in one batch, then COMMIT (docs/architecture.md, "The warm path").
  test('performance rule: a create is one tenant transaction whose change, audit entry and webhook event leave in one batch', async () => {
    const a = await tenant();
    const s = await setup(a);
    const inactive = await ok(
      await call(a, 'POST', '/api/v1/collection-points', { asset_id: s.assetId, name: 'Old form', notice: 'Retired.', purposes: [{ name: 'Account', required: true }] }),
    );
    await ok(await call(a, 'PATCH', `/api/v1/collection-points/${inactive.id}`, { status: 'inactive' }), 200);
    const cases: [Record<string, unknown>, number][] = [
      [{}, 201],
      [{ collection_point_id: s.displayId }, 201],
      [{ collection_point_id: inactive.display_id }, 400],
      [{ collection_point_id: 'CP999' }, 404],
    ];
    for (const [overrides, status] of cases) {
      counter.reset();
      expect((await call(a, 'POST', LINK, linkBody(s, overrides))).statusCode).toBe(status);
      expect(counter.counts, JSON.stringify(overrides)).toMatchObject({ tenant: 1, tenantBatches: 1 });
    }
    counter.reset();
    const grievance = { client_user_id: 'u-1', subject: 'Erase my data', description: 'Please erase my data.', category: 'erasure' };
    expect((await call(a, 'POST', '/grievance', grievance)).statusCode).toBe(201);
    expect(counter.counts).toMatchObject({ tenant: 1, tenantBatches: 1 });
    // With an endpoint subscribed, the event is written, still in that batch.
    await ok(await call(a, 'POST', '/api/v1/webhooks', { url: 'https://93.184.215.14/hook', events: ['grievance.created', 'consent_link.created'] }));
    counter.reset();
    expect((await call(a, 'POST', '/grievance', grievance)).statusCode).toBe(201);
    expect((await call(a, 'POST', LINK, linkBody(s, {}))).statusCode).toBe(201);
    expect(counter.counts).toMatchObject({ tenant: 2, tenantBatches: 2 });
  });

  test('§5 dp_id is optional; the request is stored without one', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { dp_id: undefined });
    expect((await storedRequests(a)).map((r) => [r.id, r.dp_id])).toEqual([[link.request_id, null]]);
  });
});

describe('POST /api/v1/external/public/consent-link/duplicate/{request_id}', () => {
  test('§5 201: a new link instance (new event_id, link and expires_at counted from now), regeneration_count 1; the previous one is superseded', async () => {
    const a = await tenant();
    const s = await setup(a);
    const first = await createLink(a, s, { expiry_hours: 2 });
    const createdAt = now();
    t.clock.advance(3 * HOUR);
    const res = await duplicate(a, first.request_id, {});
    expect(res.statusCode).toBe(201);
    const second = res.json();
    expect(second).toEqual({
      request_id: first.request_id,
      event_id: expect.stringMatching(UUID),
      consent_link: expect.stringMatching(linkPattern(a.slug)),
      expires_at: inHours(24),
      delivery_status: { sms: 'queued' },
      regeneration_count: 1,
    });
    expect(second.event_id).not.toBe(first.event_id);
    expect(second.consent_link).not.toBe(first.consent_link);
    expect(await storedRequests(a)).toEqual([
      {
        id: first.request_id,
        asset_id: s.assetId,
        collection_point_id: s.pointId,
        dp_id: 'dp-1',
        phone: '+919876543210',
        current_event_id: second.event_id,
        created_at: createdAt,
        expires_at: inHours(24),
        completed_at: null,
        consent_action: null,
        regeneration_count: 1,
      },
    ]);
    expect(await storedEvents(a)).toEqual([
      { id: first.event_id, request_id: first.request_id, token_hash: sha256(tokenOf(first.consent_link)), created_at: createdAt, expires_at: first.expires_at, superseded_at: now() },
      { id: second.event_id, request_id: first.request_id, token_hash: sha256(tokenOf(second.consent_link)), created_at: now(), expires_at: inHours(24), superseded_at: null },
    ]);
    expect((await storedMessages(a)).map((m) => [m.event_id, m.channel, m.recipient, m.status, m.created_at])).toEqual([
      [first.event_id, 'sms', '+919876543210', 'queued', createdAt],
      [second.event_id, 'sms', '+919876543210', 'queued', now()],
    ]);
    // A regeneration is the same request: the day's rollup still counts one link.
    expect(await storedDailyCounts(a)).toEqual([{ asset_id: s.assetId, day: createdAt.slice(0, 10), collection_point_id: s.pointId, created: 1, completed: 0 }]);
  });

  test('§5 the body is optional: no body at all means the defaults', async () => {
    const a = await tenant();
    const s = await setup(a);
    const first = await createLink(a, s, { expiry_hours: 1 });
    t.clock.advance(HOUR);
    const res = await duplicate(a, first.request_id);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      request_id: first.request_id,
      event_id: expect.stringMatching(UUID),
      consent_link: expect.stringMatching(linkPattern(a.slug)),
      expires_at: inHours(24),
      delivery_status: { sms: 'queued' },
      regeneration_count: 1,
    });
  });

  test('§5 expiry_hours and send_sms are respected', async () => {
    const a = await tenant();
    const s = await setup(a);
    const first = await createLink(a, s, { expiry_hours: 1 });
    t.clock.advance(2 * HOUR);
    const res = await duplicate(a, first.request_id, { expiry_hours: 6, send_sms: false });
    expect(res.statusCode).toBe(201);
    const second = res.json();
    expect(second).toEqual({
      request_id: first.request_id,
      event_id: expect.stringMatching(UUID),
      consent_link: expect.stringMatching(linkPattern(a.slug)),
      expires_at: inHours(6),
      delivery_status: {},
      regeneration_count: 1,
    });
    expect((await storedRequests(a))[0]!.expires_at).toBe(inHours(6));
    expect((await storedMessages(a)).filter((m) => m.event_id === second.event_id)).toEqual([]);
  });

  test('§5 a bad body (expiry_hours out of range, unknown field): 400, nothing changes', async () => {
    const a = await tenant();
    const s = await setup(a);
    const first = await createLink(a, s, { expiry_hours: 1 });
    t.clock.advance(2 * HOUR);
    const before = { requests: await storedRequests(a), events: await storedEvents(a) };
    expectInvalid(await duplicate(a, first.request_id, { expiry_hours: 25, phone: '+14155550123' }), [
      { field: 'expiry_hours', message: 'must be at most 24' },
      { field: 'phone', message: 'is not an accepted field' },
    ]);
    expect({ requests: await storedRequests(a), events: await storedEvents(a) }).toEqual(before);
  });

  test('§5 check order 1: an unknown or malformed request_id is 404', async () => {
    const a = await tenant();
    await setup(a);
    for (const id of [randomUUID(), 'not-a-uuid', '42']) {
      const res = await duplicate(a, id, {});
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(REQUEST_NOT_FOUND);
    }
  });

  test('§5 check order 2: consent already given is 410, even while the link is still active', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s);
    await consentThrough(a, s, link.event_id);
    const before = { requests: await storedRequests(a), events: await storedEvents(a) };
    const res = await duplicate(a, link.request_id, {});
    expect(res.statusCode).toBe(410);
    expect(res.json()).toEqual({ error: 'Consent was already given for this request: there is nothing to regenerate', code: 'gone' });
    t.clock.advance(25 * HOUR);
    expect((await duplicate(a, link.request_id, {})).statusCode).toBe(410);
    expect({ requests: await storedRequests(a), events: await storedEvents(a) }).toEqual(before);
  });

  test('§5 check order 3: while the current link is still active, 409; at its expires_at it may be regenerated', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { expiry_hours: 2 });
    t.clock.advance(2 * HOUR - 1);
    const res = await duplicate(a, link.request_id, {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: `The current link is still active until ${link.expires_at}: regenerate it once it has expired`, code: 'conflict' });
    expect((await storedEvents(a)).map((e) => e.id)).toEqual([link.event_id]);
    t.clock.advance(1);
    expect(now()).toBe(link.expires_at);
    expect((await duplicate(a, link.request_id, {})).statusCode).toBe(201);
  });

  test('§5 check order 4: 5 regenerations succeed (regeneration_count 1..5); the 6th is 429', async () => {
    const a = await tenant();
    const s = await setup(a);
    const first = await createLink(a, s, { expiry_hours: 1 });
    const eventIds = [first.event_id];
    for (let i = 1; i <= 5; i++) {
      t.clock.advance(HOUR);
      const res = await duplicate(a, first.request_id, { expiry_hours: 1 });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        request_id: first.request_id,
        event_id: expect.stringMatching(UUID),
        consent_link: expect.stringMatching(linkPattern(a.slug)),
        expires_at: inHours(1),
        delivery_status: { sms: 'queued' },
        regeneration_count: i,
      });
      eventIds.push(res.json().event_id);
    }
    // Still active after the 5th: the active check comes first.
    expect((await duplicate(a, first.request_id, {})).statusCode).toBe(409);
    t.clock.advance(HOUR);
    const res = await duplicate(a, first.request_id, {});
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: 'This request has been regenerated 5 times, the most allowed: create a new consent link instead', code: 'regeneration_limit_reached' });
    const requests = await storedRequests(a);
    expect(requests.map((r) => [r.regeneration_count, r.current_event_id])).toEqual([[5, eventIds[5]]]);
    const events = await storedEvents(a);
    expect(events.map((e) => e.id)).toEqual(eventIds);
    expect(events.map((e) => e.superseded_at === null)).toEqual([false, false, false, false, false, true]);
  });
});
