// The truConsent SDKs against Assent (contract §8, issue 16), over real HTTP on both stores. Each request
// is built the way the SDK builds it (docs/sdk-calls.md: paths, headers including Content-Type on bodiless
// GET and DELETE, Dart's `; charset=utf-8` and `Content-Length: 0`, bodies with their casing and values),
// and every field the SDK reads is checked with the type it reads it as (Flutter: ids and versions are
// strings, dropdown values its own). Also: what an `sdk` key alone can and cannot do.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../../src/app.js';
import { manualClock } from '../../src/platform/clock.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => t?.close());

/** One HTTP request exactly as given: no header added but Host (and Content-Length when a body is sent). */
function send(org: Tenant, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string> = { host: `${org.slug}.localhost:${port}`, ...headers };
    if (body !== undefined) all['content-length'] = String(Buffer.byteLength(body));
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = undefined;
        try {
          json = JSON.parse(text);
        } catch {
          /* not JSON: the assertions say so */
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

// ─── The two SDKs' request builders (from their source) ─────────────────────

/** React Native: rightsCenterApi.ts getHeaders/requestApi, and BannerService.ts buildHeaders. */
function reactNative(org: Tenant, opts: { apiKey: string; userId?: string; token?: string }) {
  const rc = (path: string) => {
    const h: Record<string, string> = { 'Content-Type': 'application/json', 'X-API-Key': opts.apiKey, 'X-Org-Id': org.slug };
    if (rc.userId) h['X-User-Id'] = rc.userId;
    if (rc.token) h['Authorization'] = `Bearer ${rc.token}`;
    if (path.startsWith('/api/v1/internal/consent') || path.startsWith('/api/v1/internal/banners') || path.startsWith('/api/v1/internal/sdk')) {
      h['Sec-Fetch-Site'] = 'cross-site';
      h['User-Agent'] = 'Mozilla/5.0 TruConsent-ReactNative-SDK/1.0';
    }
    return h;
  };
  rc.userId = opts.userId;
  rc.token = opts.token;
  const banner = () => ({
    'Content-Type': 'application/json',
    'X-Org-Id': org.slug,
    ...(opts.apiKey ? { 'X-API-Key': opts.apiKey } : {}),
    ...(rc.token ? { Authorization: `Bearer ${rc.token}` } : {}),
  });
  const api = (method: string, path: string, body?: unknown) => send(org, method, path, rc(path), body === undefined ? undefined : JSON.stringify(body));
  return {
    rc,
    api,
    setAuth(userId: string, token: string) {
      rc.userId = userId;
      rc.token = token;
    },
    fetchBanner: (bannerId: string, assetId?: string, userId?: string) =>
      send(org, 'GET', `/api/v1/internal/consent/${assetId ? `${encodeURIComponent(assetId)}/` : ''}${encodeURIComponent(bannerId)}${userId ? `?userId=${encodeURIComponent(userId)}` : ''}`, banner()),
    submitConsent: (collectionPointId: string, body: object) =>
      send(org, 'POST', `/api/v1/internal/consent/${encodeURIComponent(collectionPointId)}`, banner(), JSON.stringify(body)),
    submitSuppression: (body: object) => send(org, 'POST', '/api/v1/internal/consent/suppression', banner(), JSON.stringify(body)),
  };
}

/** Flutter: rights_center_api.dart _getHeaders/_request (Dart's http client), and banner_service.dart. */
function flutter(org: Tenant, opts: { apiKey: string; userId?: string; authToken?: string }) {
  const state = { userId: opts.userId, authToken: opts.authToken };
  const headers = (path: string, hasBody: boolean) => {
    // Dart adds `; charset=utf-8` to a JSON content type and sends Content-Length: 0 without a body.
    const h: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
    if (!hasBody) h['Content-Length'] = '0';
    if (opts.apiKey) h['X-API-Key'] = opts.apiKey;
    h['X-Org-Id'] = org.slug;
    if (state.userId) h['X-User-Id'] = state.userId;
    if (state.authToken) h['Authorization'] = `Bearer ${state.authToken}`;
    if (['/api/v1/internal/consent', '/api/v1/internal/banners', '/api/v1/internal/sdk'].some((p) => path.startsWith(p))) {
      h['Sec-Fetch-Site'] = 'cross-site';
      h['User-Agent'] = 'Mozilla/5.0 TruConsent-Flutter-SDK/1.0';
    }
    return h;
  };
  // Token takes precedence: Flutter's banner calls send one or the other, never both.
  const auth = (token?: string): Record<string, string> => (token ? { Authorization: `Bearer ${token}` } : opts.apiKey ? { 'X-API-Key': opts.apiKey } : {});
  return {
    state,
    request: (method: string, path: string, body?: unknown) =>
      send(org, method, path, headers(path, body !== undefined), body === undefined ? undefined : JSON.stringify(body)),
    fetchBanner: (bannerId: string, assetId: string | undefined, userId: string, token?: string) =>
      send(org, 'GET', `/api/v1/internal/consent/${assetId ? `${assetId}/` : ''}${bannerId}?userId=${encodeURIComponent(userId)}`, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': '0',
        ...auth(token),
        'X-Org-Id': org.slug,
        'X-User-Id': userId,
        'Sec-Fetch-Site': 'cross-site',
        'User-Agent': 'Mozilla/5.0 TruConsent-Flutter-SDK/1.0',
      }),
    submitConsent: (collectionPointId: string, body: object, token?: string) =>
      send(org, 'POST', `/api/v1/internal/consent/${collectionPointId}`, { 'Content-Type': 'application/json; charset=utf-8', ...auth(token), 'X-Org-Id': org.slug }, JSON.stringify(body)),
    sendSuppressionUpdate: (body: object) =>
      send(org, 'POST', '/api/v1/internal/consent/suppression', { 'Content-Type': 'application/json; charset=utf-8', ...auth(), 'X-Org-Id': org.slug }, JSON.stringify(body)),
  };
}

// ─── The organization's setup, through its own API ──────────────────────────

async function admin(a: Tenant, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: unknown) {
  return t.call({ method, url, org: a, key: a.key, body });
}

async function setUp() {
  const a = await t.tenant();
  const sdkKey = await t.key(a, ['sdk']);
  const asset = (await admin(a, 'POST', '/api/v1/assets', { name: 'Mobile app', kind: 'mobile_app' })).json();
  const cp = await admin(a, 'POST', '/api/v1/collection-points', {
    asset_id: asset.id,
    name: 'Signup',
    notice: 'We use your data to run your account.',
    purposes: [
      { name: 'Account', description: 'Running your account', required: true },
      { name: 'Marketing', description: 'Offers by SMS', required: false },
      { name: 'Analytics', required: false },
    ],
  });
  expect(cp.statusCode).toBe(201);
  return { a, sdkKey, asset, cp: cp.json() };
}

async function mint(a: Tenant, dpId: string): Promise<string> {
  const res = await admin(a, 'POST', `/api/v1/data-principals/${encodeURIComponent(dpId)}/tokens`, {});
  expect(res.statusCode).toBe(201);
  return res.json().access_token;
}

async function lastCodeFor(a: TestOrg, recipient: string): Promise<string> {
  const rows = await t.db.system.query<{ body: string }>(
    'select body from outbound_messages where org_id = $1 and recipient = $2 order by created_at desc, id desc limit 1',
    [a.id, recipient],
  );
  return /\b(\d{6})\b/.exec(rows[0]!.body)![1]!;
}

const current = async (a: Tenant, cpId: string, dpId: string) => (await admin(a, 'GET', `/consent/${cpId}/consent?dp_id=${encodeURIComponent(dpId)}`)).json();

function expectJson(res: Reply, status: number) {
  expect([res.status, res.text.slice(0, 300)]).toEqual([status, expect.any(String)]);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json).toBeDefined();
}

/** A field Flutter reads as `String`: a JSON string (or null where it reads `String?`). */
const str = (v: unknown) => expect(typeof v).toBe('string');

// ─── Banner ─────────────────────────────────────────────────────────────────

describe('banner flow', () => {
  test('React Native: fetch (asset/banner, then banner alone), submit per purpose, suppression; the consent is an append-only record', async () => {
    const { a, sdkKey, asset, cp } = await setUp();
    const rn = reactNative(a, { apiKey: sdkKey });
    for (const res of [await rn.fetchBanner(cp.id, asset.id, 'dp-rn'), await rn.fetchBanner(cp.display_id, undefined, 'dp-rn')]) {
      expectJson(res, 200);
      const b = res.json;
      // TruConsentModal reads collectionPoint || collection_point to submit, and renders purposes.
      expect(b.collectionPoint ?? b.collection_point).toBe(cp.id);
      expect(b).toMatchObject({ banner_id: cp.display_id, title: 'Signup', version: '1', organization: { name: expect.any(String) }, asset: { id: asset.id } });
      expect(b.purposes.map((p: any) => [p.id, p.name, p.is_mandatory, p.is_legitimate, p.description])).toEqual(
        cp.purposes.map((p: any) => [p.id, p.name, p.required, false, p.description]),
      );
    }
    // Another asset's id in the path: not this banner (the SDK then tries the banner alone).
    expect((await rn.fetchBanner(cp.id, '00000000-0000-7000-8000-000000000000')).status).toBe(404);

    const [account, marketing, analytics] = cp.purposes.map((p: any) => p.id);
    const submitted = await rn.submitConsent(cp.id, {
      userId: 'dp-rn',
      requestId: 'req-1',
      assetId: asset.id,
      consentLanguage: 'en',
      collectionPointId: cp.id,
      collectionPointVersion: 'v1.0',
      consentTimestamp: 1_795_000_000,
      source: 'react-native',
      purposes: [
        { purposeId: account, version: 'v1.0', consented: 'accepted', purpose_type: 'consent', is_mandatory: true },
        { purposeId: marketing, version: 'v1.0', consented: 'accepted', purpose_type: 'consent', is_mandatory: false },
        { purposeId: analytics, version: 'v1.0', consented: 'declined', purpose_type: 'consent', is_mandatory: false },
      ],
      action: 'partial_consent',
      metadata: { sessionId: 's', button_used: 'save_preferences', performance: { banner_fetched_at: 1 } },
    });
    expectJson(submitted, 201);
    expect(submitted.json).toMatchObject({ success: true, recorded: true, consent_action: 'partial_consent', dp_id: 'dp-rn' });
    expect(await current(a, cp.id, 'dp-rn')).toMatchObject({
      consent_action: 'partial_consent',
      purposes: [{ id: account, granted: true }, { id: marketing, granted: true }, { id: analytics, granted: false }],
    });
    const suppressed = await rn.submitSuppression({ userId: 'dp-rn', declinedPurposeIds: [analytics] });
    expectJson(suppressed, 200);

    // Closing the banner is not a decision: nothing replaces the consent on record.
    const closed = await rn.submitConsent(cp.id, { userId: 'dp-rn', purposes: [{ purposeId: account, consented: 'declined' }], action: 'no_action' });
    expectJson(closed, 201);
    expect(closed.json).toMatchObject({ recorded: false });
    expect((await current(a, cp.id, 'dp-rn')).consent_id).toBe(submitted.json.consent_id);
    const records = await t.db.system.query<{ n: number; channel: string }>(
      "select count(*)::int as n, min(channel) as channel from consent_records where org_id = $1 and dp_id = 'dp-rn'",
      [a.id],
    );
    expect(records[0]).toEqual({ n: 1, channel: 'sdk' });
  });

  test('Flutter: Dart headers (charset, Content-Length: 0), string ids, `Approved` / `Partially Consented` actions; with a token instead of the key', async () => {
    const { a, sdkKey, asset, cp } = await setUp();
    const fl = flutter(a, { apiKey: sdkKey });
    const res = await fl.fetchBanner(cp.display_id, asset.id, 'dp-fl');
    expectJson(res, 200);
    const b = res.json.data ?? res.json;
    // Banner.fromJson: String fields (a number here throws in Dart).
    for (const v of [b.banner_id, b.collection_point, b.version, b.title, b.expiry_type, b.asset.id, b.asset.name, b.organization.name]) str(v);
    for (const p of b.purposes) {
      for (const v of [p.id, p.name, p.description, p.expiry_period, p.purpose_type]) str(v);
      expect(typeof p.is_mandatory).toBe('boolean');
      expect(typeof p.is_legitimate).toBe('boolean');
      expect(p.consented).toBeUndefined(); // left for the SDK's own default selection
    }
    const [account, marketing, analytics] = b.purposes.map((p: any) => p.id);
    const body = (action: string, marketingChoice: string) => ({
      userId: 'dp-fl',
      requestId: '3f1c2a8e-6b1d-4c55-9a43-1f0e2d3c4b5a',
      assetId: b.asset.id,
      consentLanguage: 'en',
      collectionPointId: b.collection_point,
      collectionPointVersion: 'v1.0',
      consentTimestamp: 1_795_000_000,
      source: 'flutter',
      purposes: [
        { purposeId: account, version: 'v1.0', consented: 'accepted', purpose_type: 'consent', is_mandatory: true },
        { purposeId: marketing, version: 'v1.0', consented: marketingChoice, purpose_type: 'consent', is_mandatory: false },
        { purposeId: analytics, version: 'v1.0', consented: 'declined', purpose_type: 'consent', is_mandatory: false },
      ],
      action,
      metadata: { sessionId: 'sess_1_abcdefgh', button_used: 'save_preferences', collection_point_version: 'v1.0', reconsent_campaign_id: null, performance: { notice_logged_at: null } },
    });
    const partial = await fl.submitConsent(b.collection_point, body('Partially Consented', 'declined'));
    expect([200, 201]).toContain(partial.status);
    expect(partial.json).toMatchObject({ recorded: true, consent_action: 'partial_consent' });
    expectJson(await fl.sendSuppressionUpdate({ userId: 'dp-fl', declinedPurposeIds: [marketing, analytics] }), 200);

    // The app may pass the person's token instead of the key: then it acts for them only.
    const token = await mint(a, 'dp-fl');
    expectJson(await fl.fetchBanner(cp.id, undefined, 'dp-fl', token), 200);
    const approved = await fl.submitConsent(b.collection_point, { ...body('Approved', 'accepted'), purposes: body('Approved', 'accepted').purposes.map((p) => ({ ...p, consented: 'accepted' })) }, token);
    expect(approved.status).toBe(201);
    expect(approved.json).toMatchObject({ consent_action: 'approved', dp_id: 'dp-fl' });
    const forOther = await fl.submitConsent(b.collection_point, { ...body('Approved', 'accepted'), userId: 'someone-else' }, token);
    expect([forOther.status, forOther.json.code]).toEqual([401, 'dp_token_other_person']);
    expect((await fl.fetchBanner(cp.id, undefined, 'someone-else', token)).status).toBe(401);

    // notice_shown (the notice-only banner's "I understand") records no consent either.
    // banner_service.dart sendNoticeShown: every purpose `shown`, metadata.performance.notice_logged_at set.
    const noticeBody = body('notice_shown', 'shown');
    const notice = await fl.submitConsent(b.collection_point, {
      ...noticeBody,
      purposes: noticeBody.purposes.map((p) => ({ ...p, consented: 'shown' })),
      metadata: { ...noticeBody.metadata, button_used: 'i_understand', performance: { notice_logged_at: 1_795_000_000 } },
    });
    expect([notice.status, notice.json.recorded]).toEqual([201, false]);
    expect((await current(a, cp.id, 'dp-fl')).consent_action).toBe('approved');
  });

  test('bad banner input answers 4xx with {error, code}, never 500', async () => {
    const { a, sdkKey, cp } = await setUp();
    const rn = reactNative(a, { apiKey: sdkKey });
    for (const [body, field] of [
      [{ purposes: [], action: 'approved' }, 'userId'],
      [{ userId: 'u', purposes: [], action: 'maybe' }, 'action'],
      [{ userId: 'u', purposes: [{ purposeId: 'not-a-purpose', consented: 'accepted' }], action: 'approved' }, 'purposes.3.id'],
      [{ userId: 'x'.repeat(300), purposes: [], action: 'approved' }, 'dp_id'],
    ] as const) {
      const res = await rn.submitConsent(cp.id, body);
      expect([res.status, res.json.code, res.json.details?.map((d: any) => d.field)]).toEqual([400, 'validation_failed', [field]]);
    }
    expect((await rn.submitConsent('CP999', { userId: 'u', purposes: [], action: 'approved' })).json.code).toBe('not_found');
    expect((await rn.fetchBanner('CP999')).status).toBe(404);
  });
});

// ─── What an sdk key alone can do ───────────────────────────────────────────

describe('an sdk key', () => {
  test('can show the banner, record consent, read settings and the contact person, start a sign-in; cannot list anyone\'s tickets or reach the organization API', async () => {
    const { a, sdkKey, cp } = await setUp();
    await admin(a, 'POST', '/grievance', { client_user_id: 'dp-1', subject: 'Hi', description: 'Hello', category: 'other' });
    const rn = reactNative(a, { apiKey: sdkKey, userId: 'dp-1' });
    expect((await rn.fetchBanner(cp.id)).status).toBe(200);
    expect((await rn.submitConsent(cp.id, { userId: 'dp-1', purposes: cp.purposes.map((p: any) => ({ purposeId: p.id, consented: 'accepted' })), action: 'approved' })).status).toBe(201);
    expect((await rn.api('GET', '/api/v1/internal/rights-center/settings/global')).status).toBe(200);
    expect((await rn.api('POST', '/api/v1/internal/rights-center-access/send-otp', { phone: '9000000001', countryCode: '+91' })).status).toBe(202);

    // Without the person's token: no one's records, under either surface.
    for (const path of ['/api/v1/internal/grievance/user/dp-1', '/api/v1/internal/nominee/user/dp-1', '/api/v1/internal/consent/user/dp-1', '/api/v1/internal/consent/user-consent-status?userId=dp-1']) {
      const res = await rn.api('GET', path);
      expect([path, res.status]).toEqual([path, 401]);
    }
    expect((await rn.api('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-1', subject: 's', category: 'Other', description: 'd' })).status).toBe(401);
    for (const [method, path] of [['GET', '/grievance/user/dp-1'], ['GET', '/nominee/user/dp-1'], ['GET', '/api/v1/collection-points'], ['POST', '/api/v1/data-principals/dp-1/tokens']] as const) {
      const res = await t.call({ method, url: path, org: a, key: sdkKey, body: method === 'POST' ? {} : undefined });
      expect([path, res.statusCode, res.json().code]).toEqual([path, 403, 'missing_scope']);
    }
    // A key of another scope is not an sdk key.
    const grievancesKey = await t.key(a, ['grievances']);
    expect((await reactNative(a, { apiKey: grievancesKey }).fetchBanner(cp.id)).status).toBe(403);
  });

  test('is created like any key: API (and CLI / dashboard through the same service), listed with its scope', async () => {
    const a = await t.tenant();
    const res = await admin(a, 'POST', '/api/v1/api-keys', { name: 'App SDK', scopes: ['sdk'] });
    expect(res.statusCode).toBe(201);
    expect(res.json().scopes).toEqual(['sdk']);
    const refused = await admin(a, 'POST', '/api/v1/api-keys', { name: 'x', scopes: ['banners'] });
    expect(refused.statusCode).toBe(400);
  });
});

// ─── Rights Center ──────────────────────────────────────────────────────────

async function personWithConsent(a: Tenant, sdkKey: string, cp: any, dpId: string) {
  const rn = reactNative(a, { apiKey: sdkKey });
  const res = await rn.submitConsent(cp.id, {
    userId: dpId,
    purposes: cp.purposes.map((p: any, i: number) => ({ purposeId: p.id, consented: i < 2 ? 'accepted' : 'declined' })),
    action: 'partial_consent',
  });
  expect(res.status).toBe(201);
}

describe('Rights Center', () => {
  test('React Native, non_sso: settings first, code sign-in (camelCase), then the person\'s consents, nominees, tickets and rights requests with their token', async () => {
    const { a, sdkKey, cp } = await setUp();
    await admin(a, 'PUT', '/api/v1/data-principals/dp-rn', { phone: '+919876500001' });
    await admin(a, 'PUT', '/api/v1/organization/dpo', { full_name: 'Priya Rao', email: 'dpo@example.com', appointment_date: '2026-01-01T00:00:00Z', working_hours: '10-6' });
    const patched = await admin(a, 'PATCH', '/api/v1/organization/rights-center-settings', { access_mode: 'non_sso', button_color: '#112233', show_dpo_section: true });
    expect(patched.statusCode).toBe(200);
    await personWithConsent(a, sdkKey, cp, 'dp-rn');

    const rn = reactNative(a, { apiKey: sdkKey });
    const settings = await rn.api('GET', '/api/v1/internal/rights-center/settings/global?asset_id=x');
    expectJson(settings, 200);
    expect(settings.json).toMatchObject({ access_mode: 'non_sso', button_color: '#112233', show_dpo_section: true, show_consents_section: true, grievance_mode: 'truconsent' });
    const dpo = await rn.api('GET', '/api/v1/internal/dpo');
    expectJson(dpo, 200);
    expect(dpo.json).toMatchObject({ full_name: 'Priya Rao', email: 'dpo@example.com', appointment_date: '2026-01-01T00:00:00.000Z', working_hours: '10-6' });

    expect((await rn.api('POST', '/api/v1/internal/rights-center-access/send-otp', { phone: '9876500001', countryCode: '+91' })).status).toBe(202);
    const wrong = await rn.api('POST', '/api/v1/internal/rights-center-access/verify-otp', { phone: '9876500001', countryCode: '+91', otp: '000000' });
    expect([wrong.status, wrong.json.code]).toEqual([401, 'incorrect_code']);
    const code = await lastCodeFor(a, '+919876500001');
    const verified = await rn.api('POST', '/api/v1/internal/rights-center-access/verify-otp', { phone: '9876500001', countryCode: '+91', otp: code });
    expectJson(verified, 200);
    const accessToken = verified.json.accessToken || verified.json.access_token;
    const dataPrincipalId = verified.json.dataPrincipalId || verified.json.data_principal_id;
    expect([accessToken, dataPrincipalId]).toEqual([expect.stringMatching(/^dpt_/), 'dp-rn']);
    rn.setAuth(dataPrincipalId, accessToken);

    // Consents: the list the SDK seeds from, the status it overlays, and a save.
    const groups = await rn.api('GET', '/api/v1/internal/consent/user/dp-rn');
    expectJson(groups, 200);
    expect(groups.json).toHaveLength(1);
    expect(groups.json[0]).toMatchObject({ collection_point: cp.id, title: 'Signup', shown_to_principal: true });
    expect(groups.json[0].purposes.map((p: any) => [p.id, p.consented, p.is_mandatory, p.status])).toEqual([
      [cp.purposes[0].id, 'accepted', true, 'active'],
      [cp.purposes[1].id, 'accepted', false, 'active'],
      [cp.purposes[2].id, 'declined', false, 'active'],
    ]);
    const status = await rn.api('GET', '/api/v1/internal/consent/user-consent-status?userId=dp-rn');
    expectJson(status, 200);
    const latest = status.json.collectionPoints[0].latest_consent;
    expect(new Date(latest.timestamp).getTime()).toBeGreaterThan(0);
    expect(latest.purpose_consents.map((p: any) => [p.purpose_id, p.status])).toEqual(groups.json[0].purposes.map((p: any) => [p.id, p.consented]));
    const saved = await rn.api('POST', '/api/v1/internal/consent/rights-center', {
      userId: 'dp-rn',
      purposes: [{ id: cp.purposes[1].id, name: 'Marketing', consented: 'declined' }],
      action: 'revoked',
      assetId: undefined,
      source: 'right center react-native',
      metadata: { button_used: 'save', interaction_type: 'rights_center', logged_at: new Date().toISOString(), session_id: 'rn-rc-1' },
    });
    expectJson(saved, 200);
    expect(await current(a, cp.id, 'dp-rn')).toMatchObject({ consent_action: 'partial_consent', purposes: [{ granted: true }, { granted: false }, { granted: false }] });
    // Withdrawing everything is one save, and a withdrawal (revoked).
    await rn.api('POST', '/api/v1/internal/consent/rights-center', { userId: 'dp-rn', purposes: [{ id: cp.purposes[0].id, name: 'Account', consented: 'declined' }], action: 'revoked' });
    expect((await current(a, cp.id, 'dp-rn')).consent_action).toBe('revoked');

    // Nominee: create, list (Title Case back), update, delete with Content-Type and no body.
    const created = await rn.api('POST', '/api/v1/internal/nominee', {
      nominee_name: 'Ravi Kumar',
      relationship: 'Spouse',
      nominee_email: 'Ravi@Example.com',
      nominee_mobile: '9876500002',
      purpose_of_appointment: '',
      client_user_id: 'dp-rn',
    });
    expectJson(created, 201);
    expect(created.json).toMatchObject({ nominee_name: 'Ravi Kumar', relationship: 'Spouse', nominee_email: 'ravi@example.com', nominee_mobile: '+919876500002', purpose_of_appointment: null, client_user_id: 'dp-rn' });
    const id = created.json.id;
    const listed = await rn.api('GET', '/api/v1/internal/nominee/user/dp-rn');
    expect(listed.json.map((n: any) => [n.id, n.relationship])).toEqual([[id, 'Spouse']]);
    const updated = await rn.api('PUT', `/api/v1/internal/nominee/${id}`, {
      user_id: 'dp-rn',
      client_user_id: 'dp-rn',
      nominee_name: 'Ravi K',
      relationship: 'Sibling',
      nominee_email: 'ravi@example.com',
      nominee_mobile: '+919876500002',
      purpose_of_appointment: 'Acts for me',
    });
    expectJson(updated, 200);
    expect(updated.json).toMatchObject({ id, nominee_name: 'Ravi K', relationship: 'Sibling', purpose_of_appointment: 'Acts for me' });
    const deleted = await rn.api('DELETE', `/api/v1/internal/nominee/${id}`);
    expectJson(deleted, 200);
    expect((await rn.api('GET', '/api/v1/internal/nominee/user/dp-rn')).json).toEqual([]);

    // Tickets: create with the SDK's category, list it back the same way; rights requests file tickets.
    const ticket = await rn.api('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-rn', subject: 'Spam', category: 'Privacy Concern', description: 'Too many SMS' });
    expectJson(ticket, 201);
    expect(ticket.json).toMatchObject({ subject: 'Spam', category: 'Privacy Concern', description: 'Too many SMS', status: 'open', client_user_id: 'dp-rn', ticket_id: expect.stringMatching(/^GRV-/) });
    expect((await rn.api('POST', '/api/v1/internal/rights-requests/access-request', { user_id: 'dp-rn', subject: 'Data Access Request', description: 'User requested access to personal data from Rights Center.', metadata: { asset_id: null, source: 'Rights Center' } })).status).toBe(201);
    expect((await rn.api('POST', '/api/v1/internal/rights-requests/deletion-request', { user_id: 'dp-rn', reason: 'User requested data deletion from Rights Center', metadata: { requested_at: new Date().toISOString(), source: 'Rights Center' } })).status).toBe(201);
    const tickets = await rn.api('GET', '/api/v1/internal/grievance/user/dp-rn');
    expect(tickets.json.map((g: any) => [g.category, g.status])).toEqual([
      ['Erasure', 'open'],
      ['Data Access', 'open'],
      ['Privacy Concern', 'open'],
    ]);
    // The organization sees them with the contract's values.
    const org = await admin(a, 'GET', '/grievance/user/dp-rn');
    expect(org.json().map((g: any) => g.category)).toEqual(['erasure', 'data_access', 'complaint']);
  });

  test('Flutter, sso with a minted token: string ids, `Spouse` back for the edit form, whole objects on create and update, DELETE as Dart sends it', async () => {
    const { a, sdkKey, cp } = await setUp();
    await personWithConsent(a, sdkKey, cp, 'dp-fl');
    const fl = flutter(a, { apiKey: sdkKey, userId: 'dp-fl', authToken: await mint(a, 'dp-fl') });

    const settings = await fl.request('GET', '/api/v1/internal/rights-center/settings/global');
    expectJson(settings, 200);
    expect(settings.json).toMatchObject({ access_mode: 'sso', background_color: '#020617', show_grievance_section: true, dpo_working_hours_enabled: true });
    const noDpo = await fl.request('GET', '/api/v1/internal/dpo');
    expect([noDpo.status, noDpo.json.code]).toEqual([404, 'not_found']);

    const groups = await fl.request('GET', '/api/v1/internal/consent/user/dp-fl');
    for (const p of groups.json[0].purposes) str(p.id);
    const saved = await fl.request('POST', '/api/v1/internal/consent/rights-center', {
      userId: 'dp-fl',
      purposes: [
        {
          id: cp.purposes[2].id,
          name: 'Analytics',
          title: 'Analytics',
          description: '',
          expiry_period: '',
          is_mandatory: false,
          consented: 'accepted',
          isLegitimate: false,
          dataElements: [],
          processingActivities: [],
          type: 'Optional',
          timestamp: 1_795_000_000_000,
          shownToPrincipal: false,
        },
      ],
      action: 'approved',
      source: 'right center flutter',
      metadata: { button_used: 'save', interaction_type: 'rights_center' },
    });
    expectJson(saved, 200);
    expect((await current(a, cp.id, 'dp-fl')).consent_action).toBe('approved');

    const created = await fl.request('POST', '/api/v1/internal/nominee', {
      nominee_name: 'Meera',
      relationship: 'Spouse',
      nominee_email: 'meera@example.com',
      nominee_mobile: '+919876500003',
      purpose_of_appointment: '',
      client_user_id: 'dp-fl',
    });
    expectJson(created, 201);
    const n = created.json.data ?? created.json;
    for (const v of [n.id, n.nominee_name, n.relationship, n.nominee_email, n.nominee_mobile, n.user_id, n.client_user_id]) str(v);
    expect(['Spouse', 'Parent', 'Child', 'Sibling', 'Other']).toContain(n.relationship);
    expect(n.relationship).toBe('Spouse');
    // Flutter's update sends Nominee.toJson(): purpose_of_appointment left out when blank.
    const updated = await fl.request('PUT', `/api/v1/internal/nominee/${n.id}`, { nominee_name: 'Meera S', relationship: 'Spouse', nominee_email: 'meera@example.com', nominee_mobile: '+919876500003' });
    expectJson(updated, 200);
    expect(updated.json).toMatchObject({ id: n.id, nominee_name: 'Meera S', relationship: 'Spouse', purpose_of_appointment: null });
    // A relationship the dropdown lacks shows as Other, and an unchanged Other keeps it.
    await admin(a, 'PUT', `/nominee/${n.id}`, { relationship: 'legal_guardian' });
    const listed = await fl.request('GET', '/api/v1/internal/nominee/user/dp-fl');
    expect(listed.json[0].relationship).toBe('Other');
    await fl.request('PUT', `/api/v1/internal/nominee/${n.id}`, { nominee_name: 'Meera S', relationship: 'Other', nominee_email: 'meera@example.com', nominee_mobile: '+919876500003' });
    expect((await admin(a, 'GET', '/nominee/user/dp-fl')).json()[0].relationship).toBe('legal_guardian');
    const deleted = await fl.request('DELETE', `/api/v1/internal/nominee/${n.id}`);
    expect(deleted.status).toBe(200);

    const ticket = await fl.request('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-fl', subject: 'Access', category: 'Data Access', description: 'Send me my data' });
    expectJson(ticket, 201);
    const g = ticket.json.data ?? ticket.json;
    for (const v of [g.id, g.ticket_id, g.subject, g.category, g.description, g.status, g.created_at, g.client_user_id]) str(v);
    expect(g.category).toBe('Data Access');
    const tickets = await fl.request('GET', '/api/v1/internal/grievance/user/dp-fl');
    expect(tickets.json.map((x: any) => x.ticket_id)).toEqual([g.ticket_id]);
  });

  test("a person's token reaches only their own records: another user id is 401, another person's nominee 404", async () => {
    const { a, sdkKey, cp } = await setUp();
    await personWithConsent(a, sdkKey, cp, 'dp-a');
    const other = await admin(a, 'POST', '/nominee', { user_id: 'dp-b', nominee_name: 'B', nominee_email: 'b@example.com', nominee_mobile: '+919876500009', relationship: 'parent' });
    const rn = reactNative(a, { apiKey: sdkKey });
    rn.setAuth('dp-a', await mint(a, 'dp-a'));
    for (const path of ['/api/v1/internal/grievance/user/dp-b', '/api/v1/internal/nominee/user/dp-b', '/api/v1/internal/consent/user/dp-b', '/api/v1/internal/consent/user-consent-status?userId=dp-b']) {
      const res = await rn.api('GET', path);
      expect([path, res.status, res.json.code]).toEqual([path, 401, 'dp_token_other_person']);
    }
    const filed = await rn.api('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-b', subject: 's', category: 'Other', description: 'd' });
    expect([filed.status, filed.json.code]).toEqual([401, 'dp_token_other_person']);
    for (const method of ['PUT', 'DELETE']) {
      const res = await rn.api(method, `/api/v1/internal/nominee/${other.json().id}`, method === 'PUT' ? { nominee_name: 'Mine now', relationship: 'Child', nominee_email: 'b@example.com', nominee_mobile: '+919876500009' } : undefined);
      expect([method, res.status, res.json.code]).toEqual([method, 404, 'not_found']);
    }
    // A forged or expired token is refused outright.
    rn.setAuth('dp-a', 'dpt_00000000000000000000000000000000');
    expect((await rn.api('GET', '/api/v1/internal/grievance/user/dp-a')).status).toBe(401);
    // Bad values from the form: 400 naming the field.
    rn.setAuth('dp-a', await mint(a, 'dp-a'));
    const bad = await rn.api('POST', '/api/v1/internal/nominee', { nominee_name: 'X', relationship: 'Cousin', nominee_email: 'not-an-email', nominee_mobile: '12', client_user_id: 'dp-a' });
    expect([bad.status, bad.json.code]).toEqual([400, 'validation_failed']);
    const badEmail = await rn.api('POST', '/api/v1/internal/nominee', { nominee_name: 'X', relationship: 'Child', nominee_email: 'not-an-email', nominee_mobile: '+919876500009', client_user_id: 'dp-a' });
    expect(badEmail.json.details.map((d: any) => d.field)).toEqual(['nominee_email']);
  });
});

describe('Rights Center settings (organization side)', () => {
  test('PATCH changes the fields given; bad values are 400; a member reads, an sdk key cannot write', async () => {
    const a = await t.tenant();
    const first = await admin(a, 'GET', '/api/v1/organization/rights-center-settings');
    expect(first.json()).toMatchObject({ access_mode: 'sso', grievance_mode: 'truconsent', show_transparency_section: false });
    const changed = await admin(a, 'PATCH', '/api/v1/organization/rights-center-settings', { grievance_mode: 'external', grievance_external_url: 'https://help.example.com/privacy' });
    expect(changed.json()).toMatchObject({ grievance_mode: 'external', grievance_external_url: 'https://help.example.com/privacy', access_mode: 'sso' });
    const bad = await admin(a, 'PATCH', '/api/v1/organization/rights-center-settings', { button_color: 'green', access_mode: 'sometimes', extra: 1 });
    expect([bad.statusCode, bad.json().details.map((d: any) => d.field).sort()]).toEqual([400, ['access_mode', 'button_color', 'extra']]);
    const sdkKey = await t.key(a, ['sdk']);
    const refused = await t.call({ method: 'PATCH', url: '/api/v1/organization/rights-center-settings', org: a, key: sdkKey, body: { access_mode: 'non_sso' } });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'missing_scope']);
    const audit = await t.db.system.query<{ action: string }>("select action from audit_log where org_id = $1 and action like 'organization.rights%'", [a.id]);
    expect(audit).toHaveLength(1);
  });
});

// ─── The conversation on a ticket (both SDKs' grievance chat) ───────────────

/** The SDKs' own reading of a message (RN getGrievanceMessages, Flutter GrievanceMessage.fromJson). */
function expectSdkMessage(m: any) {
  str(m.id ?? m.message_id);
  expect(['user', 'agent', 'system']).toContain(m.sender);
  str(m.message);
  expect(Number.isNaN(new Date(m.created_at).getTime())).toBe(false);
  expect(m.attachment_url === null || typeof m.attachment_url === 'string').toBe(true);
  expect(m.attachment_name === null || typeof m.attachment_name === 'string').toBe(true);
}

describe('grievance conversation', () => {
  test('React Native: reads and writes on its ticket with the token; the organization sees `user`, the SDK sees the answer and the status change', async () => {
    const { a, sdkKey } = await setUp();
    const rn = reactNative(a, { apiKey: sdkKey });
    rn.setAuth('dp-chat', await mint(a, 'dp-chat'));
    const ticket = (await rn.api('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-chat', subject: 'Spam', category: 'Privacy Concern', description: 'Too many SMS' })).json;
    // The SDK opens the thread by ticket_id (or id when there is none): encodeURIComponent, as rightsCenterApi.ts builds it.
    const path = `/api/v1/internal/grievance/${encodeURIComponent(ticket.ticket_id || ticket.id)}/messages`;
    const empty = await rn.api('GET', path);
    expectJson(empty, 200);
    expect(empty.json).toEqual([]);

    const sent = await rn.api('POST', path, { sender: 'user', message: 'Any news?' });
    expectJson(sent, 201);
    expectSdkMessage(sent.json);
    expect(sent.json).toMatchObject({ sender: 'user', message: 'Any news?', attachment_url: null });

    // The organization's side: the same conversation, the person's message as `user`; its answer and a status change.
    const org = await admin(a, 'GET', `/grievance/${ticket.ticket_id}/messages`);
    expect(org.json().map((m: any) => [m.id, m.sender, m.message])).toEqual([[sent.json.id, 'user', 'Any news?']]);
    expect((await admin(a, 'POST', `/grievance/${ticket.ticket_id}/messages`, { message: 'Looking into it', attachment_url: 'https://files.example.com/notes/reply.pdf' })).statusCode).toBe(201);
    expect((await admin(a, 'POST', `/api/v1/grievances/${ticket.ticket_id}/status`, { status: 'in_progress' })).statusCode).toBe(200);

    // What the SDK polls every 5 s: oldest first, every field it reads.
    const thread = await rn.api('GET', path);
    expectJson(thread, 200);
    thread.json.forEach(expectSdkMessage);
    expect(thread.json.map((m: any) => [m.sender, m.message])).toEqual([
      ['user', 'Any news?'],
      ['agent', 'Looking into it'],
      ['system', 'Status changed from open to in progress'],
    ]);
    expect(thread.json[1]).toMatchObject({ attachment_url: 'https://files.example.com/notes/reply.pdf', attachment_name: 'reply.pdf' });
    // The same conversation as the person's own API shows it.
    const me = await t.call({ method: 'GET', url: `/api/v1/me/grievances/${ticket.ticket_id}/messages`, org: a, headers: { authorization: `Bearer ${rn.rc.token}` } });
    expect(me.json().map((m: any) => m.id)).toEqual(thread.json.map((m: any) => m.id));

    // Bad input: 400 naming the field, nothing written.
    for (const body of [{ sender: 'user', message: '' }, { sender: 'user' }, { sender: 'user', message: 'x'.repeat(5001) }]) {
      const bad = await rn.api('POST', path, body);
      expect([bad.status, bad.json.code, bad.json.details.map((d: any) => d.field)]).toEqual([400, 'validation_failed', ['message']]);
    }
    expect((await rn.api('GET', path)).json).toHaveLength(3);
  });

  test("Flutter: Dart's headers on the bodiless GET, the body as sent (`sender` is the token's to decide), string ids", async () => {
    const { a, sdkKey } = await setUp();
    const fl = flutter(a, { apiKey: sdkKey, userId: 'dp-chat-fl', authToken: await mint(a, 'dp-chat-fl') });
    const created = await fl.request('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-chat-fl', subject: 'Access', category: 'Data Access', description: 'Send me my data' });
    const ticket = created.json.data ?? created.json;
    // native_right_center.dart opens `ticket_id ?? id`; rights_center_api.dart puts it in the path as is.
    const path = `/api/v1/internal/grievance/${ticket.ticket_id ?? ticket.id}/messages`;
    const sent = await fl.request('POST', path, { sender: 'agent', message: 'Hello from the app' });
    expect([200, 201]).toContain(sent.status);
    const m = sent.json.data ?? sent.json;
    expectSdkMessage(m);
    // A person cannot speak as the organization: the token makes the sender `user`.
    expect(m).toMatchObject({ sender: 'user', message: 'Hello from the app' });
    const list = await fl.request('GET', path);
    expectJson(list, 200);
    const items = Array.isArray(list.json) ? list.json : list.json.data;
    items.forEach(expectSdkMessage);
    expect(items.map((x: any) => [String(x.id ?? x.message_id), x.sender])).toEqual([[m.id, 'user']]);
    expect((await admin(a, 'GET', `/grievance/${ticket.ticket_id}/messages`)).json().map((x: any) => x.sender)).toEqual(['user']);
  });

  test("a person's token cannot read or write another person's conversation; an sdk key alone reaches none", async () => {
    const { a, sdkKey } = await setUp();
    const theirs = (await admin(a, 'POST', '/grievance', { client_user_id: 'dp-b', subject: 'Mine', description: 'Private', category: 'other' })).json();
    await admin(a, 'POST', `/grievance/${theirs.ticket_id}/messages`, { message: 'For dp-b only' });
    const path = `/api/v1/internal/grievance/${theirs.ticket_id}/messages`;

    const rn = reactNative(a, { apiKey: sdkKey });
    rn.setAuth('dp-a', await mint(a, 'dp-a'));
    const read = await rn.api('GET', path);
    expect([read.status, read.json.code]).toEqual([404, 'not_found']);
    expect(read.text).not.toContain('For dp-b only');
    const wrote = await rn.api('POST', path, { sender: 'user', message: 'Not mine' });
    expect([wrote.status, wrote.json.code]).toEqual([404, 'not_found']);
    // Naming the other person as X-User-Id does not help: the token is A's.
    rn.rc.userId = 'dp-b';
    expect((await rn.api('GET', path)).json.code).toBe('dp_token_other_person');

    // The key alone (no token): no conversation at all, with or without a user id.
    const keyOnly = reactNative(a, { apiKey: sdkKey, userId: 'dp-b' });
    for (const [method, body] of [['GET', undefined], ['POST', { sender: 'user', message: 'Hi' }]] as const) {
      const res = await keyOnly.api(method, path, body);
      expect([method, res.status, res.json.code]).toEqual([method, 401, 'bearer_token_required']);
    }
    const fl = flutter(a, { apiKey: sdkKey, userId: 'dp-b' });
    expect((await fl.request('GET', path)).status).toBe(401);
    expect((await admin(a, 'GET', `/grievance/${theirs.ticket_id}/messages`)).json().map((m: any) => m.message)).toEqual(['For dp-b only']);
  });

  test('the WebSocket the SDKs try first is not served: a JSON 404 (they poll instead), and its query string (token, key) is never logged', async () => {
    const { a, sdkKey } = await setUp();
    const token = await mint(a, 'dp-ws');
    const lines: string[] = [];
    const logged = await buildApp({ config: { ...t.config, logLevel: 'info' }, db: t.db, clock: manualClock(), logStream: { write: (line: string) => void lines.push(line) } });
    await logged.listen({ port: 0, host: '127.0.0.1' });
    try {
      const wsPort = (logged.server.address() as AddressInfo).port;
      // rightsCenterApi.ts grievanceWebSocketUri / rights_center_api.dart: /ws/grievance/{ticketId}?token=&api_key=&org_id=
      const query = new URLSearchParams({ token, api_key: sdkKey, org_id: a.slug }).toString();
      const res = await new Promise<Reply>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: wsPort,
            method: 'GET',
            path: `/ws/grievance/GRV-AAAAAAAA?${query}`,
            headers: { host: `${a.slug}.localhost:${wsPort}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
          },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              resolve({ status: r.statusCode!, headers: r.headers, text, json: JSON.parse(text) });
            });
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ error: expect.any(String) });
      expect(lines.length).toBeGreaterThan(0);
      const log = lines.join('\n');
      for (const secret of [token, sdkKey, token.slice(4), 'api_key=']) expect(log).not.toContain(secret);
    } finally {
      await logged.close();
    }
  });
});

// ─── Flutter's non_sso Rights Center, and what the person-side services decide ─

describe('Rights Center through the person-side services', () => {
  test('Flutter, non_sso: Dart code sign-in (`assetId: null`), the contact person, consent status, rights requests as Dart sends them', async () => {
    const { a, sdkKey, cp } = await setUp();
    await admin(a, 'PUT', '/api/v1/data-principals/dp-otp', { phone: '+919876500011' });
    await admin(a, 'PUT', '/api/v1/organization/dpo', { full_name: 'Priya Rao', email: 'dpo@example.com', qualifications: 'CIPP/E' });
    await admin(a, 'PATCH', '/api/v1/organization/rights-center-settings', { access_mode: 'non_sso' });
    await personWithConsent(a, sdkKey, cp, 'dp-otp');
    const fl = flutter(a, { apiKey: sdkKey });

    const settings = await fl.request('GET', '/api/v1/internal/rights-center/settings/global');
    const rc = settings.json.data ?? settings.json;
    expect(rc.access_mode).toBe('non_sso');
    // RightsCenterSettings.fromJson: one wrong type and the widget falls back to its defaults; colours go through _hexToColor.
    for (const k of ['access_mode', 'background_color', 'primary_text_color', 'secondary_text_color', 'button_color', 'button_text_color', 'font_family', 'grievance_mode', 'grievance_external_url', 'consents_section_title', 'rights_section_title', 'nominees_section_title', 'transparency_description']) {
      expect([k, typeof rc[k]]).toEqual([k, 'string']);
    }
    for (const k of ['show_consents_section', 'show_rights_section', 'show_nominees_section', 'show_transparency_section', 'show_dpo_section', 'show_grievance_section', 'dpo_qualifications_enabled', 'dpo_responsibilities_enabled', 'dpo_working_hours_enabled', 'dpo_response_time_enabled']) {
      expect([k, typeof rc[k]]).toEqual([k, 'boolean']);
    }
    for (const k of ['background_color', 'primary_text_color', 'secondary_text_color', 'button_color', 'button_text_color']) expect([k, rc[k]]).toEqual([k, expect.stringMatching(/^#[0-9a-fA-F]{6}$/)]);
    // rights_center_api.dart sendOtp/verifyOtp: `assetId` goes out as null when the widget has none.
    expect((await fl.request('POST', '/api/v1/internal/rights-center-access/send-otp', { assetId: null, phone: '9876500011', countryCode: '+91' })).status).toBe(202);
    const verified = await fl.request('POST', '/api/v1/internal/rights-center-access/verify-otp', { assetId: null, phone: '9876500011', countryCode: '+91', otp: await lastCodeFor(a, '+919876500011') });
    expectJson(verified, 200);
    const data = verified.json.data ?? verified.json;
    const accessToken = data.accessToken ?? data.access_token;
    const dataPrincipalId = data.dataPrincipalId ?? data.data_principal_id;
    str(accessToken);
    expect(dataPrincipalId).toBe('dp-otp');
    fl.state.userId = dataPrincipalId;
    fl.state.authToken = accessToken;

    // DPOInfo.fromJson: String? each.
    const dpo = await fl.request('GET', '/api/v1/internal/dpo');
    const d = dpo.json.data ?? dpo.json;
    for (const k of ['full_name', 'email', 'appointment_date', 'qualifications', 'responsibilities', 'working_hours', 'response_time']) expect([k, d[k] === null || typeof d[k] === 'string']).toEqual([k, true]);
    expect(d).toMatchObject({ full_name: 'Priya Rao', qualifications: 'CIPP/E' });

    // getUserConsentsFlat: the banners with purposes, then the status overlay (timestamp ISO, purpose_consents).
    const groups = await fl.request('GET', `/api/v1/internal/consent/user/${encodeURIComponent('dp-otp')}`);
    for (const p of groups.json[0].purposes) {
      for (const v of [p.id, p.name, p.description, p.expiry_period, p.consented, p.status, p.purpose_type]) str(v);
      expect(typeof p.is_mandatory).toBe('boolean');
      expect(typeof p.is_legitimate).toBe('boolean');
    }
    const status = await fl.request('GET', `/api/v1/internal/consent/user-consent-status?userId=${encodeURIComponent('dp-otp')}`);
    const latest = status.json.collectionPoints[0].latest_consent;
    expect(Number.isNaN(Date.parse(latest.timestamp))).toBe(false);
    expect(latest.purpose_consents.map((p: any) => [p.purpose_id, p.status])).toEqual(cp.purposes.map((p: any, i: number) => [p.id, i < 2 ? 'accepted' : 'declined']));

    // Rights requests exactly as Dart builds them; tickets filed for the person, through POST /api/v1/me/grievances' service.
    const access = await fl.request('POST', '/api/v1/internal/rights-requests/access-request', {
      user_id: 'dp-otp',
      subject: 'Data Access Request',
      description: 'User requested access to personal data from Rights Center.',
      metadata: { asset_id: null, source: 'Rights Center' },
    });
    expectJson(access, 201);
    const deletion = await fl.request('POST', '/api/v1/internal/rights-requests/deletion-request', {
      user_id: 'dp-otp',
      reason: 'User requested data deletion from Rights Center',
      metadata: { asset_id: null, requested_at: '2026-11-28T10:00:00.000', source: 'Rights Center' },
    });
    expectJson(deletion, 201);
    const mine = await t.call({ method: 'GET', url: '/api/v1/me/grievances', org: a, headers: { authorization: `Bearer ${accessToken}` } });
    expect(mine.json().map((g: any) => [g.ticket_id, g.category, g.client_user_id, g.description])).toEqual([
      [deletion.json.ticket_id, 'erasure', 'dp-otp', 'User requested data deletion from Rights Center'],
      [access.json.ticket_id, 'data_access', 'dp-otp', 'User requested access to personal data from Rights Center.'],
    ]);
    // Only as themselves: the request naming someone else is refused, nothing filed.
    const forOther = await fl.request('POST', '/api/v1/internal/rights-requests/deletion-request', { user_id: 'dp-other', reason: 'x' });
    expect([forOther.status, forOther.json.code]).toEqual([401, 'dp_token_other_person']);
    expect((await admin(a, 'GET', '/grievance/user/dp-other')).json()).toEqual([]);
  });

  test("a nominee change is the person's change: a verified nominee whose identity changes goes back to pending; the same form keeps it verified", async () => {
    const { a, sdkKey } = await setUp();
    const fl = flutter(a, { apiKey: sdkKey, userId: 'dp-nom', authToken: await mint(a, 'dp-nom') });
    const form = { nominee_name: 'Meera', relationship: 'Parent', nominee_email: 'meera@example.com', nominee_mobile: '+919876500021' };
    const created = await fl.request('POST', '/api/v1/internal/nominee', { ...form, purpose_of_appointment: '', client_user_id: 'dp-nom' });
    expectJson(created, 201);
    const id = created.json.id;
    expect(created.json).toMatchObject({ status: 'pending', relationship: 'Parent', purpose_of_appointment: null });
    expect((await admin(a, 'PUT', `/nominee/${id}`, { status: 'verified' })).json().status).toBe('verified');

    // Flutter resends the whole form (purpose added): who the nominee is did not change.
    const same = await fl.request('PUT', `/api/v1/internal/nominee/${id}`, { ...form, purpose_of_appointment: 'Acts for me' });
    expectJson(same, 200);
    expect(same.json).toMatchObject({ id, status: 'verified', purpose_of_appointment: 'Acts for me' });
    // A new mobile number is someone the organization has not verified.
    const changed = await fl.request('PUT', `/api/v1/internal/nominee/${id}`, { ...form, nominee_mobile: '+919876500022' });
    expectJson(changed, 200);
    expect(changed.json).toMatchObject({ id, status: 'pending', nominee_mobile: '+919876500022', purpose_of_appointment: null });
    // The person's own API sees the same nominee.
    const me = await t.call({ method: 'GET', url: '/api/v1/me/nominees', org: a, headers: { authorization: `Bearer ${fl.state.authToken}` } });
    expect(me.json().map((n: any) => [n.id, n.status, n.relationship])).toEqual([[id, 'pending', 'parent']]);
    // A status in the body is not the person's to set (the SDK ignores fields it does not send; status is never read).
    const sneaky = await fl.request('PUT', `/api/v1/internal/nominee/${id}`, { ...form, nominee_mobile: '+919876500022', status: 'verified' });
    expect(sneaky.json.status).toBe('pending');
    // Removing it (Dart: Content-Type with charset, Content-Length: 0, no body) answers JSON; a second time: 404.
    const removed = await fl.request('DELETE', `/api/v1/internal/nominee/${id}`);
    expectJson(removed, 200);
    expect(removed.json).toMatchObject({ success: true, id });
    expect((await fl.request('DELETE', `/api/v1/internal/nominee/${id}`)).status).toBe(404);
  });

  test('React Native 0.1.3: every banner from GET consent?asset_id= with an sdk key (its Rights Center seeds purposes from it)', async () => {
    const { a, sdkKey, asset, cp } = await setUp();
    const other = (await admin(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' })).json();
    const web = (await admin(a, 'POST', '/api/v1/collection-points', { asset_id: other.id, name: 'Newsletter', notice: 'N', purposes: [{ name: 'Mail', required: false }] })).json();
    const rn = reactNative(a, { apiKey: sdkKey, userId: 'dp-old' });
    const all = await rn.api('GET', '/api/v1/internal/consent');
    expectJson(all, 200);
    expect(all.json.map((b: any) => b.collection_point).sort()).toEqual([cp.id, web.id].sort());
    const one = await rn.api('GET', `/api/v1/internal/consent?asset_id=${encodeURIComponent(asset.id)}`);
    expect(one.json).toHaveLength(1);
    const b = one.json[0];
    expect(b).toMatchObject({ collection_point: cp.id, title: 'Signup', asset: { id: asset.id } });
    expect(b.purposes.map((p: any) => [p.id, p.name, p.is_mandatory, p.status])).toEqual(cp.purposes.map((p: any) => [p.id, p.name, p.required, 'active']));
    expect((await rn.api('GET', '/api/v1/internal/consent?asset_id=not-an-asset')).json).toEqual([]);
    // Another organization's key sees none of it.
    const stranger = await t.tenant();
    expect((await reactNative(a, { apiKey: await t.key(stranger, ['sdk']) }).api('GET', '/api/v1/internal/consent')).status).toBe(401);
  });
});

describe("every route that acts for one person, walked with another person's records", () => {
  test("a token of person A reaches none of B's records on the SDK surface: 401 when the request names B, 404 for B's ticket or nominee; nothing of B's changes or shows", async () => {
    const { a, sdkKey, cp } = await setUp();
    await personWithConsent(a, sdkKey, cp, 'dp-b');
    const ticket = (await admin(a, 'POST', '/grievance', { client_user_id: 'dp-b', subject: 'B only', description: 'Private to B', category: 'other' })).json();
    await admin(a, 'POST', `/grievance/${ticket.ticket_id}/messages`, { message: 'For dp-b only' });
    const nominee = (await admin(a, 'POST', '/nominee', { user_id: 'dp-b', nominee_name: 'B nominee', nominee_email: 'bn@example.com', nominee_mobile: '+919876500031', relationship: 'parent' })).json();
    const snapshot = async () =>
      JSON.stringify(
        await Promise.all([
          admin(a, 'GET', `/consent/${cp.id}/consent?dp_id=dp-b`).then((r) => r.json()),
          admin(a, 'GET', '/grievance/user/dp-b').then((r) => r.json()),
          admin(a, 'GET', `/grievance/${ticket.ticket_id}/messages`).then((r) => r.json()),
          admin(a, 'GET', '/nominee/user/dp-b').then((r) => r.json()),
        ]),
      );
    const before = await snapshot();
    const form = { nominee_name: 'Mine now', relationship: 'Child', nominee_email: 'bn@example.com', nominee_mobile: '+919876500031' };
    // Each route as the SDK sends it, aimed at B: a path or body naming B (401), or B's record by id (404).
    const requests: Record<string, { method: string; path: string; body?: object; status: number }> = {
      'GET /api/v1/internal/consent/user/:userId': { method: 'GET', path: '/api/v1/internal/consent/user/dp-b', status: 401 },
      'GET /api/v1/internal/consent/user-consent-status': { method: 'GET', path: '/api/v1/internal/consent/user-consent-status?userId=dp-b', status: 401 },
      'POST /api/v1/internal/consent/rights-center': { method: 'POST', path: '/api/v1/internal/consent/rights-center', body: { userId: 'dp-b', purposes: [{ id: cp.purposes[1].id, name: 'Marketing', consented: 'declined' }], action: 'revoked' }, status: 401 },
      'GET /api/v1/internal/nominee/user/:userId': { method: 'GET', path: '/api/v1/internal/nominee/user/dp-b', status: 401 },
      'POST /api/v1/internal/nominee': { method: 'POST', path: '/api/v1/internal/nominee', body: { ...form, purpose_of_appointment: '', client_user_id: 'dp-b' }, status: 401 },
      'PUT /api/v1/internal/nominee/:id': { method: 'PUT', path: `/api/v1/internal/nominee/${nominee.id}`, body: form, status: 404 },
      'DELETE /api/v1/internal/nominee/:id': { method: 'DELETE', path: `/api/v1/internal/nominee/${nominee.id}`, status: 404 },
      'GET /api/v1/internal/grievance/user/:userId': { method: 'GET', path: '/api/v1/internal/grievance/user/dp-b', status: 401 },
      'POST /api/v1/internal/grievance': { method: 'POST', path: '/api/v1/internal/grievance', body: { client_user_id: 'dp-b', subject: 's', category: 'Other', description: 'd' }, status: 401 },
      'POST /api/v1/internal/rights-requests/access-request': { method: 'POST', path: '/api/v1/internal/rights-requests/access-request', body: { user_id: 'dp-b', subject: 'Data Access Request' }, status: 401 },
      'POST /api/v1/internal/rights-requests/deletion-request': { method: 'POST', path: '/api/v1/internal/rights-requests/deletion-request', body: { user_id: 'dp-b', reason: 'r' }, status: 401 },
      'GET /api/v1/internal/grievance/:ticketId/messages': { method: 'GET', path: `/api/v1/internal/grievance/${ticket.ticket_id}/messages`, status: 404 },
      'POST /api/v1/internal/grievance/:ticketId/messages': { method: 'POST', path: `/api/v1/internal/grievance/${ticket.ticket_id}/messages`, body: { sender: 'user', message: 'Not mine' }, status: 404 },
    };
    const routes = t.app.routeAccess.filter((r) => r.access !== 'public' && r.access.dataPrincipal && !r.access.apiKey && r.url.startsWith('/api/v1/internal/'));
    // A new route for one person fails here until it is walked.
    expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(Object.keys(requests).sort());
    const rn = reactNative(a, { apiKey: sdkKey });
    rn.setAuth('dp-a', await mint(a, 'dp-a'));
    rn.rc.userId = undefined; // the header names nobody: only the path, the body or the record decides
    for (const [name, r] of Object.entries(requests)) {
      const res = await rn.api(r.method, r.path, r.body);
      expect([name, res.status, res.json.code]).toEqual([name, r.status, r.status === 401 ? 'dp_token_other_person' : 'not_found']);
      for (const secret of ['B only', 'Private to B', 'For dp-b only', 'B nominee', nominee.id]) {
        if (!r.path.includes(secret)) expect(res.text, `${name} reveals ${secret}`).not.toContain(secret);
      }
    }
    expect(await snapshot()).toBe(before);
  });

  test('an empty user id (React Native getAllBanners() without one builds `consent/user/`) is "not set": the token decides, so it is the token\'s person\'s own records; without a token 401', async () => {
    const { a, sdkKey } = await setUp();
    await admin(a, 'POST', '/grievance', { client_user_id: 'dp-b', subject: 'B only', description: 'Private to B', category: 'other' });
    const rn = reactNative(a, { apiKey: sdkKey });
    rn.setAuth('dp-a', await mint(a, 'dp-a'));
    const own = (await rn.api('POST', '/api/v1/internal/grievance', { client_user_id: 'dp-a', subject: 'A only', category: 'Other', description: 'Mine' })).json;
    rn.rc.userId = undefined;
    const tickets = await rn.api('GET', '/api/v1/internal/grievance/user/');
    expectJson(tickets, 200);
    expect(tickets.json.map((g: any) => g.ticket_id)).toEqual([own.ticket_id]);
    for (const path of ['/api/v1/internal/consent/user/', '/api/v1/internal/nominee/user/']) {
      const res = await rn.api('GET', path);
      expect([path, res.status, res.json]).toEqual([path, 200, []]);
    }
    const noTicket = await rn.api('GET', '/api/v1/internal/grievance//messages');
    expect([noTicket.status, noTicket.json.code]).toEqual([404, 'not_found']);
    const keyOnly = reactNative(a, { apiKey: sdkKey });
    for (const path of ['/api/v1/internal/consent/user/', '/api/v1/internal/nominee/user/', '/api/v1/internal/grievance/user/']) {
      const res = await keyOnly.api('GET', path);
      expect([path, res.status]).toEqual([path, 401]);
      expect(res.text).not.toContain('B only');
    }
  });
});
