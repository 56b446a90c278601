// GET /api/v1/consent-links/daily: links per creation day (UTC) over the last N days, for the dashboard's
// overview. Checked against the rows themselves (created, completed, still active, expired), at day
// edges, with regenerations, per asset, and for who may read it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LINK = '/api/v1/external/public/consent-link';
const DAILY = '/api/v1/consent-links/daily';

function call(a: Tenant, method: 'GET' | 'POST', url: string, body?: unknown) {
  return t.call({ method, url, org: a, key: a.key, body });
}
async function ok(res: Awaited<ReturnType<TestApp['call']>>, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function point(a: Tenant) {
  const asset = await ok(await call(a, 'POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' }));
  const cp = await ok(
    await call(a, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice: 'We use your data.', purposes: [{ name: 'Account', required: true }] }),
  );
  return { assetId: asset.id as string, pointId: cp.id as string, purposeId: cp.purposes[0].id as string };
}
type Point = Awaited<ReturnType<typeof point>>;

const link = async (a: Tenant, p: Point, expiryHours = 24) =>
  ok(await call(a, 'POST', LINK, { asset_id: p.assetId, collection_point_id: p.pointId, phone: '+919876543210', dp_id: 'dp-1', expiry_hours: expiryHours, send_sms: false }));
const complete = async (a: Tenant, p: Point, eventId: string) =>
  ok(await call(a, 'POST', `/consent/${p.pointId}/consent`, { dp_id: 'dp-1', event_id: eventId, purposes: [{ id: p.purposeId, granted: true }] }));

/** The same counts computed from the rows, per creation day, for the window ending today. */
async function model(a: Tenant, days: number, assetId?: string) {
  const now = t.clock.now();
  const rows = await t.db.system.query<{ created_at: Date; expires_at: Date; completed_at: Date | null; asset_id: string }>(
    'select created_at, expires_at, completed_at, asset_id from consent_requests where org_id = $1',
    [a.id],
  );
  const first = Math.floor(now.getTime() / DAY) * DAY - (days - 1) * DAY;
  const out = Array.from({ length: days }, (_, i) => ({ date: new Date(first + i * DAY).toISOString().slice(0, 10), created: 0, completed: 0, active: 0, expired: 0 }));
  for (const r of rows) {
    if (assetId && r.asset_id !== assetId) continue;
    const i = Math.floor((r.created_at.getTime() - first) / DAY);
    if (i < 0 || i >= days) continue;
    const d = out[i]!;
    d.created++;
    if (r.completed_at) d.completed++;
    else if (r.expires_at.getTime() > now.getTime()) d.active++;
    else d.expired++;
  }
  return out;
}

describe('GET /api/v1/consent-links/daily', () => {
  test('200: every day of the last 30 (today last), created / completed / active / expired per creation day, with totals', async () => {
    const a = await t.tenant(['admin']);
    const p = await point(a);
    t.clock.set('2026-11-01T23:30:00.000Z');
    const old = await link(a, p, 1); // expires unanswered
    await link(a, p); // created on Nov 1 too
    t.clock.set('2026-11-02T00:10:00.000Z');
    const done = await link(a, p);
    t.clock.advance(HOUR);
    await complete(a, p, done.event_id);
    t.clock.set('2026-11-20T08:00:00.000Z');
    await link(a, p, 2); // expired by the end
    t.clock.set('2026-11-22T09:00:00.000Z');
    const open = await link(a, p); // active at the end
    await link(a, p); // active
    t.clock.set('2026-11-22T12:00:00.000Z');

    const res = await call(a, 'GET', DAILY);
    const body = await ok(res, 200);
    expect(body.from).toBe('2026-10-24');
    expect(body.to).toBe('2026-11-22');
    expect(body.days).toHaveLength(30);
    expect(body.days).toEqual(await model(a, 30));
    const byDate = Object.fromEntries(body.days.map((d: { date: string }) => [d.date, d]));
    expect(byDate['2026-11-01']).toEqual({ date: '2026-11-01', created: 2, completed: 0, active: 0, expired: 2 });
    expect(byDate['2026-11-02']).toEqual({ date: '2026-11-02', created: 1, completed: 1, active: 0, expired: 0 });
    expect(byDate['2026-11-20']).toEqual({ date: '2026-11-20', created: 1, completed: 0, active: 0, expired: 1 });
    expect(byDate['2026-11-22']).toEqual({ date: '2026-11-22', created: 2, completed: 0, active: 2, expired: 0 });
    expect(body.totals).toEqual({ created: 6, completed: 1, active: 2, expired: 3 });
    expect(old.request_id).toBeDefined();
    expect(open.request_id).toBeDefined();
  });

  test('time moves the counts: an active link becomes expired; a regenerated one is active again on its creation day', async () => {
    const a = await t.tenant(['admin']);
    const p = await point(a);
    t.clock.set('2026-11-10T10:00:00.000Z');
    const l = await link(a, p, 1);
    const day = async () => (await ok(await call(a, 'GET', `${DAILY}?days=1`), 200)).days[0];
    expect(await day()).toEqual({ date: '2026-11-10', created: 1, completed: 0, active: 1, expired: 0 });
    t.clock.advance(2 * HOUR);
    expect(await day()).toEqual({ date: '2026-11-10', created: 1, completed: 0, active: 0, expired: 1 });
    await ok(await call(a, 'POST', `${LINK}/duplicate/${l.request_id}`, { expiry_hours: 24, send_sms: false }));
    t.clock.set('2026-11-11T09:00:00.000Z');
    const week = await ok(await call(a, 'GET', `${DAILY}?days=7`), 200);
    expect(week.days.at(-2)).toEqual({ date: '2026-11-10', created: 1, completed: 0, active: 1, expired: 0 });
    expect(week.days).toEqual(await model(a, 7));
  });

  test('days bounds the window: a link created the day before the first day is not counted', async () => {
    const a = await t.tenant(['admin']);
    const p = await point(a);
    t.clock.set('2026-11-14T23:59:59.999Z');
    await link(a, p);
    t.clock.set('2026-11-15T00:00:00.000Z');
    await link(a, p);
    t.clock.set('2026-11-21T18:00:00.000Z');
    const body = await ok(await call(a, 'GET', `${DAILY}?days=7`), 200);
    expect(body.from).toBe('2026-11-15');
    expect(body.totals.created).toBe(1);
    expect((await ok(await call(a, 'GET', `${DAILY}?days=8`), 200)).totals.created).toBe(2);
  });

  test('asset_id: only that asset; an asset of no links (or of another organization) counts zero', async () => {
    const a = await t.tenant(['admin']);
    const b = await t.tenant(['admin']);
    const p1 = await point(a);
    const p2 = await point(a);
    const theirs = await point(b);
    t.clock.set('2026-11-05T10:00:00.000Z');
    await link(a, p1);
    await link(a, p2);
    await link(a, p2);
    await link(b, theirs);
    const total = async (q: string) => (await ok(await call(a, 'GET', `${DAILY}?days=3&${q}`), 200)).totals.created;
    expect(await total('')).toBe(3);
    expect(await total(`asset_id=${p1.assetId}`)).toBe(1);
    expect(await total(`asset_id=${p2.assetId.toUpperCase()}`)).toBe(2);
    expect(await total(`asset_id=${theirs.assetId}`)).toBe(0);
    expect((await ok(await call(a, 'GET', `${DAILY}?days=3&asset_id=${p2.assetId}`), 200)).days).toEqual(await model(a, 3, p2.assetId));
  });

  test('400 for days outside 1-90 or a malformed asset_id, every problem listed', async () => {
    const a = await t.tenant(['admin']);
    const res = await call(a, 'GET', `${DAILY}?days=91&asset_id=nope`);
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([
      { field: 'days', message: 'must be at most 90' },
      { field: 'asset_id', message: 'must be a UUID' },
    ]);
    expect((await call(a, 'GET', `${DAILY}?days=0`)).json().details).toEqual([{ field: 'days', message: 'must be at least 1' }]);
  });

  test('any member may read it (counts only); a consent key may not', async () => {
    const a = await t.tenant(['admin']);
    const user = await t.app.services.users.createUser({ email: `daily-${a.slug}@example.com`, password: 'a long enough password' });
    await t.app.services.users.addMember(a.id, user.id, 'member');
    const login = await ok(await t.call({ method: 'POST', url: '/auth/login', body: { email: user.email, password: 'a long enough password' } }), 200);
    const res = await t.call({ method: 'GET', url: DAILY, org: a, headers: { authorization: `Bearer ${login.access_token}` } });
    expect(res.statusCode).toBe(200);
    const consentKey = await t.key(a, ['consent']);
    const refused = await t.call({ method: 'GET', url: DAILY, org: a, key: consentKey });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'API key lacks the required scope: admin', code: 'missing_scope' });
  });
});
