// Consent link history (original spec §2.3, §2.4, §3.3, §4.3, §8; contract §4 masking and timestamps, §5):
// the envelope, every filter and bound, derived status, paging, and the equivalence of the default
// (daily rollup) count strategy with exact counting over varied data. X-Org-Id and auth failures are
// in tenancy.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import type { TenantContext } from '../../src/platform/auth/access.js';

type Tenant = TestOrg & { key: string };
type Detail = { field: string; message: string };
type Response = Awaited<ReturnType<TestApp['call']>>;
type Query = Record<string, string | number | undefined>;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const LINK = '/api/v1/external/public/consent-link';
const HISTORY = `${LINK}/history`;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const NOW = '2026-11-22T09:30:00.000Z';
const TIMESTAMP_MESSAGE = 'must be an ISO 8601 date-time with a time zone';
const ZERO = { total_links: 0, active: 0, completed: 0, expired: 0 };

const tenant = () => t.tenant(['admin']);
const now = () => t.clock.now().toISOString();
const iso = (ms: number) => new Date(ms).toISOString();
const at = (ms: number) => t.clock.set(new Date(ms));
const nowMs = () => t.clock.now().getTime();

function call(a: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) {
  return t.call({ method, url, org: a, key: a.key, body });
}

function history(a: Tenant, query: Query) {
  const qs = new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
  return t.call({ method: 'GET', url: `${HISTORY}?${qs}`, org: a, key: a.key, headers: { 'x-org-id': a.slug } });
}

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

interface Point {
  id: string;
  displayId: string;
  assetId: string;
  purposeIds: string[];
}

async function createAsset(a: Tenant) {
  return (await ok(await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' }))).id as string;
}

async function createPoint(a: Tenant, assetId: string): Promise<Point> {
  const p = await ok(
    await call(a, 'POST', '/api/v1/collection-points', { asset_id: assetId, name: 'Sign-up', notice: 'Notice', purposes: [{ name: 'Account', required: true }, { name: 'Offers' }] }),
  );
  return { id: p.id, displayId: p.display_id, assetId, purposeIds: p.purposes.map((x: { id: string }) => x.id) };
}

async function setup(a: Tenant, points = 1) {
  const assetId = await createAsset(a);
  const list: Point[] = [];
  for (let i = 0; i < points; i++) list.push(await createPoint(a, assetId));
  return { assetId, points: list };
}

/** What the service knows about a request, kept by the test as it drives the API: the independent model. */
interface Model {
  requestId: string;
  eventIds: string[];
  point: Point;
  dpId: string | null;
  phone: string;
  createdAt: number;
  expiresAt: number;
  completedAt: number | null;
  action: string | null;
  regenerations: number;
}

async function link(a: Tenant, p: Point, options: { hours?: number; dpId?: string | null; phone?: string } = {}): Promise<Model> {
  const dpId = options.dpId === undefined ? 'dp-1' : options.dpId;
  const body = { asset_id: p.assetId, collection_point_id: p.id, phone: options.phone ?? '+919876543210', expiry_hours: options.hours ?? 24, ...(dpId === null ? {} : { dp_id: dpId }) };
  const res = await ok(await call(a, 'POST', LINK, body));
  return {
    requestId: res.request_id,
    eventIds: [res.event_id],
    point: p,
    dpId,
    phone: body.phone,
    createdAt: nowMs(),
    expiresAt: nowMs() + body.expiry_hours * HOUR,
    completedAt: null,
    action: null,
    regenerations: 0,
  };
}

async function regenerate(a: Tenant, m: Model, hours = 24) {
  const res = await ok(await call(a, 'POST', `${LINK}/duplicate/${m.requestId}`, { expiry_hours: hours }));
  m.eventIds.push(res.event_id);
  m.expiresAt = nowMs() + hours * HOUR;
  m.regenerations += 1;
}

async function complete(a: Tenant, m: Model, granted: boolean[] = [true, true]) {
  const purposes = m.point.purposeIds.map((id, i) => ({ id, granted: granted[i]! }));
  const rec = await ok(await call(a, 'POST', `/consent/${m.point.id}/consent`, { dp_id: m.dpId ?? 'dp-x', event_id: m.eventIds.at(-1), purposes }));
  m.completedAt = nowMs();
  m.action = rec.consent_action;
  m.dpId ??= 'dp-x';
}

const masked = (phone: string) => {
  const digits = phone.slice(1);
  const visible = digits.length < 10 ? 3 : 4;
  return '+' + '*'.repeat(digits.length - visible) + digits.slice(-visible);
};

const statusOf = (m: Model, nowAt: number) => (m.completedAt !== null ? 'complete' : m.expiresAt <= nowAt ? 'expired' : 'active');

/** A history item as the API must show it, from the model. */
function item(m: Model, nowAt = nowMs()) {
  return {
    request_id: m.requestId,
    event_id: m.eventIds.at(-1),
    collection_point_id: m.point.id,
    asset_id: m.point.assetId,
    phone: masked(m.phone),
    status: statusOf(m, nowAt),
    created_at: iso(m.createdAt),
    expires_at: iso(m.expiresAt),
    completed_at: m.completedAt === null ? null : iso(m.completedAt),
    consent_action: m.action,
    regeneration_count: m.regenerations,
  };
}

/** Newest first: created_at descending, then request_id descending. */
const newestFirst = (ms: Model[]) =>
  [...ms].sort((x, y) => y.createdAt - x.createdAt || (y.requestId > x.requestId ? 1 : y.requestId < x.requestId ? -1 : 0));

function counts(ms: Model[], nowAt: number) {
  const summary = { ...ZERO };
  const byPoint: Record<string, { total: number; active: number; completed: number; expired: number }> = {};
  for (const m of ms) {
    const s = statusOf(m, nowAt);
    const key = s === 'complete' ? 'completed' : s;
    const p = (byPoint[m.point.id] ??= { total: 0, active: 0, completed: 0, expired: 0 });
    p.total += 1;
    p[key] += 1;
    summary.total_links += 1;
    summary[key] += 1;
  }
  return { summary, byPoint };
}

/** The whole envelope the API must answer for query q over the modelled requests of one asset. */
function envelope(ms: Model[], q: Query, nowAt = nowMs()) {
  const from = q.from === undefined ? null : new Date(q.from).getTime();
  const to = q.to === undefined ? nowAt : new Date(q.to).getTime();
  const cp = q.collection_point_id === undefined ? undefined : String(q.collection_point_id);
  const matching = ms.filter(
    (m) =>
      m.point.assetId === String(q.asset_id).toLowerCase() &&
      (cp === undefined || m.point.id === cp.toLowerCase() || m.point.displayId === cp) &&
      (q.event_id === undefined || m.eventIds.includes(String(q.event_id).toLowerCase())) &&
      (q.dp_id === undefined || m.dpId === q.dp_id) &&
      (from === null || m.createdAt >= from) &&
      m.createdAt <= to,
  );
  const limit = Number(q.limit ?? 50);
  const offset = Number(q.offset ?? 0);
  const { summary, byPoint } = counts(matching, nowAt);
  return {
    data: newestFirst(matching)
      .slice(offset, offset + limit)
      .map((m) => item(m, nowAt)),
    count: matching.length,
    summary,
    collectionPointSummary: byPoint,
    filters: {
      assetId: q.asset_id,
      collectionPointId: q.collection_point_id ?? null,
      eventId: q.event_id ?? null,
      dpId: q.dp_id ?? null,
      from: from === null ? null : iso(from),
      to: iso(to),
      limit,
      offset,
    },
  };
}

const byField = (x: Detail, y: Detail) => `${x.field} ${x.message}`.localeCompare(`${y.field} ${y.message}`);

function expectInvalid(res: Response, expected: Detail[]) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect([...body.details].sort(byField)).toEqual([...expected].sort(byField));
  expect(body).toEqual({ error: `Invalid request query: ${body.details.map((d: Detail) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details: body.details });
}

const storedRequests = async (a: TestOrg) => t.db.system.query('select * from consent_requests where org_id = $1 order by id', [a.id]);

describe('the envelope (original spec §2.4)', () => {
  test('§2.4 {data, count, summary, collectionPointSummary, filters}: every field of every item, counts keyed by collection point UUID', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a, 2);
    const [p1, p2] = points as [Point, Point];
    const done = await link(a, p1, { dpId: 'dp-1' });
    await complete(a, done, [true, false]);
    t.clock.advance(MINUTE);
    const open = await link(a, p2, { dpId: null, phone: '+14155550123', hours: 6 });
    t.clock.advance(MINUTE);
    const res = await history(a, { asset_id: assetId });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [
        {
          request_id: open.requestId,
          event_id: open.eventIds[0],
          collection_point_id: p2.id,
          asset_id: assetId,
          phone: '+*******0123',
          status: 'active',
          created_at: iso(Date.parse(NOW) + MINUTE),
          expires_at: iso(Date.parse(NOW) + MINUTE + 6 * HOUR),
          completed_at: null,
          consent_action: null,
          regeneration_count: 0,
        },
        {
          request_id: done.requestId,
          event_id: done.eventIds[0],
          collection_point_id: p1.id,
          asset_id: assetId,
          phone: '+********3210',
          status: 'complete',
          created_at: NOW,
          expires_at: iso(Date.parse(NOW) + DAY),
          completed_at: NOW,
          consent_action: 'partial_consent',
          regeneration_count: 0,
        },
      ],
      count: 2,
      summary: { total_links: 2, active: 1, completed: 1, expired: 0 },
      collectionPointSummary: {
        [p1.id]: { total: 1, active: 0, completed: 1, expired: 0 },
        [p2.id]: { total: 1, active: 1, completed: 0, expired: 0 },
      },
      filters: { assetId, collectionPointId: null, eventId: null, dpId: null, from: null, to: now(), limit: 50, offset: 0 },
    });
  });

  test('§4 phones are masked: + then * per hidden digit, then the last 4 digits (the last 3 below 10 digits); the number never appears', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const cases: [string, string][] = [
      ['+919876543210', '+********3210'],
      ['+14155550123', '+*******0123'],
      ['+1234567890', '+******7890'],
      ['+123456789', '+******789'],
      ['+12345678', '+*****678'],
      ['+123456789012345', '+***********2345'],
    ];
    const models = [];
    for (const [phone] of cases) models.push(await link(a, points[0]!, { phone }));
    const res = await history(a, { asset_id: assetId });
    const byRequest = new Map(res.json().data.map((d: { request_id: string; phone: string }) => [d.request_id, d.phone]));
    expect(models.map((m) => byRequest.get(m.requestId))).toEqual(cases.map(([, mask]) => mask));
    // The whole number never appears (its hidden digits alone, 4 of them for the shortest, can occur by chance inside a random UUID of the body).
    for (const [phone] of cases) expect(res.body).not.toContain(phone.slice(1));
  });

  test('§5 a regenerated request shows its latest link instance: event_id, expires_at and regeneration_count', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!, { hours: 1 });
    t.clock.advance(2 * HOUR);
    await regenerate(a, m, 3);
    t.clock.advance(3 * HOUR);
    await regenerate(a, m, 5);
    const res = await history(a, { asset_id: assetId });
    expect(res.json().data).toEqual([item(m)]);
    expect(res.json().data[0]).toEqual(expect.objectContaining({ event_id: m.eventIds[2], regeneration_count: 2, status: 'active', expires_at: iso(nowMs() + 5 * HOUR) }));
  });

  test('§4.3 asset_id is required: 400', async () => {
    const a = await tenant();
    expectInvalid(await history(a, {}), [{ field: 'asset_id', message: 'is required' }]);
  });

  test('§5 an asset with no links: 200, empty data and zero counts (other assets\' links are not counted)', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const busy = await setup(a);
    await link(a, busy.points[0]!);
    const quiet = await createAsset(a);
    const res = await history(a, { asset_id: quiet });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [],
      count: 0,
      summary: ZERO,
      collectionPointSummary: {},
      filters: { assetId: quiet, collectionPointId: null, eventId: null, dpId: null, from: null, to: now(), limit: 50, offset: 0 },
    });
  });

  test('§3 an unknown or malformed asset_id: 200 with nothing in it, echoed as sent', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { points } = await setup(a);
    await link(a, points[0]!);
    for (const assetId of [randomUUID(), 'not-an-asset', 'CP001']) {
      const res = await history(a, { asset_id: assetId });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        data: [],
        count: 0,
        summary: ZERO,
        collectionPointSummary: {},
        filters: { assetId, collectionPointId: null, eventId: null, dpId: null, from: null, to: now(), limit: 50, offset: 0 },
      });
    }
  });

  test('§2.3 asset_id in upper case names the same asset; the echo keeps what was sent', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!);
    const q = { asset_id: assetId.toUpperCase() };
    const res = await history(a, q);
    expect(res.json()).toEqual({ ...envelope([m], { asset_id: assetId }), filters: { ...envelope([m], q).filters, assetId: assetId.toUpperCase() } });
  });
});

describe('order and paging', () => {
  test('§5 order: created_at descending, then request_id descending (links created at the same instant)', async () => {
    at(Date.parse(NOW) - HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a, 2);
    const ms: Model[] = [];
    for (let i = 0; i < 4; i++) ms.push(await link(a, points[i % 2]!, { dpId: `dp-${i}` }));
    t.clock.advance(MINUTE);
    for (let i = 0; i < 3; i++) ms.push(await link(a, points[i % 2]!, { dpId: `dp-late-${i}` }));
    t.clock.advance(MINUTE);
    const res = await history(a, { asset_id: assetId });
    const expected = [
      ...ms.slice(4).map((m) => m.requestId).sort().reverse(),
      ...ms.slice(0, 4).map((m) => m.requestId).sort().reverse(),
    ];
    expect(res.json().data.map((d: { request_id: string }) => d.request_id)).toEqual(expected);
    expect(res.json()).toEqual(envelope(ms, { asset_id: assetId }));
    // Stable: the same order every time.
    expect((await history(a, { asset_id: assetId })).json().data).toEqual(res.json().data);
  });

  test('§5 paging: limit/offset pages are stable, do not overlap, and together give the whole list; counts cover all pages', async () => {
    at(Date.parse(NOW) - 3 * HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const ms: Model[] = [];
    for (let i = 0; i < 8; i++) {
      ms.push(await link(a, points[0]!, { dpId: `dp-${i}`, hours: 1 }));
      if (i % 3 === 2) t.clock.advance(10 * MINUTE);
    }
    at(Date.parse(NOW));
    const whole = await history(a, { asset_id: assetId, limit: 200 });
    expect(whole.json()).toEqual(envelope(ms, { asset_id: assetId, limit: 200 }));
    const pages = [];
    for (const offset of [0, 3, 6, 9]) {
      const res = await history(a, { asset_id: assetId, limit: 3, offset });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(envelope(ms, { asset_id: assetId, limit: 3, offset }));
      pages.push(...res.json().data);
    }
    expect(pages).toEqual(whole.json().data);
    expect(new Set(pages.map((d) => d.request_id)).size).toBe(8);
  });

  test('§8 limit outside 1-200 or not an integer, offset negative or not an integer: 400', async () => {
    const a = await tenant();
    const assetId = await createAsset(a);
    const cases: [Query, Detail[]][] = [
      [{ limit: 0 }, [{ field: 'limit', message: 'must be at least 1' }]],
      [{ limit: 201 }, [{ field: 'limit', message: 'must be at most 200' }]],
      [{ limit: 'abc' }, [{ field: 'limit', message: 'must be an integer' }]],
      [{ limit: 2.5 }, [{ field: 'limit', message: 'must be an integer' }]],
      [{ offset: -1 }, [{ field: 'offset', message: 'must be at least 0' }]],
      [{ offset: 'x' }, [{ field: 'offset', message: 'must be an integer' }]],
      [{ limit: 0, offset: -1 }, [{ field: 'limit', message: 'must be at least 1' }, { field: 'offset', message: 'must be at least 0' }]],
    ];
    for (const [q, details] of cases) expectInvalid(await history(a, { asset_id: assetId, ...q }), details);
  });

  test('§8 limit 1 and 200 are accepted and echoed as integers', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    for (const limit of [1, 200]) {
      const res = await history(a, { asset_id: assetId, limit, offset: 7 });
      expect(res.statusCode).toBe(200);
      expect(res.json().filters).toEqual({ assetId, collectionPointId: null, eventId: null, dpId: null, from: null, to: now(), limit, offset: 7 });
    }
  });

  test('§5 count, summary and collectionPointSummary cover the whole filtered set, not the page', async () => {
    at(Date.parse(NOW) - 5 * HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a, 2);
    const expired = await link(a, points[0]!, { hours: 1 });
    const done = await link(a, points[1]!);
    await complete(a, done);
    at(Date.parse(NOW) - HOUR);
    const active1 = await link(a, points[0]!);
    const active2 = await link(a, points[1]!);
    at(Date.parse(NOW));
    const res = await history(a, { asset_id: assetId, limit: 1, offset: 1 });
    expect(res.json()).toEqual({
      data: [item(newestFirst([expired, done, active1, active2])[1]!)],
      count: 4,
      summary: { total_links: 4, active: 2, completed: 1, expired: 1 },
      collectionPointSummary: {
        [points[0]!.id]: { total: 2, active: 1, completed: 0, expired: 1 },
        [points[1]!.id]: { total: 2, active: 1, completed: 1, expired: 0 },
      },
      filters: { assetId, collectionPointId: null, eventId: null, dpId: null, from: null, to: now(), limit: 1, offset: 1 },
    });
  });
});

describe('time bounds', () => {
  test('§2.4 to defaults to now and is echoed as normalised ISO with milliseconds; a link created at that instant is included', async () => {
    at(Date.parse('2026-11-22T09:30:00.250Z'));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!);
    const res = await history(a, { asset_id: assetId });
    expect(res.json()).toEqual(envelope([m], { asset_id: assetId }));
    expect(res.json().filters.to).toBe('2026-11-22T09:30:00.250Z');
  });

  test('§4 from and to are normalised to UTC ISO 8601 with milliseconds', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    const res = await history(a, { asset_id: assetId, from: '2026-11-22T15:00:00+05:30', to: '2026-11-22T20:00:00.5+05:30' });
    expect(res.statusCode).toBe(200);
    expect(res.json().filters).toEqual({
      assetId,
      collectionPointId: null,
      eventId: null,
      dpId: null,
      from: '2026-11-22T09:30:00.000Z',
      to: '2026-11-22T14:30:00.500Z',
      limit: 50,
      offset: 0,
    });
  });

  test('§5 from and to bound created_at inclusively', async () => {
    at(Date.parse(NOW) - 3 * HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const ms = [];
    for (let i = 0; i < 3; i++) {
      ms.push(await link(a, points[0]!, { dpId: `dp-${i}` }));
      t.clock.advance(HOUR);
    }
    const [first, , last] = ms as [Model, Model, Model];
    const windows: [Query, Model[]][] = [
      [{ from: iso(first.createdAt), to: iso(last.createdAt) }, ms],
      [{ from: iso(first.createdAt + 1), to: iso(last.createdAt) }, ms.slice(1)],
      [{ from: iso(first.createdAt), to: iso(last.createdAt - 1) }, ms.slice(0, 2)],
      [{ from: iso(last.createdAt), to: iso(last.createdAt) }, [last]],
      [{ from: iso(first.createdAt) }, ms],
      [{ to: iso(first.createdAt) }, [first]],
    ];
    for (const [window, expected] of windows) {
      const q = { asset_id: assetId, ...window };
      const res = await history(a, q);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(envelope(ms, q));
      expect(res.json().count).toBe(expected.length);
    }
  });

  test('§4.3 from in the future: 400; from equal to now is allowed', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    const res = await history(a, { asset_id: assetId, from: iso(Date.parse(NOW) + 1) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid request query: from must be in the past', code: 'validation_failed', details: [{ field: 'from', message: 'must be in the past' }] });
    expect((await history(a, { asset_id: assetId, from: NOW })).statusCode).toBe(200);
    expectInvalid(await history(a, { asset_id: assetId, from: iso(Date.parse(NOW) + HOUR), to: iso(Date.parse(NOW) + 1) }), [
      { field: 'from', message: 'must be in the past' },
      { field: 'to', message: 'must not be before from' },
    ]);
  });

  test('§5 to before from: 400; to equal to from is allowed', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    const res = await history(a, { asset_id: assetId, from: iso(Date.parse(NOW) - HOUR), to: iso(Date.parse(NOW) - HOUR - 1) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid request query: to must not be before from', code: 'validation_failed', details: [{ field: 'to', message: 'must not be before from' }] });
    expect((await history(a, { asset_id: assetId, from: iso(Date.parse(NOW) - HOUR), to: iso(Date.parse(NOW) - HOUR) })).statusCode).toBe(200);
  });

  test('§4 a date-time without a time zone, a date alone, or not a date: 400 listing each', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    expectInvalid(await history(a, { asset_id: assetId, from: '2026-11-22T10:00:00', to: '2026-11-22' }), [
      { field: 'from', message: TIMESTAMP_MESSAGE },
      { field: 'to', message: TIMESTAMP_MESSAGE },
    ]);
    for (const bad of ['2026-11-22', '2026-11-21T10:00:00', 'yesterday', '1732268400', '2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z']) {
      expectInvalid(await history(a, { asset_id: assetId, from: bad }), [{ field: 'from', message: TIMESTAMP_MESSAGE }]);
    }
    // An empty value is a missing one (issue 21): `from=` is no bound at all.
    expect((await history(a, { asset_id: assetId, from: '' })).statusCode).toBe(200);
  });

  test('§4 a timestamp the schema admits but no clock can hold (leap second, hour-only offset): 400, never 500', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const assetId = await createAsset(a);
    for (const bad of ['2026-11-21T23:59:60Z', '2026-11-21T10:00:00+05']) {
      expectInvalid(await history(a, { asset_id: assetId, from: bad }), [{ field: 'from', message: TIMESTAMP_MESSAGE }]);
      expectInvalid(await history(a, { asset_id: assetId, to: bad }), [{ field: 'to', message: TIMESTAMP_MESSAGE }]);
    }
  });

  test('§5 a to in the future is allowed and echoed; it includes everything up to now', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!);
    const q = { asset_id: assetId, to: '2027-01-01T00:00:00Z' };
    const res = await history(a, q);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(envelope([m], q));
    expect(res.json().filters.to).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('filters', () => {
  test('§4.3 collection_point_id as UUID or display_id; echoed as sent; an unknown one matches nothing', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a, 2);
    const [p1, p2] = points as [Point, Point];
    const ms = [await link(a, p1), await link(a, p2), await link(a, p2)];
    for (const cp of [p2.id, p2.id.toUpperCase(), p2.displayId, p1.displayId, 'CP999', randomUUID(), 'cp002']) {
      const q = { asset_id: assetId, collection_point_id: cp };
      const res = await history(a, q);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(envelope(ms, q));
    }
    expect((await history(a, { asset_id: assetId, collection_point_id: 'CP002' })).json().count).toBe(2);
  });

  test('§5 event_id matches the current and any earlier link instance of a request', async () => {
    at(Date.parse(NOW) - 5 * HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const regenerated = await link(a, points[0]!, { hours: 1 });
    const other = await link(a, points[0]!, { dpId: 'dp-2' });
    t.clock.advance(HOUR);
    await regenerate(a, regenerated, 1);
    t.clock.advance(HOUR);
    await regenerate(a, regenerated, 24);
    const ms = [regenerated, other];
    for (const eventId of [...regenerated.eventIds, regenerated.eventIds[0]!.toUpperCase(), other.eventIds[0]!]) {
      const q = { asset_id: assetId, event_id: eventId };
      const res = await history(a, q);
      expect(res.json()).toEqual(envelope(ms, q));
      expect(res.json().count).toBe(1);
    }
    for (const eventId of [randomUUID(), 'not-an-event']) {
      const q = { asset_id: assetId, event_id: eventId };
      expect((await history(a, q)).json()).toEqual(envelope(ms, q));
    }
  });

  test("§5 dp_id matches the request's dp_id", async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const ms = [await link(a, points[0]!, { dpId: 'dp-1' }), await link(a, points[0]!, { dpId: 'dp-2' }), await link(a, points[0]!, { dpId: 'dp-1' }), await link(a, points[0]!, { dpId: null })];
    for (const dpId of ['dp-1', 'dp-2', 'dp-3', 'DP-1']) {
      const q = { asset_id: assetId, dp_id: dpId };
      expect((await history(a, q)).json()).toEqual(envelope(ms, q));
    }
    expect((await history(a, { asset_id: assetId, dp_id: 'dp-1' })).json().count).toBe(2);
  });

  test('§4.3 filters combine', async () => {
    at(Date.parse(NOW) - 2 * HOUR);
    const a = await tenant();
    const { assetId, points } = await setup(a, 2);
    const ms = [await link(a, points[0]!, { dpId: 'dp-1' }), await link(a, points[1]!, { dpId: 'dp-1' })];
    t.clock.advance(HOUR);
    ms.push(await link(a, points[0]!, { dpId: 'dp-1' }), await link(a, points[0]!, { dpId: 'dp-2' }));
    at(Date.parse(NOW));
    const q = { asset_id: assetId, collection_point_id: points[0]!.displayId, dp_id: 'dp-1', from: iso(Date.parse(NOW) - HOUR), limit: 5 };
    const res = await history(a, q);
    expect(res.json()).toEqual(envelope(ms, q));
    expect(res.json().count).toBe(1);
  });
});

describe('status (original spec §3.3, contract §5)', () => {
  test('§5 status is derived from the clock: active becomes expired at expires_at with no write (never swept)', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!, { hours: 2 });
    const stored = await storedRequests(a);
    const statusNow = async () => (await history(a, { asset_id: assetId })).json();
    expect((await statusNow()).data[0].status).toBe('active');
    t.clock.advance(2 * HOUR - 1);
    expect((await statusNow()).summary).toEqual({ total_links: 1, active: 1, completed: 0, expired: 0 });
    t.clock.advance(1);
    const expired = await statusNow();
    expect(expired).toEqual(envelope([m], { asset_id: assetId }));
    expect(expired.data[0].status).toBe('expired');
    expect(expired.summary).toEqual({ total_links: 1, active: 0, completed: 0, expired: 1 });
    expect(await storedRequests(a)).toEqual(stored);
  });

  test('§3.3 complete once consent is submitted, with completed_at and consent_action; it stays complete after expires_at', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!, { hours: 1 });
    t.clock.advance(30 * MINUTE);
    await complete(a, m, [true, true]);
    t.clock.advance(2 * HOUR);
    const res = await history(a, { asset_id: assetId });
    expect(res.json()).toEqual(envelope([m], { asset_id: assetId }));
    expect(res.json().data[0]).toEqual(expect.objectContaining({ status: 'complete', completed_at: iso(Date.parse(NOW) + 30 * MINUTE), consent_action: 'approved' }));
    expect(res.json().summary).toEqual({ total_links: 1, active: 0, completed: 1, expired: 0 });
  });

  test('§5 an expired request regenerated is active again', async () => {
    at(Date.parse(NOW));
    const a = await tenant();
    const { assetId, points } = await setup(a);
    const m = await link(a, points[0]!, { hours: 1 });
    t.clock.advance(HOUR);
    expect((await history(a, { asset_id: assetId })).json().data[0].status).toBe('expired');
    await regenerate(a, m, 2);
    const res = await history(a, { asset_id: assetId });
    expect(res.json()).toEqual(envelope([m], { asset_id: assetId }));
    expect(res.json().data[0].status).toBe('active');
  });
});

describe('count strategies', () => {
  test('the default (daily rollup) counts equal exact counts, and both equal counts made independently, over varied data and filters', async () => {
    const a = await tenant();
    const { assetId, points } = await setup(a, 3);
    const [p1, p2, p3] = points as [Point, Point, Point];
    const otherAsset = await setup(a, 1);
    const end = Date.parse(NOW);
    const start = Date.parse('2026-11-15T00:00:00.000Z');

    // A week of links at assorted times of day (midnight, the last millisecond of a day, mid-day),
    // some at the same instant; each with a fate: completed, left to expire, regenerated (and maybe
    // completed after), or still open. Operations run in time order on the manual clock.
    type Step = { after: number; action: 'approve' | 'decline' | 'regenerate'; hours?: number };
    type Op = { at: number; seq: number; run: () => Promise<void> };
    const ops: Op[] = [];
    const ms: Model[] = [];
    let seq = 0;
    const schedule = (created: number, point: Point, hours: number, steps: Step[], who: { dpId: string; phone: string }) => {
      const slot: { m?: Model } = {};
      ops.push({
        at: created,
        seq: seq++,
        run: async () => {
          slot.m = await link(a, point, { hours, ...who });
          ms.push(slot.m);
        },
      });
      for (const step of steps) {
        const run =
          step.action === 'regenerate' ? () => regenerate(a, slot.m!, step.hours) : () => complete(a, slot.m!, step.action === 'approve' ? [true, true] : [false, true]);
        ops.push({ at: created + step.after, seq: seq++, run });
      }
    };
    const times = ['00:00:00.000', '03:17:42.120', '09:30:00.000', '09:30:00.000', '13:45:10.500', '18:00:00.000', '23:59:59.999'];
    const fates: [number, Step[]][] = [
      [24, [{ after: 20 * MINUTE, action: 'approve' }]],
      [6, []],
      [1, [{ after: 2 * HOUR, action: 'regenerate', hours: 24 }]],
      [1, [{ after: 2 * HOUR, action: 'regenerate', hours: 24 }, { after: 2.5 * HOUR, action: 'approve' }]],
      [12, []],
      [24, [{ after: 20 * MINUTE, action: 'decline' }]],
      [1, [{ after: 2 * HOUR, action: 'regenerate', hours: 24 }, { after: 27 * HOUR, action: 'regenerate', hours: 6 }]],
    ];
    for (let day = 0; day < 8; day++) {
      times.forEach((time, i) => {
        const created = Date.parse(`2026-11-${15 + day}T${time}Z`);
        const [hours, steps] = fates[(day * 3 + i) % fates.length]!;
        schedule(created, [p1, p2, p3][(day + i) % 3]!, hours, steps, { dpId: `dp-${day}-${i % 2}`, phone: i % 2 ? '+919876543210' : '+12345678' });
      });
    }
    // Created more than a day ago, regenerated into a link still active now; and one created at this very instant.
    schedule(end - 30 * HOUR, p2, 1, [{ after: 27 * HOUR, action: 'regenerate', hours: 24 }], { dpId: 'dp-old', phone: '+14155550123' });
    schedule(end, p3, 24, [], { dpId: 'dp-now', phone: '+14155550123' });
    // Another asset's links on the same days: never counted.
    for (let day = 0; day < 7; day++) {
      ops.push({ at: start + day * DAY + 11 * HOUR, seq: seq++, run: async () => void (await link(a, otherAsset.points[0]!)) });
    }
    ops.sort((x, y) => x.at - y.at || x.seq - y.seq);
    for (const op of ops.filter((o) => o.at <= end)) {
      at(op.at);
      await op.run();
    }
    at(end);

    // The seed covers what the strategies must agree on.
    const statuses = ms.map((m) => statusOf(m, end));
    expect(statuses).toContain('active');
    expect(statuses).toContain('expired');
    expect(statuses).toContain('complete');
    expect(ms.some((m) => m.regenerations > 0 && statusOf(m, end) === 'active' && m.createdAt < end - DAY)).toBe(true);
    expect(ms.some((m) => m.createdAt > end - DAY)).toBe(true);

    const ctx: TenantContext = { orgId: a.id, slug: a.slug, orgName: a.slug, actor: { type: 'api_key', id: randomUUID(), scopes: ['admin'] }, requestId: 'test' };
    const windows: Query[] = [
      {},
      { from: '2026-11-16T13:17:00.000Z', to: '2026-11-20T07:45:00.000Z' },
      { from: '2026-11-16T00:00:00.000Z', to: '2026-11-19T23:59:59.999Z' },
      { from: '2026-11-16T00:00:00.000Z', to: '2026-11-20T00:00:00.000Z' },
      { from: '2026-11-15T23:59:59.999Z', to: '2026-11-17T00:00:00.001Z' },
      { from: '2026-11-18T02:00:00.000Z', to: '2026-11-18T20:00:00.000Z' },
      { from: '2026-11-18T00:00:00.000Z', to: '2026-11-18T23:59:59.999Z' },
      { from: '2026-11-17T09:30:00.000Z' },
      { from: iso(end - DAY) },
      { from: '2026-11-22T00:00:00.000Z' },
      { to: '2026-11-19T12:00:00.000Z' },
      { to: '2026-11-21T00:00:00.000Z' },
      { to: '2026-11-30T00:00:00.000Z' },
      { from: '2026-11-16T05:30:00+05:30', to: '2026-11-21T23:00:00-02:00' },
      { from: '2026-11-01T00:00:00.000Z', to: '2026-11-14T23:59:59.999Z' },
    ];
    const pointFilters: Query[] = [{}, { collection_point_id: p1.id }, { collection_point_id: p2.displayId }, { collection_point_id: p3.id.toUpperCase() }];
    const pages: Query[] = [{}, { limit: 5, offset: 3 }];
    const queries: Query[] = [];
    for (const w of windows) for (const cp of pointFilters) queries.push({ asset_id: assetId, ...w, ...cp });
    for (const page of pages.slice(1)) for (const w of windows.slice(0, 4)) queries.push({ asset_id: assetId, ...w, ...page });
    queries.push({ asset_id: assetId, dp_id: 'dp-3-1' }, { asset_id: assetId, event_id: ms[5]!.eventIds[0], collection_point_id: ms[5]!.point.id });

    for (const q of queries) {
      const input = q as Parameters<typeof t.app.services.consentLinks.history>[1];
      const auto = await t.app.services.consentLinks.history(ctx, input);
      const exact = await t.app.services.consentLinks.history(ctx, input, { strategy: 'exact' });
      expect(auto, JSON.stringify(q)).toEqual(exact);
      const res = await history(a, q);
      expect(res.statusCode).toBe(200);
      expect(res.json(), JSON.stringify(q)).toEqual(envelope(ms, q, end));
    }
  });
});
