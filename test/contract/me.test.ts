// The data principal's own API under /api/v1/me (contract §7), through HTTP on both stores: their
// consents (current state, history, give or change, withdraw), with their token only. Each rule with its
// status and whole body, what was stored, the audit entry with the person as the actor, and another
// person's records never reached.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Response = Awaited<ReturnType<TestApp['call']>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOTHING_HERE = { error: 'No consent on record at this collection point', code: 'not_found' };
const NOTHING_ON_RECORD = { error: 'No consent on record for this data principal at this collection point', code: 'not_found' };
const POINT_NOT_FOUND = { error: 'Collection point not found', code: 'not_found' };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const now = () => t.clock.now().toISOString();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function mint(a: Tenant, dpId: string): Promise<string> {
  return (await ok(await t.call({ method: 'POST', url: `/api/v1/data-principals/${dpId}/tokens`, org: a, key: a.key, body: {} }))).access_token;
}

/** A request with a data principal's token. */
function me(a: Tenant, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
  return t.call({ method, url, org: a, headers: bearer(token), body });
}

interface Point {
  id: string;
  displayId: string;
  name: string;
  notice: string;
  purposes: { id: string; name: string; required: boolean }[];
}

async function asset(a: Tenant): Promise<string> {
  return (await ok(await t.call({ method: 'POST', url: '/api/v1/assets', org: a, key: a.key, body: { name: 'App', kind: 'mobile_app' } }))).id;
}

async function point(a: Tenant, assetId: string, name = 'Sign-up', purposes: object[] = [{ name: 'Account', required: true }, { name: 'Offers' }]): Promise<Point> {
  const p = await ok(await t.call({ method: 'POST', url: '/api/v1/collection-points', org: a, key: a.key, body: { asset_id: assetId, name, notice: `${name} notice`, purposes } }));
  return { id: p.id, displayId: p.display_id, name, notice: `${name} notice`, purposes: p.purposes.map(({ id, name: n, required }: Point['purposes'][number]) => ({ id, name: n, required })) };
}

const all = (p: Point, granted: boolean[] = p.purposes.map(() => true)) => p.purposes.map((x, i) => ({ id: x.id, granted: granted[i]! }));

/** The organization records a consent for dpId through its own API. */
const orgRecord = (a: Tenant, p: Point, dpId: string, granted?: boolean[]) =>
  t.call({ method: 'POST', url: `/consent/${p.id}/consent`, org: a, key: a.key, body: { dp_id: dpId, purposes: all(p, granted) } });

/** The record body the consent routes answer, at the current clock time. */
function recordBody(p: Point, dpId: string, action: string, purposes: { id: string; granted: boolean }[], noticeVersion = 1) {
  return {
    consent_id: expect.stringMatching(UUID),
    collection_point_id: p.id,
    dp_id: dpId,
    consent_action: action,
    purposes,
    notice_version: noticeVersion,
    request_id: null,
    event_id: null,
    created_at: now(),
  };
}

async function principalId(a: TestOrg, dpId: string): Promise<string> {
  return (await t.db.system.query<{ id: string }>('select id from data_principals where org_id = $1 and dp_id = $2', [a.id, dpId]))[0]!.id;
}

async function auditOf(a: TestOrg, action: string) {
  return (
    await t.db.system.query<{ actor_type: string; actor_id: string; target_type: string; target_id: string; details: unknown }>(
      'select actor_type, actor_id, target_type, target_id, details from audit_log where org_id = $1 and action = $2 order by at, id',
      [a.id, action],
    )
  ).map((r) => ({ ...r }));
}

async function channels(a: TestOrg, dpId: string) {
  return (await t.db.system.query<{ channel: string; consent_action: string }>('select channel, consent_action from consent_records where org_id = $1 and dp_id = $2 order by created_at, id', [a.id, dpId])).map((r) => ({ ...r }));
}

describe('GET /api/v1/me/consents', () => {
  test('an empty array before any consent; then the current state at every collection point, newest first, purposes as the point has them now', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    expect(await ok(await me(a, token, 'GET', '/api/v1/me/consents'), 200)).toEqual([]);

    const assetId = await asset(a);
    const signUp = await point(a, assetId);
    const checkout = await point(a, assetId, 'Checkout', [{ name: 'Delivery', required: true }]);
    const first = await ok(await orgRecord(a, signUp, 'dp-1', [true, false]));
    t.clock.advance(1000);
    const firstAt = now();
    const second = await ok(await orgRecord(a, checkout, 'dp-1'));
    // Someone else's consent is not theirs.
    await ok(await orgRecord(a, signUp, 'dp-2'));
    // A purpose added after their consent shows as not granted, under the notice as it is now.
    t.clock.advance(1000);
    const edited = await ok(
      await t.call({
        method: 'PATCH',
        url: `/api/v1/collection-points/${signUp.id}`,
        org: a,
        key: a.key,
        body: { notice: 'Sign-up notice v2', purposes: [...signUp.purposes.map(({ id, name, required }) => ({ id, name, required })), { name: 'Research' }] },
      }),
      200,
    );
    const research = edited.purposes[2].id;

    const res = await me(a, token, 'GET', '/api/v1/me/consents');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      {
        collection_point: { id: checkout.id, display_id: checkout.displayId, name: 'Checkout', notice: 'Checkout notice', notice_version: 1 },
        consent_action: 'approved',
        purposes: [{ ...checkout.purposes[0], granted: true }],
        given_at: firstAt,
        consent_id: second.consent_id,
      },
      {
        collection_point: { id: signUp.id, display_id: signUp.displayId, name: 'Sign-up', notice: 'Sign-up notice v2', notice_version: 2 },
        consent_action: 'partial_consent',
        purposes: [
          { ...signUp.purposes[0], granted: true },
          { ...signUp.purposes[1], granted: false },
          { id: research, name: 'Research', required: false, granted: false },
        ],
        given_at: first.created_at,
        consent_id: first.consent_id,
      },
    ]);
  });
});

describe('POST /api/v1/me/consents/{collection_point_id}', () => {
  test('201: a new record for the token\'s data principal, channel rights_center, the current notice version; the audit names them as the actor', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    await ok(await t.call({ method: 'PATCH', url: `/api/v1/collection-points/${p.id}`, org: a, key: a.key, body: { notice: 'Sign-up notice v2' } }), 200);
    const token = await mint(a, 'dp-1');
    const res = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}`, { purposes: all(p, [true, false]) });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(recordBody(p, 'dp-1', 'partial_consent', all(p, [true, false]), 2));
    expect(await channels(a, 'dp-1')).toEqual([{ channel: 'rights_center', consent_action: 'partial_consent' }]);
    expect(await auditOf(a, 'consent.recorded')).toEqual([
      {
        actor_type: 'data_principal',
        actor_id: await principalId(a, 'dp-1'),
        target_type: 'consent',
        target_id: res.json().consent_id,
        details: { collection_point_id: p.id, consent_action: 'partial_consent', notice_version: 2, request_id: null, event_id: null, channel: 'rights_center' },
      },
    ]);
    // A change is another record: the earlier one stays.
    t.clock.advance(1000);
    const changed = await me(a, token, 'POST', `/api/v1/me/consents/${p.displayId}`, { purposes: all(p) });
    expect(changed.statusCode).toBe(201);
    expect(changed.json()).toEqual(recordBody(p, 'dp-1', 'approved', all(p), 2));
    expect(await channels(a, 'dp-1')).toEqual([
      { channel: 'rights_center', consent_action: 'partial_consent' },
      { channel: 'rights_center', consent_action: 'approved' },
    ]);
  });

  test('dp_id is never taken from the body; every purpose exactly once; a refused required purpose is declined', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    const token = await mint(a, 'dp-1');
    const withDp = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}`, { dp_id: 'dp-2', purposes: all(p) });
    expect(withDp.statusCode).toBe(400);
    expect(withDp.json()).toEqual({ error: 'Invalid request body: dp_id is not an accepted field', code: 'validation_failed', details: [{ field: 'dp_id', message: 'is not an accepted field' }] });
    const missing = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}`, { purposes: [{ id: p.purposes[0]!.id, granted: true }] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({
      error: `Invalid purposes: purposes must include purpose ${p.purposes[1]!.id} (Offers)`,
      code: 'validation_failed',
      details: [{ field: 'purposes', message: `must include purpose ${p.purposes[1]!.id} (Offers)` }],
    });
    const declined = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}`, { purposes: all(p, [false, true]) });
    expect(declined.statusCode).toBe(201);
    expect(declined.json()).toEqual(recordBody(p, 'dp-1', 'declined', all(p, [false, true])));
    expect(await channels(a, 'dp-2')).toEqual([]);
  });

  test('unknown collection point 404 (another organization\'s included); an inactive one 400', async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const p = await point(a, await asset(a));
    const theirs = await point(b, await asset(b));
    const token = await mint(a, 'dp-1');
    for (const id of [theirs.id, 'CP999', 'not-a-uuid']) {
      const res = await me(a, token, 'POST', `/api/v1/me/consents/${id}`, { purposes: all(p) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(POINT_NOT_FOUND);
    }
    await ok(await t.call({ method: 'PATCH', url: `/api/v1/collection-points/${p.id}`, org: a, key: a.key, body: { status: 'inactive' } }), 200);
    const inactive = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}`, { purposes: all(p) });
    expect(inactive.statusCode).toBe(400);
    expect(inactive.json()).toEqual({ error: `Collection point ${p.displayId} is inactive: it collects no consent`, code: 'bad_request' });
  });
});

describe('POST /api/v1/me/consents/{collection_point_id}/withdraw', () => {
  test('201 in one call: action revoked, every purpose refused, channel rights_center; again 409; the organization sees it withdrawn', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    const given = await ok(await orgRecord(a, p, 'dp-1'));
    const token = await mint(a, 'dp-1');
    t.clock.advance(1000);
    const res = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}/withdraw`);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(recordBody(p, 'dp-1', 'revoked', all(p, [false, false])));
    expect(await channels(a, 'dp-1')).toEqual([
      { channel: 'api', consent_action: 'approved' },
      { channel: 'rights_center', consent_action: 'revoked' },
    ]);
    expect(await auditOf(a, 'consent.withdrawn')).toEqual([
      {
        actor_type: 'data_principal',
        actor_id: await principalId(a, 'dp-1'),
        target_type: 'consent',
        target_id: res.json().consent_id,
        details: { collection_point_id: p.id, consent_action: 'revoked', notice_version: 1, previous_consent_id: given.consent_id },
      },
    ]);
    const again = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}/withdraw`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: 'Consent was already withdrawn', code: 'conflict' });
    const current = await ok(await t.call({ method: 'GET', url: `/consent/${p.id}/consent?dp_id=dp-1`, org: a, key: a.key }), 200);
    expect(current.consent_action).toBe('revoked');
    expect(current.consent_id).toBe(res.json().consent_id);
  });

  test('404 when they have nothing on record there, even when another person has', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    await ok(await orgRecord(a, p, 'dp-2'));
    const token = await mint(a, 'dp-1');
    const res = await me(a, token, 'POST', `/api/v1/me/consents/${p.id}/withdraw`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(NOTHING_ON_RECORD);
    expect(await channels(a, 'dp-2')).toEqual([{ channel: 'api', consent_action: 'approved' }]);
  });

  test('the same withdrawal through the organization API gives the same record', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    await ok(await orgRecord(a, p, 'dp-1'));
    await ok(await orgRecord(a, p, 'dp-2'));
    const mine = await ok(await me(a, await mint(a, 'dp-1'), 'POST', `/api/v1/me/consents/${p.id}/withdraw`));
    const theirs = await ok(await t.call({ method: 'POST', url: `/consent/${p.id}/withdraw`, org: a, key: a.key, body: { dp_id: 'dp-2' } }));
    const apart = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'consent_id' && k !== 'dp_id'));
    expect(apart(mine)).toEqual(apart(theirs));
    expect([mine.dp_id, theirs.dp_id]).toEqual(['dp-1', 'dp-2']);
  });
});

describe('GET /api/v1/me/consents/{collection_point_id}/history', () => {
  test('every record of theirs there, newest first, with its channel; by UUID or display_id', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    const token = await mint(a, 'dp-1');
    const given = await ok(await orgRecord(a, p, 'dp-1'));
    await ok(await orgRecord(a, p, 'dp-2'));
    t.clock.advance(1000);
    const withdrawn = await ok(await me(a, token, 'POST', `/api/v1/me/consents/${p.id}/withdraw`));
    const expected = [
      { consent_id: withdrawn.consent_id, collection_point_id: p.id, consent_action: 'revoked', purposes: all(p, [false, false]), notice_version: 1, channel: 'rights_center', created_at: withdrawn.created_at },
      { consent_id: given.consent_id, collection_point_id: p.id, consent_action: 'approved', purposes: all(p), notice_version: 1, channel: 'api', created_at: given.created_at },
    ];
    for (const id of [p.id, p.displayId]) {
      const res = await me(a, token, 'GET', `/api/v1/me/consents/${id}/history`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(expected);
    }
  });

  test('404 where they have nothing (another person\'s records are not theirs), and for an unknown point', async () => {
    const a = await t.tenant();
    const p = await point(a, await asset(a));
    await ok(await orgRecord(a, p, 'dp-2'));
    const token = await mint(a, 'dp-1');
    for (const id of [p.id, 'CP999', '0190a0a0-0000-7000-8000-000000000000']) {
      const res = await me(a, token, 'GET', `/api/v1/me/consents/${id}/history`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(NOTHING_HERE);
    }
  });
});
