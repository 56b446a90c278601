// Consents (original spec §4.4; contract §4 grievance user_id, §5 consent records): recording, completing
// a link's request, withdrawing and reading the current consent. One test per rule, through HTTP,
// checking the status, the whole body, and what was stored. Auth, scopes and cross-tenant ids are in
// tenancy.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Detail = { field: string; message: string };
type Response = Awaited<ReturnType<TestApp['call']>>;
type Choice = { id: string; granted: boolean };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINK = '/api/v1/external/public/consent-link';
const HOUR = 3_600_000;
const NOTHING_ON_RECORD = { error: 'No consent on record for this data principal at this collection point', code: 'not_found' };
const EVENT_NOT_FOUND = { error: 'Consent link not found: no link has that event_id', code: 'not_found' };

const tenant = () => t.tenant(['admin']);
const now = () => t.clock.now().toISOString();

function call(a: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, headers?: Record<string, string>) {
  return t.call({ method, url, org: a, key: a.key, body, headers });
}

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

interface Point {
  assetId: string;
  id: string;
  displayId: string;
  /** Account (required), Offers, Research. */
  purposeIds: [string, string, string];
}

async function setup(a: Tenant, purposes: object[] = [{ name: 'Account', required: true }, { name: 'Offers' }, { name: 'Research' }]): Promise<Point> {
  const asset = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' }));
  const point = await ok(await call(a, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice: 'Notice v1', purposes }));
  return { assetId: asset.id, id: point.id, displayId: point.display_id, purposeIds: point.purposes.map((p: { id: string }) => p.id) };
}

async function addPoint(a: Tenant, assetId: string) {
  const point = await ok(
    await call(a, 'POST', '/api/v1/collection-points', { asset_id: assetId, name: 'Checkout', notice: 'Checkout notice', purposes: [{ name: 'Delivery', required: true }] }),
  );
  return { assetId, id: point.id, displayId: point.display_id, purposeIds: point.purposes.map((p: { id: string }) => p.id) };
}

const choices = (p: { purposeIds: string[] }, granted: boolean[] = p.purposeIds.map(() => true)): Choice[] =>
  p.purposeIds.map((id, i) => ({ id, granted: granted[i]! }));

const record = (a: Tenant, pointId: string, body: unknown) => call(a, 'POST', `/consent/${pointId}/consent`, body);
const withdraw = (a: Tenant, pointId: string, dpId: string) => call(a, 'POST', `/consent/${pointId}/withdraw`, { dp_id: dpId });
const current = (a: Tenant, pointId: string, dpId?: string) =>
  call(a, 'GET', `/consent/${pointId}/consent${dpId === undefined ? '' : `?dp_id=${encodeURIComponent(dpId)}`}`);

async function createLink(a: Tenant, p: Point, overrides: Record<string, unknown> = {}) {
  return ok(await call(a, 'POST', LINK, { asset_id: p.assetId, collection_point_id: p.id, phone: '+919876543210', dp_id: 'dp-1', ...overrides }));
}

async function historyItem(a: Tenant, p: Point, requestId: string) {
  const res = await call(a, 'GET', `${LINK}/history?asset_id=${p.assetId}`, undefined, { 'x-org-id': a.slug });
  expect(res.statusCode).toBe(200);
  return res.json().data.find((r: { request_id: string }) => r.request_id === requestId);
}

/** The record body POST answers at the current clock time. */
function expectedRecord(p: Point, dpId: string, action: string, purposes: Choice[], extra: Record<string, unknown> = {}) {
  return {
    consent_id: expect.stringMatching(UUID),
    collection_point_id: p.id,
    dp_id: dpId,
    consent_action: action,
    purposes,
    notice_version: 1,
    request_id: null,
    event_id: null,
    created_at: now(),
    ...extra,
  };
}

function plain(rows: Record<string, unknown>[]) {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
}

const storedRecords = async (a: TestOrg) =>
  plain(
    await t.db.system.query(
      `select id as consent_id, collection_point_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, created_at, channel, data_principal_id
         from consent_records where org_id = $1 order by created_at, id`,
      [a.id],
    ),
  );

const storedPrincipals = async (a: TestOrg) =>
  plain(await t.db.system.query('select id, dp_id, created_at from data_principals where org_id = $1 order by created_at, dp_id', [a.id]));

const storedRequests = async (a: TestOrg) =>
  plain(
    await t.db.system.query(
      'select id, dp_id, current_event_id, completed_at, consent_action, regeneration_count from consent_requests where org_id = $1 order by created_at, id',
      [a.id],
    ),
  );

const storedDailyCounts = async (a: TestOrg) =>
  plain(
    await t.db.system.query(
      // A day's counts are kept in several rows (migration 0085): what counts is their sum.
      'select collection_point_id, sum(created)::int as created, sum(completed)::int as completed from consent_link_daily_counts where org_id = $1 group by day, collection_point_id order by day',
      [a.id],
    ),
  );

/** What a stored record looks like for a POST answer: the answer plus its channel and data principal. */
const asStored = (rec: Record<string, unknown>, dataPrincipalId: string, channel = 'api') => ({ ...rec, channel, data_principal_id: dataPrincipalId });

const byField = (x: Detail, y: Detail) => `${x.field} ${x.message}`.localeCompare(`${y.field} ${y.message}`);

function expectInvalid(res: Response, part: 'body' | 'query', expected: Detail[]) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect([...body.details].sort(byField)).toEqual([...expected].sort(byField));
  expect(body).toEqual({ error: `Invalid request ${part}: ${body.details.map((d: Detail) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details: body.details });
}

async function expectNothingRecorded(a: TestOrg) {
  expect(await storedRecords(a)).toEqual([]);
  expect(await storedPrincipals(a)).toEqual([]);
}

describe('POST /consent/{collection_point_id}/consent without event_id', () => {
  test('§5 201: the record {consent_id, collection_point_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, created_at}; stored', async () => {
    const a = await tenant();
    const p = await setup(a);
    const res = await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) });
    expect(res.statusCode).toBe(201);
    const rec = res.json();
    expect(rec).toEqual(expectedRecord(p, 'dp-1', 'approved', choices(p)));
    const principals = await storedPrincipals(a);
    expect(principals).toEqual([{ id: expect.stringMatching(UUID), dp_id: 'dp-1', created_at: now() }]);
    expect(await storedRecords(a)).toEqual([asStored(rec, principals[0]!.id as string)]);
  });

  test('§5 the collection point may be named by its display_id in the path', async () => {
    const a = await tenant();
    const p = await setup(a);
    const rec = await ok(await record(a, p.displayId, { dp_id: 'dp-1', purposes: choices(p) }));
    expect(rec).toEqual(expectedRecord(p, 'dp-1', 'approved', choices(p)));
  });

  test('§5 an unknown collection point: 404, nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    for (const id of [randomUUID(), 'CP404']) {
      const res = await record(a, id, { dp_id: 'dp-1', purposes: choices(p) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Collection point not found', code: 'not_found' });
    }
    await expectNothingRecorded(a);
  });

  test('§5 an inactive collection point collects no consent: 400, nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await call(a, 'PATCH', `/api/v1/collection-points/${p.id}`, { status: 'inactive' }), 200);
    const res = await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Collection point CP001 is inactive: it collects no consent', code: 'bad_request' });
    await expectNothingRecorded(a);
  });

  test('§5 consent_action: approved (every purpose granted), partial_consent (some), declined (none)', async () => {
    const a = await tenant();
    const p = await setup(a);
    const cases: [boolean[], string][] = [
      [[true, true, true], 'approved'],
      [[true, false, true], 'partial_consent'],
      [[true, false, false], 'partial_consent'],
      [[false, false, false], 'declined'],
    ];
    for (const [granted, action] of cases) {
      const rec = await ok(await record(a, p.id, { dp_id: `dp-${action}-${granted.join()}`, purposes: choices(p, granted) }));
      expect(rec).toEqual(expectedRecord(p, `dp-${action}-${granted.join()}`, action, choices(p, granted)));
    }
    expect((await storedRecords(a)).map((r) => r.consent_action)).toEqual(cases.map(([, action]) => action));
  });

  test('§5 a refused required purpose makes the action declined, even when the others are granted', async () => {
    const a = await tenant();
    const p = await setup(a);
    const rec = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p, [false, true, true]) }));
    expect(rec).toEqual(expectedRecord(p, 'dp-1', 'declined', choices(p, [false, true, true])));
    expect((await storedRecords(a)).map((r) => r.consent_action)).toEqual(['declined']);
  });

  test('§5 without required purposes, some granted is partial_consent', async () => {
    const a = await tenant();
    const p = await setup(a, [{ name: 'Offers' }, { name: 'Research' }]);
    const rec = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: [{ id: p.purposeIds[0], granted: false }, { id: p.purposeIds[1], granted: true }] }));
    expect(rec.consent_action).toBe('partial_consent');
  });

  test("§5 purposes are recorded in the collection point's order, whatever order they were sent in", async () => {
    const a = await tenant();
    const p = await setup(a);
    const sent = [...choices(p, [true, false, true])].reverse();
    const rec = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: sent }));
    expect(rec.purposes).toEqual(choices(p, [true, false, true]));
    expect((await storedRecords(a))[0]!.purposes).toEqual(choices(p, [true, false, true]));
  });

  test('§5 every purpose exactly once: missing, repeated and unknown ids are each listed in a 400; nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    const [account, offers, research] = p.purposeIds;
    const res = await record(a, p.id, {
      dp_id: 'dp-1',
      purposes: [
        { id: account, granted: true },
        { id: 'no-such-purpose', granted: true },
        { id: account, granted: false },
      ],
    });
    const details = [
      { field: 'purposes.1.id', message: 'is not a purpose of this collection point' },
      { field: 'purposes.2.id', message: 'is listed more than once' },
      { field: 'purposes', message: `must include purpose ${offers} (Offers)` },
      { field: 'purposes', message: `must include purpose ${research} (Research)` },
    ];
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: `Invalid purposes: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details });
    await expectNothingRecorded(a);
  });

  test("§5 another collection point's purpose ids are unknown here", async () => {
    const a = await tenant();
    const p = await setup(a);
    const q = await addPoint(a, p.assetId);
    const res = await record(a, p.id, { dp_id: 'dp-1', purposes: [...choices(p), { id: q.purposeIds[0], granted: true }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Invalid purposes: purposes.3.id is not a purpose of this collection point', code: 'validation_failed',
      details: [{ field: 'purposes.3.id', message: 'is not a purpose of this collection point' }],
    });
    await expectNothingRecorded(a);
  });

  test('§5 a malformed body (missing dp_id, empty purposes, non-boolean granted, unknown fields): 400 listing each', async () => {
    const a = await tenant();
    const p = await setup(a);
    expectInvalid(await record(a, p.id, { purposes: [], channel: 'sms' }), 'body', [
      { field: 'dp_id', message: 'is required' },
      { field: 'purposes', message: 'must NOT have fewer than 1 items' },
      { field: 'channel', message: 'is not an accepted field' },
    ]);
    expectInvalid(await record(a, p.id, { dp_id: '  ', purposes: [{ id: p.purposeIds[0], granted: 'yes', name: 'Account' }] }), 'body', [
      { field: 'dp_id', message: 'must not be empty' },
      { field: 'purposes.0.granted', message: 'must be true or false' },
      { field: 'purposes.0.name', message: 'is not an accepted field' },
    ]);
    await expectNothingRecorded(a);
  });

  test('§5 records are append-only: a second consent is a second record, the first is kept as it was', async () => {
    const a = await tenant();
    const p = await setup(a);
    const first = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    t.clock.advance(60_000);
    const second = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p, [true, false, false]) }));
    expect(second).toEqual(expectedRecord(p, 'dp-1', 'partial_consent', choices(p, [true, false, false])));
    expect(second.consent_id).not.toBe(first.consent_id);
    const dp = (await storedPrincipals(a))[0]!.id as string;
    expect(await storedRecords(a)).toEqual([asStored(first, dp), asStored(second, dp)]);
  });

  test('§5 the record carries the notice version the data principal saw', async () => {
    const a = await tenant();
    const p = await setup(a);
    const v1 = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    await ok(await call(a, 'PATCH', `/api/v1/collection-points/${p.id}`, { notice: 'Notice v2' }), 200);
    const v2 = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    expect([v1.notice_version, v2.notice_version]).toEqual([1, 2]);
    expect((await storedRecords(a)).map((r) => r.notice_version)).toEqual([1, 2]);
  });

  test('§4 a data principal is recorded once per dp_id, whatever the number of consents and collection points', async () => {
    const a = await tenant();
    const p = await setup(a);
    const q = await addPoint(a, p.assetId);
    const firstAt = now();
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    t.clock.advance(1000);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p, [true, false, false]) }));
    await ok(await record(a, q.id, { dp_id: 'dp-1', purposes: choices(q) }));
    const secondAt = now();
    await ok(await record(a, q.id, { dp_id: 'dp-2', purposes: choices(q) }));
    const principals = await storedPrincipals(a);
    expect(principals).toEqual([
      { id: expect.stringMatching(UUID), dp_id: 'dp-1', created_at: firstAt },
      { id: expect.stringMatching(UUID), dp_id: 'dp-2', created_at: secondAt },
    ]);
    const idOf = Object.fromEntries(principals.map((d) => [d.dp_id, d.id]));
    expect((await storedRecords(a)).map((r) => [r.dp_id, r.data_principal_id])).toEqual([
      ['dp-1', idOf['dp-1']],
      ['dp-1', idOf['dp-1']],
      ['dp-1', idOf['dp-1']],
      ['dp-2', idOf['dp-2']],
    ]);
  });

  test('§4 a grievance filed later by that dp_id gets user_id = the data principal; others stay null', async () => {
    const a = await tenant();
    const p = await setup(a);
    const ticket = (clientUserId: string) =>
      call(a, 'POST', '/grievance', { client_user_id: clientUserId, subject: 'Access', description: 'Send my data', category: 'data_access' });
    const before = await ok(await ticket('dp-1'));
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    const after = await ok(await ticket('dp-1'));
    const stranger = await ok(await ticket('dp-unknown'));
    const dp = (await storedPrincipals(a))[0]!.id;
    expect([before.user_id, after.user_id, stranger.user_id]).toEqual([null, dp, null]);
    // Older tickets are not back-filled.
    expect((await ok(await call(a, 'GET', '/grievance/user/dp-1'), 200)).map((g: { user_id: string | null }) => g.user_id)).toEqual([dp, null]);
  });
});

describe('POST /consent/{collection_point_id}/consent with event_id', () => {
  test("§5 completes that link's request: the record names it; history shows complete, completed_at = now, the action", async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p);
    t.clock.advance(HOUR);
    const res = await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p, [true, true, false]) });
    expect(res.statusCode).toBe(201);
    const rec = res.json();
    expect(rec).toEqual(
      expectedRecord(p, 'dp-1', 'partial_consent', choices(p, [true, true, false]), { request_id: link.request_id, event_id: link.event_id }),
    );
    expect(await historyItem(a, p, link.request_id)).toEqual({
      request_id: link.request_id,
      event_id: link.event_id,
      collection_point_id: p.id,
      asset_id: p.assetId,
      phone: '+********3210',
      status: 'complete',
      created_at: new Date(t.clock.now().getTime() - HOUR).toISOString(),
      expires_at: link.expires_at,
      completed_at: now(),
      consent_action: 'partial_consent',
      regeneration_count: 0,
    });
    const dp = (await storedPrincipals(a))[0]!.id as string;
    expect(await storedRecords(a)).toEqual([asStored(rec, dp)]);
    expect(await storedRequests(a)).toEqual([
      { id: link.request_id, dp_id: 'dp-1', current_event_id: link.event_id, completed_at: now(), consent_action: 'partial_consent', regeneration_count: 0 },
    ]);
    expect(await storedDailyCounts(a)).toEqual([{ collection_point_id: p.id, created: 1, completed: 1 }]);
  });

  test("§5 a request created without dp_id takes the consent's dp_id", async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p, { dp_id: undefined });
    await ok(await record(a, p.id, { dp_id: 'dp-7', event_id: link.event_id, purposes: choices(p) }));
    expect((await storedRequests(a)).map((r) => [r.dp_id, r.consent_action])).toEqual([['dp-7', 'approved']]);
  });

  test('§3 an unknown or malformed event_id: 404, nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    await createLink(a, p);
    for (const eventId of [randomUUID(), 'not-an-event']) {
      const res = await record(a, p.id, { dp_id: 'dp-1', event_id: eventId, purposes: choices(p) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(EVENT_NOT_FOUND);
    }
    await expectNothingRecorded(a);
    expect((await storedRequests(a)).map((r) => r.completed_at)).toEqual([null]);
  });

  test("§5 a dp_id other than the request's: 400, nothing recorded, the request stays open", async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p, { dp_id: 'dp-1' });
    const res = await record(a, p.id, { dp_id: 'dp-2', event_id: link.event_id, purposes: choices(p) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "dp_id is not the consent request's data principal", code: 'validation_failed', details: [{ field: 'dp_id', message: 'does not match the consent request' }] });
    await expectNothingRecorded(a);
    expect((await storedRequests(a)).map((r) => r.completed_at)).toEqual([null]);
  });

  test('§5 a completed request: 409, nothing more recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p);
    const first = await ok(await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p) }));
    const completedAt = now();
    t.clock.advance(1000);
    const res = await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p, [false, false, false]) });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'Consent was already given for this request', code: 'conflict' });
    expect((await storedRecords(a)).map((r) => r.consent_id)).toEqual([first.consent_id]);
    expect((await storedRequests(a)).map((r) => [r.completed_at, r.consent_action])).toEqual([[completedAt, 'approved']]);
  });

  test('§5 an expired link: 410 (at expires_at and after), nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p, { expiry_hours: 2 });
    t.clock.advance(2 * HOUR);
    expect(now()).toBe(link.expires_at);
    for (const step of [0, HOUR]) {
      t.clock.advance(step);
      const res = await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p) });
      expect(res.statusCode).toBe(410);
      expect(res.json()).toEqual({ error: 'This link has expired: the organization can send a new one', code: 'gone' });
    }
    await expectNothingRecorded(a);
    expect((await storedRequests(a)).map((r) => r.completed_at)).toEqual([null]);
    expect((await historyItem(a, p, link.request_id)).status).toBe('expired');
  });

  test('§5 a superseded link (an earlier event_id after a regeneration): 410, nothing recorded; the new one works', async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p, { expiry_hours: 1 });
    t.clock.advance(HOUR);
    const renewed = await ok(await call(a, 'POST', `${LINK}/duplicate/${link.request_id}`, {}));
    const res = await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p) });
    expect(res.statusCode).toBe(410);
    expect(res.json()).toEqual({ error: 'This link was replaced by a newer one: use the latest link of the request', code: 'gone' });
    await expectNothingRecorded(a);
    const rec = await ok(await record(a, p.id, { dp_id: 'dp-1', event_id: renewed.event_id, purposes: choices(p) }));
    expect(rec).toEqual(expectedRecord(p, 'dp-1', 'approved', choices(p), { request_id: link.request_id, event_id: renewed.event_id }));
  });

  test('§5 an event_id of a link for another collection point: 400, nothing recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    const q = await addPoint(a, p.assetId);
    const link = await createLink(a, q);
    const res = await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'event_id belongs to a link of another collection point', code: 'validation_failed', details: [{ field: 'event_id', message: 'is a link of another collection point' }] });
    await expectNothingRecorded(a);
  });
});

describe('POST /consent/{collection_point_id}/withdraw', () => {
  test("§5 201: a new record, action revoked, every purpose refused; the link request's consent_action becomes revoked", async () => {
    const a = await tenant();
    const p = await setup(a);
    const link = await createLink(a, p);
    const given = await ok(await record(a, p.id, { dp_id: 'dp-1', event_id: link.event_id, purposes: choices(p) }));
    const completedAt = now();
    t.clock.advance(60_000);
    const res = await withdraw(a, p.id, 'dp-1');
    expect(res.statusCode).toBe(201);
    const revoked = res.json();
    expect(revoked).toEqual(expectedRecord(p, 'dp-1', 'revoked', choices(p, [false, false, false])));
    const dp = (await storedPrincipals(a))[0]!.id as string;
    expect(await storedRecords(a)).toEqual([asStored(given, dp), asStored(revoked, dp)]);
    expect(await historyItem(a, p, link.request_id)).toEqual({
      request_id: link.request_id,
      event_id: link.event_id,
      collection_point_id: p.id,
      asset_id: p.assetId,
      phone: '+********3210',
      status: 'complete',
      created_at: completedAt,
      expires_at: link.expires_at,
      completed_at: completedAt,
      consent_action: 'revoked',
      regeneration_count: 0,
    });
  });

  test('§5 withdrawing twice: 409, nothing more recorded', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    await ok(await withdraw(a, p.id, 'dp-1'));
    const res = await withdraw(a, p.id, 'dp-1');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'Consent was already withdrawn', code: 'conflict' });
    expect((await storedRecords(a)).map((r) => r.consent_action)).toEqual(['approved', 'revoked']);
  });

  test('§5 withdrawing with nothing on record (for that data principal at that collection point): 404', async () => {
    const a = await tenant();
    const p = await setup(a);
    const q = await addPoint(a, p.assetId);
    await ok(await record(a, q.id, { dp_id: 'dp-1', purposes: choices(q) }));
    for (const [pointId, dpId] of [[p.id, 'dp-1'], [q.id, 'dp-2']]) {
      const res = await withdraw(a, pointId!, dpId!);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOTHING_ON_RECORD);
    }
    expect((await storedRecords(a)).map((r) => r.consent_action)).toEqual(['approved']);
  });

  test('§5 a consent given after a withdrawal can be withdrawn again', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    t.clock.advance(1000);
    await ok(await withdraw(a, p.id, 'dp-1'));
    t.clock.advance(1000);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p, [true, false, false]) }));
    t.clock.advance(1000);
    await ok(await withdraw(a, p.id, 'dp-1'));
    expect((await storedRecords(a)).map((r) => r.consent_action)).toEqual(['approved', 'revoked', 'partial_consent', 'revoked']);
  });

  test('§5 a withdraw body without dp_id, or with unknown fields: 400', async () => {
    const a = await tenant();
    const p = await setup(a);
    expectInvalid(await call(a, 'POST', `/consent/${p.id}/withdraw`, { reason: 'changed my mind' }), 'body', [
      { field: 'dp_id', message: 'is required' },
      { field: 'reason', message: 'is not an accepted field' },
    ]);
  });
});

describe('GET /consent/{collection_point_id}/consent', () => {
  test('§5 200: each purpose with granted from the latest record, and the notice versions', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    t.clock.advance(1000);
    const latest = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p, [true, false, true]) }));
    const res = await current(a, p.id, 'dp-1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      dp_id: 'dp-1',
      collection_point_id: p.id,
      consent_id: latest.consent_id,
      consent_action: 'partial_consent',
      notice_version: 1,
      current_notice_version: 1,
      recorded_at: now(),
      purposes: [
        { id: p.purposeIds[0], name: 'Account', required: true, granted: true },
        { id: p.purposeIds[1], name: 'Offers', required: false, granted: false },
        { id: p.purposeIds[2], name: 'Research', required: false, granted: true },
      ],
    });
    expect((await current(a, p.displayId, 'dp-1')).json()).toEqual(res.json());
  });

  test('§5 after a notice change: notice_version of the record vs current_notice_version; a purpose added since is not granted', async () => {
    const a = await tenant();
    const p = await setup(a);
    const given = await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    const recordedAt = now();
    t.clock.advance(1000);
    const point = await ok(
      await call(a, 'PATCH', `/api/v1/collection-points/${p.id}`, {
        notice: 'Notice v2',
        purposes: [{ id: p.purposeIds[0], name: 'Account', required: true }, { id: p.purposeIds[1], name: 'Offers' }, { name: 'Partners' }],
      }),
      200,
    );
    expect(point.notice_version).toBe(2);
    const res = await current(a, p.id, 'dp-1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      dp_id: 'dp-1',
      collection_point_id: p.id,
      consent_id: given.consent_id,
      consent_action: 'approved',
      notice_version: 1,
      current_notice_version: 2,
      recorded_at: recordedAt,
      purposes: [
        { id: p.purposeIds[0], name: 'Account', required: true, granted: true },
        { id: p.purposeIds[1], name: 'Offers', required: false, granted: true },
        { id: point.purposes[2].id, name: 'Partners', required: false, granted: false },
      ],
    });
  });

  test('§5 after a withdrawal: revoked, every purpose refused', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    t.clock.advance(1000);
    const revoked = await ok(await withdraw(a, p.id, 'dp-1'));
    const res = await current(a, p.id, 'dp-1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      dp_id: 'dp-1',
      collection_point_id: p.id,
      consent_id: revoked.consent_id,
      consent_action: 'revoked',
      notice_version: 1,
      current_notice_version: 1,
      recorded_at: now(),
      purposes: [
        { id: p.purposeIds[0], name: 'Account', required: true, granted: false },
        { id: p.purposeIds[1], name: 'Offers', required: false, granted: false },
        { id: p.purposeIds[2], name: 'Research', required: false, granted: false },
      ],
    });
  });

  test('§5 nothing on record for that data principal: 404; an unknown collection point: 404', async () => {
    const a = await tenant();
    const p = await setup(a);
    await ok(await record(a, p.id, { dp_id: 'dp-1', purposes: choices(p) }));
    const none = await current(a, p.id, 'dp-2');
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual(NOTHING_ON_RECORD);
    const unknown = await current(a, randomUUID(), 'dp-1');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Collection point not found', code: 'not_found' });
  });

  test('§5 dp_id missing or empty: 400', async () => {
    const a = await tenant();
    const p = await setup(a);
    expectInvalid(await current(a, p.id), 'query', [{ field: 'dp_id', message: 'is required' }]);
    // An empty query value counts as missing (issue 21 class 7).
    expectInvalid(await current(a, p.id, ''), 'query', [{ field: 'dp_id', message: 'is required' }]);
  });
});
