// Assets and collection points (contract §5): one test per rule, through HTTP, checking the status, the
// whole body, and what was stored. Auth, scopes and cross-tenant ids are in tenancy.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Detail = { field: string; message: string };
type Response = Awaited<ReturnType<TestApp['call']>>;
type Purpose = { id: string; name: string; description: string; required: boolean };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KINDS = ['website', 'mobile_app', 'call_center', 'offline', 'other'];
const KIND_MESSAGE = `must be one of: ${KINDS.join(', ')}`;
const STATUS_MESSAGE = 'must be one of: active, inactive';
const DISPLAY_ID_MESSAGE = 'must be 2-32 characters of A-Z, 0-9, _ and -';
const ASSET_NOT_FOUND = { error: 'Asset not found', code: 'not_found' };
const POINT_NOT_FOUND = { error: 'Collection point not found', code: 'not_found' };

const tenant = () => t.tenant(['admin']);
const now = () => t.clock.now().toISOString();

function call(a: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) {
  return t.call({ method, url, org: a, key: a.key, body });
}

async function created(res: Response, status = 201) {
  expect(res.statusCode).toBe(status);
  return res.json();
}

const createAsset = async (a: Tenant, body: object = { name: 'Website', kind: 'website' }) => created(await call(a, 'POST', '/api/v1/assets', body));

function pointBody(assetId: string, overrides: Record<string, unknown> = {}) {
  return {
    asset_id: assetId,
    name: 'Sign-up form',
    notice: 'We use your data to run your account and, if you agree, to send offers.',
    purposes: [{ name: 'Account', description: 'Running your account', required: true }, { name: 'Offers' }],
    ...overrides,
  };
}

const createPoint = async (a: Tenant, assetId: string, overrides: Record<string, unknown> = {}) =>
  created(await call(a, 'POST', '/api/v1/collection-points', pointBody(assetId, overrides)));

const byField = (x: Detail, y: Detail) => `${x.field} ${x.message}`.localeCompare(`${y.field} ${y.message}`);

/** A 400 whose body is exactly {error, details}, details exactly these problems (any order). */
function expectInvalid(res: Response, part: 'body' | 'query', expected: Detail[]) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect([...body.details].sort(byField)).toEqual([...expected].sort(byField));
  expect(body).toEqual({ error: `Invalid request ${part}: ${body.details.map((d: Detail) => `${d.field} ${d.message}`).join('; ')}`, code: 'validation_failed', details: body.details });
}

/** Rows as the API would show them: timestamps as ISO strings. */
function plain(rows: Record<string, unknown>[]) {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v])));
}

const storedAssets = async (a: Tenant) =>
  plain(await t.db.system.query('select id, name, kind, status, created_at, updated_at from assets where org_id = $1 order by created_at, id', [a.id]));

const storedPoints = async (a: Tenant) =>
  plain(
    await t.db.system.query(
      `select id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at
         from collection_points where org_id = $1 order by created_at, id`,
      [a.id],
    ),
  );

describe('assets', () => {
  test('§5 POST /api/v1/assets: 201 with the asset itself (no envelope), status active', async () => {
    const a = await tenant();
    const res = await call(a, 'POST', '/api/v1/assets', { name: 'Mobile app', kind: 'mobile_app' });
    expect(res.statusCode).toBe(201);
    const asset = res.json();
    expect(asset).toEqual({ id: expect.stringMatching(UUID), name: 'Mobile app', kind: 'mobile_app', status: 'active', created_at: now(), updated_at: now() });
    expect(await storedAssets(a)).toEqual([asset]);
  });

  test('§5 every asset kind is accepted', async () => {
    const a = await tenant();
    for (const kind of KINDS) expect((await createAsset(a, { name: `A ${kind}`, kind })).kind).toBe(kind);
    expect((await storedAssets(a)).map((r) => r.kind)).toEqual(KINDS);
  });

  test('§5 a kind outside the list, or a missing name: 400 listing each problem, nothing stored', async () => {
    const a = await tenant();
    expectInvalid(await call(a, 'POST', '/api/v1/assets', { name: 'Kiosk', kind: 'kiosk' }), 'body', [{ field: 'kind', message: KIND_MESSAGE }]);
    expectInvalid(await call(a, 'POST', '/api/v1/assets', { kind: 'website' }), 'body', [{ field: 'name', message: 'is required' }]);
    expect(await storedAssets(a)).toEqual([]);
  });

  test('§3 unknown fields are refused (a status on create among them)', async () => {
    const a = await tenant();
    const res = await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website', status: 'inactive', colour: 'red' });
    expectInvalid(res, 'body', [
      { field: 'status', message: 'is not an accepted field' },
      { field: 'colour', message: 'is not an accepted field' },
    ]);
    expect(await storedAssets(a)).toEqual([]);
  });

  test('§5 GET /api/v1/assets: {data, count, limit, offset}, newest first, default limit 50 and offset 0', async () => {
    const a = await tenant();
    const assets = [];
    for (const name of ['First', 'Second', 'Third']) {
      assets.push(await createAsset(a, { name, kind: 'website' }));
      t.clock.advance(1000);
    }
    const res = await call(a, 'GET', '/api/v1/assets');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [...assets].reverse(), count: 3, limit: 50, offset: 0 });
  });

  test('§5 assets created at the same instant still list in a stable order, newest first', async () => {
    const a = await tenant();
    const assets = [];
    for (let i = 0; i < 3; i++) assets.push(await createAsset(a, { name: `Same time ${i}`, kind: 'offline' }));
    const res = await call(a, 'GET', '/api/v1/assets');
    expect(res.json().data).toEqual([...assets].reverse());
  });

  test('§5 limit and offset page the list; count covers the whole list', async () => {
    const a = await tenant();
    const assets = [];
    for (let i = 0; i < 5; i++) {
      assets.push(await createAsset(a, { name: `Asset ${i}`, kind: 'website' }));
      t.clock.advance(1000);
    }
    const newest = [...assets].reverse();
    const page = await call(a, 'GET', '/api/v1/assets?limit=2&offset=1');
    expect(page.statusCode).toBe(200);
    expect(page.json()).toEqual({ data: newest.slice(1, 3), count: 5, limit: 2, offset: 1 });
    const past = await call(a, 'GET', '/api/v1/assets?limit=2&offset=10');
    expect(past.json()).toEqual({ data: [], count: 5, limit: 2, offset: 10 });
    const max = await call(a, 'GET', '/api/v1/assets?limit=200');
    expect(max.json()).toEqual({ data: newest, count: 5, limit: 200, offset: 0 });
  });

  test('§5 limit outside 1-200 or not an integer, offset negative: 400', async () => {
    const a = await tenant();
    const cases: [string, Detail][] = [
      ['limit=0', { field: 'limit', message: 'must be at least 1' }],
      ['limit=201', { field: 'limit', message: 'must be at most 200' }],
      ['limit=abc', { field: 'limit', message: 'must be an integer' }],
      ['limit=1.5', { field: 'limit', message: 'must be an integer' }],
      ['offset=-1', { field: 'offset', message: 'must be at least 0' }],
    ];
    for (const [query, detail] of cases) expectInvalid(await call(a, 'GET', `/api/v1/assets?${query}`), 'query', [detail]);
  });

  test('§5 the status filter lists only assets in that status', async () => {
    const a = await tenant();
    const active = await createAsset(a, { name: 'Live', kind: 'website' });
    const retired = await createAsset(a, { name: 'Old', kind: 'website' });
    const patched = await created(await call(a, 'PATCH', `/api/v1/assets/${retired.id}`, { status: 'inactive' }), 200);
    expect((await call(a, 'GET', '/api/v1/assets?status=active')).json()).toEqual({ data: [active], count: 1, limit: 50, offset: 0 });
    expect((await call(a, 'GET', '/api/v1/assets?status=inactive')).json()).toEqual({ data: [patched], count: 1, limit: 50, offset: 0 });
    expectInvalid(await call(a, 'GET', '/api/v1/assets?status=deleted'), 'query', [{ field: 'status', message: STATUS_MESSAGE }]);
  });

  test('§5 GET /api/v1/assets/{id}: 200 the asset', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const res = await call(a, 'GET', `/api/v1/assets/${asset.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(asset);
  });

  test('§3 an unknown or malformed asset id: 404 Asset not found, on GET and PATCH', async () => {
    const a = await tenant();
    for (const id of [randomUUID(), 'not-a-uuid', '123']) {
      const get = await call(a, 'GET', `/api/v1/assets/${id}`);
      expect(get.statusCode).toBe(404);
      expect(get.json()).toEqual(ASSET_NOT_FOUND);
      const patch = await call(a, 'PATCH', `/api/v1/assets/${id}`, { name: 'Renamed' });
      expect(patch.statusCode).toBe(404);
      expect(patch.json()).toEqual(ASSET_NOT_FOUND);
    }
    expect(await storedAssets(a)).toEqual([]);
  });

  test('§5 PATCH /api/v1/assets/{id}: name, kind and status change; 200 the whole asset; updated_at moves', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    t.clock.advance(60_000);
    const res = await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { name: 'Call centre', kind: 'call_center', status: 'inactive' });
    expect(res.statusCode).toBe(200);
    const updated = { ...asset, name: 'Call centre', kind: 'call_center', status: 'inactive', updated_at: now() };
    expect(res.json()).toEqual(updated);
    expect(await storedAssets(a)).toEqual([updated]);
  });

  test('§5 PATCH changes only the fields given', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    t.clock.advance(1000);
    const res = await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { kind: 'other' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...asset, kind: 'other', updated_at: now() });
    t.clock.advance(1000);
    const back = await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { status: 'active' });
    expect(back.json()).toEqual({ ...asset, kind: 'other', updated_at: now() });
    expect((await call(a, 'GET', `/api/v1/assets/${asset.id}`)).json()).toEqual(back.json());
  });

  test('§5 an empty PATCH is a 400 naming the updatable fields; nothing changes', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    expectInvalid(await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, {}), 'body', [
      { field: 'body', message: 'must contain at least one of: name, kind, status' },
    ]);
    expect(await storedAssets(a)).toEqual([asset]);
  });

  test('§5 PATCH with unknown fields, a bad kind or a bad status: 400 listing each, nothing changes', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    expectInvalid(await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { name: 'X', id: randomUUID() }), 'body', [
      { field: 'id', message: 'is not an accepted field' },
    ]);
    expectInvalid(await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { kind: 'kiosk', status: 'deleted' }), 'body', [
      { field: 'kind', message: KIND_MESSAGE },
      { field: 'status', message: STATUS_MESSAGE },
    ]);
    expect(await storedAssets(a)).toEqual([asset]);
  });
});

describe('collection points', () => {
  test('§5 POST /api/v1/collection-points: 201 the collection point, CP001, notice_version 1, purposes with ids, active', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id));
    expect(res.statusCode).toBe(201);
    const point = res.json();
    expect(point).toEqual({
      id: expect.stringMatching(UUID),
      display_id: 'CP001',
      asset_id: asset.id,
      name: 'Sign-up form',
      notice: 'We use your data to run your account and, if you agree, to send offers.',
      notice_version: 1,
      purposes: [
        { id: expect.any(String), name: 'Account', description: 'Running your account', required: true },
        { id: expect.any(String), name: 'Offers', description: '', required: false },
      ],
      status: 'active',
      created_at: now(),
      updated_at: now(),
    });
    expect(point.purposes[0].id).not.toBe(point.purposes[1].id);
    expect(await storedPoints(a)).toEqual([point]);
  });

  test('§5 display_id is assigned CP001, CP002, CP003 in order of creation', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createPoint(a, asset.id, { name: `Point ${i}` })).display_id);
    expect(ids).toEqual(['CP001', 'CP002', 'CP003']);
    expect((await storedPoints(a)).map((p) => p.display_id)).toEqual(['CP001', 'CP002', 'CP003']);
  });

  test('§5 display_id numbering is per organization', async () => {
    const a = await tenant();
    const b = await tenant();
    expect((await createPoint(a, (await createAsset(a)).id)).display_id).toBe('CP001');
    expect((await createPoint(b, (await createAsset(b)).id)).display_id).toBe('CP001');
  });

  test('§5 a given display_id is used as given', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id, { display_id: 'CHECKOUT_2026-A' });
    expect(point.display_id).toBe('CHECKOUT_2026-A');
    expect((await storedPoints(a)).map((p) => p.display_id)).toEqual(['CHECKOUT_2026-A']);
  });

  test('§5 a display_id already taken: 409, nothing stored; another organization may use it', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const first = await createPoint(a, asset.id, { display_id: 'WEB' });
    const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id, { display_id: 'WEB', name: 'Another' }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'display_id WEB is already used by another collection point', code: 'conflict' });
    expect(await storedPoints(a)).toEqual([first]);
    const b = await tenant();
    expect((await createPoint(b, (await createAsset(b)).id, { display_id: 'WEB' })).display_id).toBe('WEB');
  });

  test('§5 a display_id taken by an automatic assignment is also a 409', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    await createPoint(a, asset.id);
    const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id, { display_id: 'CP001' }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'display_id CP001 is already used by another collection point', code: 'conflict' });
  });

  test('§5 display_id must be 2-32 characters of A-Z0-9_-: lower case, too short, too long or other characters are 400', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    for (const displayId of ['cp001', 'Cp1', 'C', '', 'A'.repeat(33), 'CP 1', 'CP.1']) {
      const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id, { display_id: displayId }));
      expectInvalid(res, 'body', [{ field: 'display_id', message: DISPLAY_ID_MESSAGE }]);
    }
    expect(await storedPoints(a)).toEqual([]);
    expect((await createPoint(a, asset.id, { display_id: 'A'.repeat(32) })).display_id).toBe('A'.repeat(32));
    expect((await createPoint(a, asset.id, { display_id: 'Z9' })).display_id).toBe('Z9');
  });

  test('§5 automatic display_ids skip a number someone chose by hand', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    await createPoint(a, asset.id, { display_id: 'CP002' });
    const auto1 = await createPoint(a, asset.id);
    const auto2 = await createPoint(a, asset.id);
    expect([auto1.display_id, auto2.display_id]).toEqual(['CP001', 'CP003']);
    expect((await storedPoints(a)).map((p) => p.display_id)).toEqual(['CP002', 'CP001', 'CP003']);
  });

  test('§5 purposes get distinct service-assigned ids; description defaults to empty, required to false', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id, {
      purposes: [{ name: 'Analytics' }, { name: 'Marketing', required: false }, { name: 'Service', description: 'Delivering the service', required: true }],
    });
    expect(point.purposes).toEqual([
      { id: expect.any(String), name: 'Analytics', description: '', required: false },
      { id: expect.any(String), name: 'Marketing', description: '', required: false },
      { id: expect.any(String), name: 'Service', description: 'Delivering the service', required: true },
    ]);
    expect(new Set(point.purposes.map((p: Purpose) => p.id)).size).toBe(3);
    expect((await storedPoints(a))[0]!.purposes).toEqual(point.purposes);
  });

  test('§5 purposes cannot be given ids on create, and at least one purpose is needed', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const chosen = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id, { purposes: [{ id: 'mine', name: 'Analytics' }] }));
    expect(chosen.statusCode).toBe(400);
    expect(chosen.json()).toEqual({
      error: 'Invalid purposes: purposes.0.id is not a purpose of this collection point', code: 'validation_failed',
      details: [{ field: 'purposes.0.id', message: 'is not a purpose of this collection point' }],
    });
    expectInvalid(await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id, { purposes: [] })), 'body', [
      { field: 'purposes', message: 'must NOT have fewer than 1 items' },
    ]);
    expect(await storedPoints(a)).toEqual([]);
  });

  test('§5 required fields and unknown fields: 400 listing each problem', async () => {
    const a = await tenant();
    const res = await call(a, 'POST', '/api/v1/collection-points', { status: 'active', purposes: [{ name: 'Offers', colour: 'red' }] });
    expectInvalid(res, 'body', [
      { field: 'asset_id', message: 'is required' },
      { field: 'name', message: 'is required' },
      { field: 'notice', message: 'is required' },
      { field: 'status', message: 'is not an accepted field' },
      { field: 'purposes.0.colour', message: 'is not an accepted field' },
    ]);
    expect(await storedPoints(a)).toEqual([]);
  });

  test('§5 an asset_id naming no asset of the organization: 400 with details on asset_id', async () => {
    const a = await tenant();
    const other = await tenant();
    const foreign = await createAsset(other);
    for (const assetId of [randomUUID(), foreign.id]) {
      const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(assetId));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'asset_id names no asset of this organization', code: 'validation_failed', details: [{ field: 'asset_id', message: 'no such asset' }] });
    }
    expectInvalid(await call(a, 'POST', '/api/v1/collection-points', pointBody('not-a-uuid')), 'body', [{ field: 'asset_id', message: 'must be a UUID' }]);
    expect(await storedPoints(a)).toEqual([]);
  });

  test('§5 a collection point cannot be created under an inactive asset: 400', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    await call(a, 'PATCH', `/api/v1/assets/${asset.id}`, { status: 'inactive' });
    const res = await call(a, 'POST', '/api/v1/collection-points', pointBody(asset.id));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'The asset is inactive: reactivate it first', code: 'validation_failed', details: [{ field: 'asset_id', message: 'asset is inactive' }] });
    expect(await storedPoints(a)).toEqual([]);
  });

  test('§5 GET /api/v1/collection-points/{id}: by UUID and by display_id', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    for (const id of [point.id, point.id.toUpperCase(), 'CP001']) {
      const res = await call(a, 'GET', `/api/v1/collection-points/${id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(point);
    }
  });

  test('§3 an unknown collection point (UUID, display_id, or a display_id in the wrong case): 404', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    await createPoint(a, asset.id);
    for (const id of [randomUUID(), 'CP002', 'cp001', 'not a point']) {
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Renamed' }]] as const) {
        const res = await call(a, method, `/api/v1/collection-points/${encodeURIComponent(id)}`, body);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual(POINT_NOT_FOUND);
      }
    }
  });

  test('§5 GET /api/v1/collection-points?asset_id=: that asset\'s points, oldest first, in the list envelope', async () => {
    const a = await tenant();
    const web = await createAsset(a, { name: 'Web', kind: 'website' });
    const app = await createAsset(a, { name: 'App', kind: 'mobile_app' });
    const p1 = await createPoint(a, web.id, { name: 'Sign-up' });
    t.clock.advance(1000);
    const other = await createPoint(a, app.id, { name: 'In-app' });
    t.clock.advance(1000);
    const p2 = await createPoint(a, web.id, { name: 'Checkout' });
    const res = await call(a, 'GET', `/api/v1/collection-points?asset_id=${web.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [p1, p2], count: 2, limit: 50, offset: 0 });
    expect((await call(a, 'GET', '/api/v1/collection-points')).json()).toEqual({ data: [p1, other, p2], count: 3, limit: 50, offset: 0 });
    expect((await call(a, 'GET', `/api/v1/collection-points?asset_id=${web.id}&limit=1&offset=1`)).json()).toEqual({ data: [p2], count: 2, limit: 1, offset: 1 });
    expect((await call(a, 'GET', `/api/v1/collection-points?asset_id=${web.id}&offset=5`)).json()).toEqual({ data: [], count: 2, limit: 50, offset: 5 });
    expect((await call(a, 'GET', `/api/v1/collection-points?asset_id=${randomUUID()}`)).json()).toEqual({ data: [], count: 0, limit: 50, offset: 0 });
  });

  test('§5 the collection point list refuses a malformed asset_id and out-of-range paging: 400', async () => {
    const a = await tenant();
    expectInvalid(await call(a, 'GET', '/api/v1/collection-points?asset_id=nope'), 'query', [{ field: 'asset_id', message: 'must be a UUID' }]);
    expectInvalid(await call(a, 'GET', '/api/v1/collection-points?limit=201&offset=-1'), 'query', [
      { field: 'limit', message: 'must be at most 200' },
      { field: 'offset', message: 'must be at least 0' },
    ]);
  });

  test('§5 PATCH a changed notice: notice_version 2; the same notice again: version unchanged', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    t.clock.advance(1000);
    const changed = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, { notice: 'A new notice.' });
    expect(changed.statusCode).toBe(200);
    const v2 = { ...point, notice: 'A new notice.', notice_version: 2, updated_at: now() };
    expect(changed.json()).toEqual(v2);
    t.clock.advance(1000);
    const same = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, { notice: 'A new notice.' });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toEqual({ ...v2, updated_at: now() });
    expect(await storedPoints(a)).toEqual([same.json()]);
  });

  test('§5 PATCH name alone leaves notice_version as it was', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    const res = await call(a, 'PATCH', `/api/v1/collection-points/CP001`, { name: 'Renamed' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...point, name: 'Renamed', updated_at: now() });
  });

  test('§5 PATCH purposes: existing ids are kept, items without an id are new, and notice_version increases', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    const [account, offers] = point.purposes as Purpose[];
    t.clock.advance(1000);
    const res = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, {
      purposes: [
        { id: account!.id, name: 'Your account', description: 'Running your account', required: true },
        { name: 'Research', description: 'Product research' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const updated = res.json();
    expect(updated).toEqual({
      ...point,
      notice_version: 2,
      purposes: [
        { id: account!.id, name: 'Your account', description: 'Running your account', required: true },
        { id: expect.any(String), name: 'Research', description: 'Product research', required: false },
      ],
      updated_at: now(),
    });
    expect([account!.id, offers!.id]).not.toContain(updated.purposes[1].id);
    expect(await storedPoints(a)).toEqual([updated]);
  });

  test('§5 PATCH the same purposes again (same ids, same fields): notice_version unchanged', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    t.clock.advance(1000);
    const res = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, { purposes: point.purposes, notice: point.notice });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...point, updated_at: now() });
    expect(await storedPoints(a)).toEqual([res.json()]);
  });

  test('§5 PATCH purposes naming an id the collection point does not have, or one id twice: 400 listing each, nothing changes', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    const [account] = point.purposes as Purpose[];
    const res = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, {
      purposes: [
        { id: 'no-such-purpose', name: 'Ghost' },
        { id: account!.id, name: 'Account' },
        { id: account!.id, name: 'Account again' },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Invalid purposes: purposes.0.id is not a purpose of this collection point; purposes.2.id is listed twice', code: 'validation_failed',
      details: [
        { field: 'purposes.0.id', message: 'is not a purpose of this collection point' },
        { field: 'purposes.2.id', message: 'is listed twice' },
      ],
    });
    expect(await storedPoints(a)).toEqual([point]);
  });

  test('§5 deactivate with PATCH {"status": "inactive"}; it then lists under status=inactive', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    t.clock.advance(1000);
    const res = await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, { status: 'inactive' });
    expect(res.statusCode).toBe(200);
    const inactive = { ...point, status: 'inactive', updated_at: now() };
    expect(res.json()).toEqual(inactive);
    expect((await call(a, 'GET', '/api/v1/collection-points?status=inactive')).json()).toEqual({ data: [inactive], count: 1, limit: 50, offset: 0 });
    expect((await call(a, 'GET', '/api/v1/collection-points?status=active')).json()).toEqual({ data: [], count: 0, limit: 50, offset: 0 });
    expect(await storedPoints(a)).toEqual([inactive]);
  });

  test('§5 an empty PATCH, unknown fields, or a bad status: 400 listing each, nothing changes', async () => {
    const a = await tenant();
    const asset = await createAsset(a);
    const point = await createPoint(a, asset.id);
    expectInvalid(await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, {}), 'body', [
      { field: 'body', message: 'must contain at least one of: name, notice, purposes, status' },
    ]);
    expectInvalid(await call(a, 'PATCH', `/api/v1/collection-points/${point.id}`, { display_id: 'NEW', asset_id: randomUUID(), status: 'gone' }), 'body', [
      { field: 'display_id', message: 'is not an accepted field' },
      { field: 'asset_id', message: 'is not an accepted field' },
      { field: 'status', message: STATUS_MESSAGE },
    ]);
    expect(await storedPoints(a)).toEqual([point]);
  });
});
