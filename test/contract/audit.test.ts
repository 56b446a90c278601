// The audit log (organization management issue): every change made through the API appends exactly one
// entry in the change's own transaction (who, what, which record, when, under which X-Request-Id) with
// ids, statuses and field names only, never personal data; a refused request appends nothing; the
// service role can only insert and read; GET /api/v1/audit-log filters and pages newest first.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recordAudit } from '../../src/features/audit/index.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Response = Awaited<ReturnType<TestApp['call']>>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LINK = '/api/v1/external/public/consent-link';
const HOUR = 3_600_000;

// Personal data sent in the requests below: none of it may reach an audit entry.
const PII = {
  clientUserId: 'client-user-zq81',
  subject: 'Subject about Meera Pillai',
  description: 'Description mentioning her diagnosis',
  note: 'Note: called Meera on her cell',
  nomineeName: 'Asha Kumari Rao',
  nomineeEmail: 'asha.kumari@example.com',
  nomineeMobile: '9812301234',
  newNomineeName: 'Asha K. Rao-Menon',
  dpId: 'dp-person-5521',
  phone: '9876512345',
  linkEmail: 'meera.pillai@example.org',
};
const FORBIDDEN = [...Object.values(PII), '+919812301234', '+919876512345', 'meera', 'asha'];

const now = () => t.clock.now().toISOString();
const newRequestId = () => `req-${randomBytes(6).toString('hex')}`;

interface Actor {
  headers: Record<string, string>;
  key?: string;
  actor: { type: 'api_key' | 'user'; id: string };
}

interface World {
  org: TestOrg;
  /** The admin key the world was built with (and that reads the log). */
  admin: Actor;
  /** A key with only the scope a route needs, and an owner's token. */
  keyWith(scope: string): Promise<Actor>;
  owner: Actor;
  ticket: { ticket_id: string };
  nominee: { id: string };
  asset: { id: string; name: string };
  point: { id: string; display_id: string; purposes: { id: string }[] };
  link: { request_id: string; event_id: string };
}

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

function send(org: TestOrg, who: Actor, method: Method, url: string, body?: unknown, requestId?: string) {
  return t.call({ method, url, org, key: who.key, body, headers: { ...who.headers, ...(requestId ? { 'x-request-id': requestId } : {}) } });
}

async function keyActor(org: TestOrg, scopes: string[]): Promise<Actor> {
  const created = await t.app.services.accounts.createApiKey(org.slug, { scopes });
  return { headers: {}, key: created.key, actor: { type: 'api_key', id: created.id } };
}

async function ownerActor(org: TestOrg): Promise<Actor> {
  const email = `audit-${randomBytes(5).toString('hex')}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(org.id, user.id, 'owner');
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } });
  return { headers: { authorization: `Bearer ${res.json().access_token}` }, actor: { type: 'user', id: user.id } };
}

/** An organization with one record of each kind, made through the API. */
async function world(): Promise<World> {
  const org = await t.org();
  const admin = await keyActor(org, ['admin']);
  const post = async (url: string, body: unknown) => ok(await send(org, admin, 'POST', url, body));
  const ticket = await post('/grievance', { client_user_id: PII.clientUserId, subject: PII.subject, description: PII.description, category: 'erasure' });
  const nominee = await post('/nominee', {
    user_id: PII.clientUserId,
    nominee_name: PII.nomineeName,
    nominee_email: PII.nomineeEmail,
    nominee_mobile: PII.nomineeMobile,
    relationship: 'sibling',
  });
  const asset = await post('/api/v1/assets', { name: 'Website', kind: 'website' });
  const point = await post('/api/v1/collection-points', {
    asset_id: asset.id,
    name: 'Sign-up',
    notice: 'We use your data to run your account.',
    purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
  });
  const link = await post(LINK, { asset_id: asset.id, collection_point_id: point.id, phone: PII.phone, dp_id: PII.dpId, email: PII.linkEmail });
  return { org, admin, keyWith: (scope) => keyActor(org, [scope]), owner: await ownerActor(org), ticket, nominee, asset, point, link };
}

async function auditLog(w: { org: TestOrg; admin: Actor }, query = 'limit=200') {
  return ok(await send(w.org, w.admin, 'GET', `/api/v1/audit-log?${query}`), 200);
}

async function storedRows(org: TestOrg, requestId: string) {
  return t.db.system.query('select * from audit_log where org_id = $1 and request_id = $2', [org.id, requestId]);
}

function expectNoPersonalData(value: unknown) {
  const text = JSON.stringify(value).toLowerCase();
  for (const s of FORBIDDEN) expect(text, `audit entry contains "${s}"`).not.toContain(s.toLowerCase());
}

interface ChangeCase {
  action: string;
  /** The test's name when the action has more than one case. */
  name?: string;
  /** Who makes the change: a key of the route's scope, or an owner's Bearer token. */
  by: { scope: string } | 'owner';
  /** Set-up just before the change; what it returns is handed to details. */
  before?: (w: World) => Promise<string | void>;
  request(w: World): { method: Method; url: string; body?: unknown };
  status?: number;
  target(w: World, body: any): { type: string; id: string };
  details(w: World, body: any, prepared: string | void): Record<string, unknown>;
}

const choices = (w: World) => w.point.purposes.map((p) => ({ id: p.id, granted: true }));

const CASES: ChangeCase[] = [
  {
    action: 'grievance.created',
    by: { scope: 'grievances' },
    request: () => ({
      method: 'POST',
      url: '/grievance',
      body: { client_user_id: PII.clientUserId, subject: PII.subject, description: PII.description, category: 'complaint', attachment_url: 'https://files.example.com/meera.pdf' },
    }),
    target: (_w, b) => ({ type: 'grievance', id: b.ticket_id }),
    details: () => ({ category: 'complaint', status: 'open' }),
  },
  {
    action: 'grievance.updated',
    by: { scope: 'grievances' },
    request: (w) => ({ method: 'PUT', url: `/grievance/${w.ticket.ticket_id}`, body: { status: 'in_progress', attachment_url: 'https://files.example.com/asha.pdf' } }),
    status: 200,
    target: (w) => ({ type: 'grievance', id: w.ticket.ticket_id }),
    details: () => ({ fields: ['status', 'attachment_url'], status: 'in_progress', previous_status: 'open' }),
  },
  {
    action: 'grievance.updated',
    name: 'grievance.updated, nothing really changed',
    by: { scope: 'grievances' },
    // The status and attachment sent are the current ones: no field changed (updated_at did).
    request: (w) => ({ method: 'PUT', url: `/grievance/${w.ticket.ticket_id}`, body: { status: 'open', attachment_url: null } }),
    status: 200,
    target: (w) => ({ type: 'grievance', id: w.ticket.ticket_id }),
    details: () => ({ fields: [] }),
  },
  {
    action: 'grievance.status_changed',
    by: 'owner',
    request: (w) => ({ method: 'POST', url: `/api/v1/grievances/${w.ticket.ticket_id}/status`, body: { status: 'resolved', note: PII.note } }),
    status: 200,
    target: (w) => ({ type: 'grievance', id: w.ticket.ticket_id }),
    details: () => ({ status: 'resolved', previous_status: 'open', with_note: true }),
  },
  {
    action: 'grievance.status_changed',
    name: 'grievance.status_changed, no note, by a key',
    by: { scope: 'grievances' },
    request: (w) => ({ method: 'POST', url: `/api/v1/grievances/${w.ticket.ticket_id}/status`, body: { status: 'rejected' } }),
    status: 200,
    target: (w) => ({ type: 'grievance', id: w.ticket.ticket_id }),
    details: () => ({ status: 'rejected', previous_status: 'open', with_note: false }),
  },
  {
    action: 'nominee.created',
    by: { scope: 'nominees' },
    request: () => ({
      method: 'POST',
      url: '/nominee',
      body: { user_id: PII.clientUserId, nominee_name: PII.nomineeName, nominee_email: PII.nomineeEmail, nominee_mobile: PII.nomineeMobile, relationship: 'child' },
    }),
    target: (_w, b) => ({ type: 'nominee', id: b.id }),
    details: () => ({ status: 'pending' }),
  },
  {
    action: 'nominee.updated',
    by: { scope: 'nominees' },
    // The email sent is the stored one (in another case): not a change.
    request: (w) => ({
      method: 'PUT',
      url: `/nominee/${w.nominee.id}`,
      body: { nominee_name: PII.newNomineeName, nominee_email: PII.nomineeEmail.toUpperCase(), status: 'verified' },
    }),
    status: 200,
    target: (w) => ({ type: 'nominee', id: w.nominee.id }),
    details: () => ({ fields: ['nominee_name', 'status'], status: 'verified', previous_status: 'pending' }),
  },
  {
    action: 'nominee.verified',
    by: 'owner',
    request: (w) => ({ method: 'POST', url: `/api/v1/nominees/${w.nominee.id}/verify` }),
    status: 200,
    target: (w) => ({ type: 'nominee', id: w.nominee.id }),
    details: () => ({ status: 'verified', previous_status: 'pending' }),
  },
  {
    action: 'nominee.rejected',
    by: { scope: 'nominees' },
    request: (w) => ({ method: 'POST', url: `/api/v1/nominees/${w.nominee.id}/reject` }),
    status: 200,
    target: (w) => ({ type: 'nominee', id: w.nominee.id }),
    details: () => ({ status: 'rejected', previous_status: 'pending' }),
  },
  {
    action: 'nominee.deleted',
    by: { scope: 'nominees' },
    request: (w) => ({ method: 'DELETE', url: `/nominee/${w.nominee.id}` }),
    status: 200,
    target: (w) => ({ type: 'nominee', id: w.nominee.id }),
    details: () => ({}),
  },
  {
    action: 'asset.created',
    by: 'owner',
    request: () => ({ method: 'POST', url: '/api/v1/assets', body: { name: 'Call centre', kind: 'call_center' } }),
    target: (_w, b) => ({ type: 'asset', id: b.id }),
    details: () => ({ kind: 'call_center', status: 'active' }),
  },
  {
    action: 'asset.updated',
    by: { scope: 'admin' },
    request: (w) => ({ method: 'PATCH', url: `/api/v1/assets/${w.asset.id}`, body: { name: w.asset.name, status: 'inactive' } }),
    status: 200,
    target: (w) => ({ type: 'asset', id: w.asset.id }),
    details: () => ({ fields: ['status'], status: 'inactive', previous_status: 'active' }),
  },
  {
    action: 'collection_point.created',
    by: 'owner',
    request: (w) => ({
      method: 'POST',
      url: '/api/v1/collection-points',
      body: { asset_id: w.asset.id, name: 'Checkout', notice: 'We use your address to deliver.', purposes: [{ name: 'Delivery', required: true }] },
    }),
    target: (_w, b) => ({ type: 'collection_point', id: b.id }),
    details: (w) => ({ asset_id: w.asset.id, notice_version: 1 }),
  },
  {
    action: 'collection_point.updated',
    by: { scope: 'admin' },
    request: (w) => ({ method: 'PATCH', url: `/api/v1/collection-points/${w.point.id}`, body: { notice: 'A new notice.', name: 'Sign-up' } }),
    status: 200,
    target: (w) => ({ type: 'collection_point', id: w.point.id }),
    details: () => ({ fields: ['notice'], notice_version: 2 }),
  },
  {
    action: 'consent_link.created',
    by: 'owner',
    request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: w.point.id, phone: PII.phone, dp_id: PII.dpId, email: PII.linkEmail } }),
    target: (_w, b) => ({ type: 'consent_link', id: b.request_id }),
    details: (w, b) => ({ event_id: b.event_id, asset_id: w.asset.id, collection_point_id: w.point.id, channels: ['sms', 'email'] }),
  },
  {
    action: 'consent_link.created',
    name: 'consent_link.created, the collection point given by display_id: its UUID in details',
    by: { scope: 'consent' },
    request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: w.point.display_id, phone: PII.phone, send_sms: false, email: PII.linkEmail } }),
    target: (_w, b) => ({ type: 'consent_link', id: b.request_id }),
    details: (w, b) => ({ event_id: b.event_id, asset_id: w.asset.id, collection_point_id: w.point.id, channels: ['email'] }),
  },
  {
    action: 'consent_link.regenerated',
    by: { scope: 'consent' },
    before: async () => void t.clock.advance(25 * HOUR),
    request: (w) => ({ method: 'POST', url: `${LINK}/duplicate/${w.link.request_id}`, body: {} }),
    target: (w) => ({ type: 'consent_link', id: w.link.request_id }),
    details: (w, b) => ({ event_id: b.event_id, previous_event_id: w.link.event_id, regeneration_count: 1, channels: ['sms'] }),
  },
  {
    action: 'consent.recorded',
    by: { scope: 'consent' },
    request: (w) => ({ method: 'POST', url: `/consent/${w.point.id}/consent`, body: { dp_id: PII.dpId, purposes: choices(w), event_id: w.link.event_id } }),
    target: (_w, b) => ({ type: 'consent', id: b.consent_id }),
    details: (w) => ({
      collection_point_id: w.point.id,
      consent_action: 'approved',
      notice_version: 1,
      request_id: w.link.request_id,
      event_id: w.link.event_id,
      channel: 'api',
    }),
  },
  {
    action: 'consent.withdrawn',
    by: { scope: 'consent' },
    before: async (w) => (await ok(await send(w.org, w.admin, 'POST', `/consent/${w.point.id}/consent`, { dp_id: PII.dpId, purposes: choices(w) }))).consent_id,
    request: (w) => ({ method: 'POST', url: `/consent/${w.point.id}/withdraw`, body: { dp_id: PII.dpId } }),
    target: (_w, b) => ({ type: 'consent', id: b.consent_id }),
    details: (w, _b, recordedId) => ({ collection_point_id: w.point.id, consent_action: 'revoked', notice_version: 1, previous_consent_id: recordedId }),
  },
];

describe.each(CASES.map((c) => ({ ...c, name: c.name ?? c.action })))('$name', (c) => {
  test('exactly one entry: actor, action, target, time, the X-Request-Id sent, details without personal data', async () => {
    const w = await world();
    const prepared = await c.before?.(w);
    const who = c.by === 'owner' ? w.owner : await w.keyWith(c.by.scope);
    const before = await auditLog(w);
    const requestId = newRequestId();
    const { method, url, body } = c.request(w);
    const res = await send(w.org, who, method, url, body, requestId);
    const answered = await ok(res, c.status ?? 201);
    expect(res.headers['x-request-id']).toBe(requestId);

    const after = await auditLog(w);
    expect(after.count).toBe(before.count + 1);
    const entry = after.data[0];
    expect(entry).toEqual({
      id: expect.stringMatching(UUID),
      at: now(),
      actor: who.actor,
      action: c.action,
      target: c.target(w, answered),
      request_id: requestId,
      details: c.details(w, answered, prepared),
      // Its place in the organization's hash chain (test/contract/audit-chain.test.ts checks the hashes).
      seq: before.count + 1,
      prev_hash: before.data[0].hash,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(after.data.slice(1)).toEqual(before.data);
    expectNoPersonalData(entry);
    const rows = await storedRows(w.org, requestId);
    expect(rows).toHaveLength(1);
    expectNoPersonalData(rows);
  });
});

test('every change through the API while building an organization is in its log, none with personal data', async () => {
  const w = await world();
  const log = await auditLog(w);
  const actions = log.data.map((e: { action: string }) => e.action);
  for (const action of ['grievance.created', 'nominee.created', 'asset.created', 'collection_point.created', 'consent_link.created']) {
    expect(actions).toContain(action);
  }
  expectNoPersonalData(log);
});

describe('a refused request appends nothing', () => {
  const REFUSED: {
    name: string;
    status: number;
    by?: 'owner';
    /** Set-up just before the refused request (its own entries are not what is checked). */
    before?: (w: World) => Promise<void>;
    request(w: World): { method: Method; url: string; body?: unknown };
  }[] = [
    { name: 'grievance create, invalid body', status: 400, request: () => ({ method: 'POST', url: '/grievance', body: { subject: PII.subject } }) },
    { name: 'grievance update, unknown ticket', status: 404, request: () => ({ method: 'PUT', url: '/grievance/GRV-ZZZZZZZZ', body: { status: 'closed' } }) },
    { name: 'grievance update, invalid body', status: 400, request: (w) => ({ method: 'PUT', url: `/grievance/${w.ticket.ticket_id}`, body: { status: 'gone' } }) },
    {
      name: 'status change, unknown ticket',
      status: 404,
      by: 'owner',
      request: () => ({ method: 'POST', url: '/api/v1/grievances/GRV-ZZZZZZZZ/status', body: { status: 'closed', note: PII.note } }),
    },
    {
      name: 'status change, the current status (409)',
      status: 409,
      by: 'owner',
      request: (w) => ({ method: 'POST', url: `/api/v1/grievances/${w.ticket.ticket_id}/status`, body: { status: 'open', note: PII.note } }),
    },
    { name: 'nominee update, unknown nominee', status: 404, request: () => ({ method: 'PUT', url: '/nominee/0190c0de-0000-7000-8000-000000000000', body: { status: 'verified' } }) },
    { name: 'nominee delete, unknown nominee', status: 404, request: () => ({ method: 'DELETE', url: '/nominee/0190c0de-0000-7000-8000-000000000000' }) },
    { name: 'nominee verify, unknown nominee', status: 404, by: 'owner', request: () => ({ method: 'POST', url: '/api/v1/nominees/0190c0de-0000-7000-8000-000000000000/verify' }) },
    { name: 'nominee reject, malformed id', status: 404, request: () => ({ method: 'POST', url: '/api/v1/nominees/nope/reject' }) },
    { name: 'asset update, unknown asset', status: 404, request: () => ({ method: 'PATCH', url: '/api/v1/assets/0190c0de-0000-7000-8000-000000000000', body: { status: 'inactive' } }) },
    {
      name: 'collection point create, unknown asset',
      status: 400,
      request: () => ({
        method: 'POST',
        url: '/api/v1/collection-points',
        body: { asset_id: '0190c0de-0000-7000-8000-000000000000', name: 'x', notice: 'y', purposes: [{ name: 'z' }] },
      }),
    },
    {
      name: 'collection point create, display_id taken',
      status: 409,
      request: (w) => ({ method: 'POST', url: '/api/v1/collection-points', body: { asset_id: w.asset.id, name: 'x', notice: 'y', purposes: [{ name: 'z' }], display_id: 'CP001' } }),
    },
    { name: 'collection point update, unknown point', status: 404, request: () => ({ method: 'PATCH', url: '/api/v1/collection-points/CP999', body: { name: 'x' } }) },
    {
      name: 'consent link create, unknown collection point',
      status: 404,
      request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: 'CP999', phone: PII.phone, dp_id: PII.dpId } }),
    },
    {
      name: 'consent link create, unknown collection point UUID',
      status: 404,
      request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: '0190c0de-0000-7000-8000-000000000000', phone: PII.phone } }),
    },
    {
      name: "consent link create, asset_id not the collection point's asset",
      status: 400,
      request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: '0190c0de-0000-7000-8000-000000000000', collection_point_id: w.point.display_id, phone: PII.phone } }),
    },
    {
      name: 'consent link create, inactive collection point',
      status: 400,
      before: async (w) => void (await ok(await send(w.org, w.admin, 'PATCH', `/api/v1/collection-points/${w.point.id}`, { status: 'inactive' }), 200)),
      request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: w.point.id, phone: PII.phone } }),
    },
    {
      name: 'consent link create, inactive asset',
      status: 400,
      before: async (w) => void (await ok(await send(w.org, w.admin, 'PATCH', `/api/v1/assets/${w.asset.id}`, { status: 'inactive' }), 200)),
      request: (w) => ({ method: 'POST', url: LINK, body: { asset_id: w.asset.id, collection_point_id: w.point.display_id, phone: PII.phone } }),
    },
    { name: 'consent link regenerate, link still active', status: 409, request: (w) => ({ method: 'POST', url: `${LINK}/duplicate/${w.link.request_id}`, body: {} }) },
    {
      name: 'consent record, a purpose missing',
      status: 400,
      request: (w) => ({ method: 'POST', url: `/consent/${w.point.id}/consent`, body: { dp_id: PII.dpId, purposes: choices(w).slice(1) } }),
    },
    { name: 'consent withdraw, nothing on record', status: 404, request: (w) => ({ method: 'POST', url: `/consent/${w.point.id}/withdraw`, body: { dp_id: PII.dpId } }) },
  ];

  test.each(REFUSED)('$name', async (r) => {
    const w = await world();
    await r.before?.(w);
    const before = await auditLog(w);
    const requestId = newRequestId();
    const { method, url, body } = r.request(w);
    const res = await send(w.org, r.by === 'owner' ? w.owner : w.admin, method, url, body, requestId);
    expect(res.statusCode, res.body).toBe(r.status);
    expect(await auditLog(w)).toEqual(before);
    expect(await storedRows(w.org, requestId)).toEqual([]);
  });
});

describe('GET /api/v1/audit-log', () => {
  /** An organization with four grievance changes one minute apart: created, updated, status_changed x2. */
  async function timeline() {
    const w = await world();
    const start = t.clock.now().getTime();
    const at: string[] = [];
    const step = async (method: Method, url: string, body: unknown) => {
      t.clock.advance(60_000);
      at.push(now());
      await ok(await send(w.org, w.admin, method, url, body), method === 'POST' && url === '/grievance' ? 201 : 200);
    };
    await step('POST', '/grievance', { client_user_id: 'u', subject: 's', description: 'd', category: 'other' });
    await step('PUT', `/grievance/${w.ticket.ticket_id}`, { status: 'in_progress' });
    await step('POST', `/api/v1/grievances/${w.ticket.ticket_id}/status`, { status: 'resolved' });
    await step('POST', `/api/v1/grievances/${w.ticket.ticket_id}/status`, { status: 'closed' });
    return { w, start, at };
  }

  test('newest first (at, then id, descending), with count, limit and offset', async () => {
    const { w, at } = await timeline();
    const log = await auditLog(w, `from=${encodeURIComponent(at[0]!)}`);
    expect(log).toMatchObject({ count: 4, limit: 50, offset: 0 });
    expect(log.data.map((e: { at: string }) => e.at)).toEqual([...at].reverse());
    expect(log.data.map((e: { action: string }) => e.action)).toEqual(['grievance.status_changed', 'grievance.status_changed', 'grievance.updated', 'grievance.created']);
    // Entries made in the same instant (the world's set-up) come id descending.
    const setup = (await auditLog(w, `to=${encodeURIComponent(new Date(new Date(at[0]!).getTime() - 1).toISOString())}`)).data;
    const ids = setup.map((e: { id: string }) => e.id);
    expect(ids).toEqual([...ids].sort().reverse());
  });

  test('action filters exactly; from and to bound the time inclusively', async () => {
    const { w, at } = await timeline();
    const actions = async (query: string) => (await auditLog(w, query)).data.map((e: { at: string; action: string }) => `${e.at} ${e.action}`);
    expect(await actions('action=grievance.status_changed')).toEqual([`${at[3]} grievance.status_changed`, `${at[2]} grievance.status_changed`]);
    expect(await actions('action=grievance')).toEqual([]);
    expect(await actions(`from=${encodeURIComponent(at[1]!)}&to=${encodeURIComponent(at[2]!)}`)).toEqual([
      `${at[2]} grievance.status_changed`,
      `${at[1]} grievance.updated`,
    ]);
    expect(await actions(`action=grievance.created&from=${encodeURIComponent(at[0]!)}`)).toEqual([`${at[0]} grievance.created`]);
    expect(await actions(`from=${encodeURIComponent(at[3]!)}&to=${encodeURIComponent(at[3]!)}`)).toEqual([`${at[3]} grievance.status_changed`]);
  });

  test('bad bounds: to before from, or a timestamp without a zone, 400 with details', async () => {
    const w = await world();
    const res = await send(w.org, w.admin, 'GET', '/api/v1/audit-log?from=2026-11-22T10:00:00Z&to=2026-11-22T09:00:00Z', undefined);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid request query: to must not be before from', code: 'validation_failed', details: [{ field: 'to', message: 'must not be before from' }] });
    const noZone = await send(w.org, w.admin, 'GET', '/api/v1/audit-log?from=2026-11-22T10:00:00', undefined);
    expect(noZone.statusCode).toBe(400);
    expect(noZone.json().details).toEqual([{ field: 'from', message: 'must be an ISO 8601 date-time with a time zone' }]);
  });

  test('limit and offset page through the filtered entries; count covers them all', async () => {
    const { w, at } = await timeline();
    const from = `from=${encodeURIComponent(at[0]!)}`;
    const all = (await auditLog(w, from)).data;
    expect(await auditLog(w, `${from}&limit=3`)).toEqual({ data: all.slice(0, 3), count: 4, limit: 3, offset: 0 });
    expect(await auditLog(w, `${from}&limit=3&offset=3`)).toEqual({ data: all.slice(3), count: 4, limit: 3, offset: 3 });
    expect(await auditLog(w, `${from}&limit=3&offset=8`)).toEqual({ data: [], count: 4, limit: 3, offset: 8 });
  });

  test('an X-Request-Id that is not acceptable is replaced, and the entry carries the one the response names', async () => {
    const w = await world();
    const res = await send(w.org, w.admin, 'PUT', `/grievance/${w.ticket.ticket_id}`, { status: 'closed' }, 'not acceptable!');
    expect(res.statusCode).toBe(200);
    const entry = (await auditLog(w, 'action=grievance.updated')).data[0];
    expect(entry.request_id).toBe(res.headers['x-request-id']);
    expect(entry.request_id).toMatch(UUID);
  });

  test("another organization's entries never appear", async () => {
    const a = await world();
    const b = await world();
    const ids = (log: { data: { target: { id: string } }[] }) => log.data.map((e) => e.target.id);
    expect(ids(await auditLog(a))).not.toContain(b.ticket.ticket_id);
    expect(ids(await auditLog(a))).toContain(a.ticket.ticket_id);
  });
});

describe('entries are never updated or deleted by the service', () => {
  test('the service role is refused UPDATE and DELETE on audit_log: permission denied', async () => {
    const w = await world();
    const before = await auditLog(w);
    await expect(t.db.tenantTransaction(w.org.id, (tx) => tx.query('delete from audit_log'))).rejects.toThrow(/permission denied/);
    await expect(t.db.tenantTransaction(w.org.id, (tx) => tx.query("update audit_log set action = 'x'"))).rejects.toThrow(/permission denied/);
    expect(await auditLog(w)).toEqual(before);
  });
});

describe('an entry sent with a change that may write nothing (onlyWith)', () => {
  test("is appended only if the change's row exists in this tenant, with the row's named columns in details", async () => {
    const a = await world();
    const b = await world();
    const actor = { type: 'api_key' as const, id: a.admin.actor.id, scopes: ['admin' as const] };
    const ctx = { orgId: a.org.id, slug: a.org.slug, orgName: a.org.slug, actor, requestId: newRequestId() };
    const entry = (requestId: string) => ({
      action: 'consent_link.created',
      targetType: 'consent_link',
      targetId: requestId,
      details: { event_id: 'e-1' },
      onlyWith: { table: 'consent_requests', id: requestId, detailColumns: ['asset_id', 'collection_point_id'] },
    });
    // Each in its own committed transaction: no rollback hides an entry that should not exist.
    for (const requestId of ['0190c0de-0000-7000-8000-000000000000', b.link.request_id]) {
      await withTenant(t.db, a.org.id, (tx) => recordAudit(tx, ctx, t.clock.now(), entry(requestId)));
    }
    expect(await storedRows(a.org, ctx.requestId)).toEqual([]);
    await withTenant(t.db, a.org.id, (tx) => recordAudit(tx, ctx, t.clock.now(), entry(a.link.request_id)));
    expect((await storedRows(a.org, ctx.requestId)).map((r) => [r.target_id, r.details])).toEqual([
      [a.link.request_id, { event_id: 'e-1', asset_id: a.asset.id, collection_point_id: a.point.id }],
    ]);
  });
});
