// The hosted consent page (issue 6) through HTTP on both stores: the whole flow (open, code by SMS read
// from an in-memory provider, verify, choose, confirmation, history), codes (wrong, too many tries,
// expiry, resend throttle), expired / superseded / completed / unknown links, CSRF, headers, languages,
// and the outbox worker (retries, backoff, the `http` provider, email erasure).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { manualClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/types.js';
import { createHttpProvider, retryDelayMs, type MessageProvider, type OutgoingMessage } from '../../src/platform/messaging/index.js';
import { createScratchStore, type ScratchStore } from '../support/store.js';
import { UNLIMITED, uniqueSlug } from '../support/app.js';

const LINK = '/api/v1/external/public/consent-link';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Records what it is given; fails the next `failures` sends. */
function memoryProvider() {
  const sent: OutgoingMessage[] = [];
  let failures = 0;
  const provider: MessageProvider & { sent: OutgoingMessage[]; fail(n: number): void } = {
    name: 'memory',
    sent,
    fail: (n) => void (failures = n),
    async send(m) {
      if (failures > 0) {
        failures--;
        throw new Error('gateway unavailable');
      }
      sent.push(m);
    },
  };
  return provider;
}

let store: ScratchStore;
let db: Database;
let app: FastifyInstance;
let provider: ReturnType<typeof memoryProvider>;
const clock = manualClock();
const config = loadConfig({ LOG_LEVEL: 'silent', ...UNLIMITED });

beforeAll(async () => {
  store = await createScratchStore();
  db = await store.open();
  provider = memoryProvider();
  app = await buildApp({ config, db, clock, logger: false, messageProvider: provider });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await store?.drop();
});

interface Tenant {
  id: string;
  slug: string;
  host: string;
  key: string;
  name: string;
}

async function tenant(): Promise<Tenant> {
  const slug = uniqueSlug();
  const org = await app.services.accounts.createOrganization({ slug, name: `Acme & Sons ${slug}` });
  const key = (await app.services.accounts.createApiKey(slug, { scopes: ['admin'] })).key;
  return { id: org.id, slug, host: `${slug}.${config.baseDomain}`, key, name: org.name };
}

async function api(a: Tenant, method: 'GET' | 'POST', url: string, body?: object) {
  const res = await app.inject({ method, url, headers: { host: a.host, 'x-api-key': a.key, ...(method === 'GET' ? { 'x-org-id': a.slug } : {}) }, ...(body ? { payload: body } : {}) });
  return res;
}

interface Setup {
  assetId: string;
  pointId: string;
  purposeIds: string[];
}

async function setup(a: Tenant): Promise<Setup> {
  const asset = (await api(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' })).json();
  const point = (
    await api(a, 'POST', '/api/v1/collection-points', {
      asset_id: asset.id,
      name: 'Sign-up',
      notice: 'We use your data to run your account. <b>not bold</b>',
      purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
    })
  ).json();
  return { assetId: asset.id, pointId: point.id, purposeIds: point.purposes.map((p: { id: string }) => p.id) };
}

async function createLink(a: Tenant, s: Setup, extra: Record<string, unknown> = {}) {
  const res = await api(a, 'POST', LINK, { asset_id: s.assetId, collection_point_id: s.pointId, phone: '+919876543210', dp_id: 'dp-1', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { ...body, token: body.consent_link.slice(body.consent_link.lastIndexOf('/') + 1) as string };
}

/** A browser on the page: keeps the session cookie and reads the forms' CSRF token. */
function visitor(host: string, token: string, headers: Record<string, string> = {}) {
  let cookie: string | null = null;
  let csrf: string | null = null;
  const v = {
    get cookie() {
      return cookie;
    },
    get csrf() {
      return csrf;
    },
    async open(query = '') {
      const res = await app.inject({ method: 'GET', url: `/c/${token}${query}`, headers: { host, ...headers, ...(cookie ? { cookie } : {}) } });
      const set = res.headers['set-cookie'];
      if (typeof set === 'string') cookie = set.split(';')[0]!;
      csrf = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? csrf;
      return res;
    },
    async post(step: string, fields: Record<string, string | string[]> = {}, options: { csrf?: boolean; cookie?: boolean } = {}) {
      const form = new URLSearchParams();
      if (options.csrf !== false && csrf) form.append('csrf', csrf);
      for (const [k, val] of Object.entries(fields)) for (const one of [val].flat()) form.append(k, one);
      return app.inject({
        method: 'POST',
        url: `/c/${token}/${step}?lang=en`,
        headers: { host, 'content-type': 'application/x-www-form-urlencoded', ...headers, ...(cookie && options.cookie !== false ? { cookie } : {}) },
        payload: form.toString(),
      });
    },
  };
  return v;
}

/** Delivers the outbox and returns the code of the last SMS sent for this test's phone. */
async function deliveredCode(): Promise<string> {
  await app.outbox.runOnce();
  const sms = provider.sent.filter((m) => m.channel === 'sms').at(-1)!;
  return /\b(\d{6})\b/.exec(sms.body)![1]!;
}

async function verified(a: Tenant, token: string) {
  const v = visitor(a.host, token);
  await v.open();
  expect((await v.post('code')).statusCode).toBe(303);
  const code = await deliveredCode();
  expect((await v.post('verify', { code })).statusCode).toBe(303);
  return { v, code };
}

const codeRow = async (a: Tenant, eventId: string) =>
  (await db.system.query<Record<string, any>>('select * from consent_link_codes where org_id = $1 and event_id = $2', [a.id, eventId]))[0];

describe('the whole flow', () => {
  test('open, request a code, verify, choose, confirmation; the request is complete with the action from the choices', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s, { email: 'Person@Example.com' });
    expect(link.delivery_status).toEqual({ sms: 'queued', email: 'queued' });

    // The link's own messages go out through the provider; the email address is erased once sent.
    expect(await app.outbox.runOnce()).toEqual({ sent: 2, retrying: 0, failed: 0 });
    const outbox = await db.system.query<Record<string, any>>('select channel, recipient, body, status, attempts, sent_at from outbound_messages where org_id = $1 order by channel', [a.id]);
    expect(outbox).toEqual([
      { channel: 'email', recipient: null, body: null, status: 'sent', attempts: 1, sent_at: clock.now() },
      { channel: 'sms', recipient: '+919876543210', body: null, status: 'sent', attempts: 1, sent_at: clock.now() },
    ]);
    expect(provider.sent.slice(-2).map((m) => [m.channel, m.recipient])).toEqual([
      ['sms', '+919876543210'],
      ['email', 'person@example.com'],
    ]);

    const v = visitor(a.host, link.token);
    const page = await v.open();
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`${a.name.replace('&', '&amp;')} asks for your consent`);
    expect(page.body).toContain('We use your data to run your account. &lt;b&gt;not bold&lt;/b&gt;');
    expect(page.body).toMatch(/Account<span class="badge required">Required<\/span>/);
    expect(page.body).toMatch(/Offers<span class="badge">Optional<\/span>/);
    expect(page.body).toContain('+********3210');
    expect(page.body).not.toContain('9876543210');
    expect(page.body).not.toContain('<script');
    expect(v.cookie).toMatch(/^assent_page=[\w-]{43}$/);

    const sent = await v.post('code');
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe(`/c/${link.token}?lang=en`);
    const code = await deliveredCode();
    const sms = provider.sent.at(-1)!;
    expect(sms).toMatchObject({ channel: 'sms', recipient: '+919876543210' });
    expect(sms.body).toBe(`${code} is your code for ${a.name}. It is valid for 10 minutes. Do not share it with anyone.`);
    // Stored hashed, with a validity of 10 minutes.
    const row = await codeRow(a, link.event_id);
    expect(row).toMatchObject({ code_hash: sha256(`${link.event_id}:${code}`), attempts: 0, sends: 1, sent_at: clock.now(), expires_at: new Date(clock.now().getTime() + 10 * MINUTE) });
    expect(JSON.stringify(row)).not.toContain(`"${code}"`);

    const withForm = await v.open();
    expect(withForm.body).toContain('<label for="code">6-digit code</label>');
    expect((await v.post('verify', { code })).statusCode).toBe(303);

    const choices = await v.open();
    expect(choices.body).toContain('<legend>Your choices</legend>');
    expect(choices.body).toContain(`<input type="checkbox" id="purpose-0" name="purpose" value="${s.purposeIds[0]}">`);
    expect(choices.body).toContain('<label for="purpose-0">');

    clock.advance(MINUTE);
    const done = await v.post('consent', { purpose: [s.purposeIds[0]!] });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('Your choices are recorded');
    expect(done.body).toContain('You agreed to some purposes.');
    expect(done.body).toContain('Account: <strong>Agreed</strong>');
    expect(done.body).toContain('Offers: <strong>Not agreed</strong>');
    expect(done.body).toContain(`<time datetime="${clock.now().toISOString()}">`);
    // The confirmation leads to the Rights Center, where withdrawing is as easy as giving.
    expect(done.body).toContain(
      `<p>You can see, change or withdraw your consent at any time, as easily as you gave it, in your Rights Center. <a href="/rights?lang=en">Open ${a.name.replace('&', '&amp;')}&#39;s Rights Center</a></p>`,
    );
    const receipt = /<code>([^<]+)<\/code>/.exec(done.body)![1]!;
    expect(receipt).toMatch(UUID);
    // The signed receipt is offered as a file (a data: URL, no script), and verifies with the organization's JWKS alone.
    const download = /<a download="consent-receipt-([^"]+)\.jws" href="data:application\/jose;charset=utf-8,([\w.-]+)">Download your signed receipt<\/a>/.exec(done.body);
    expect(download?.[1]).toBe(receipt);
    const jwks = (await app.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { host: a.host } })).json();
    const signed = await compactVerify(download![2]!, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    expect(JSON.parse(new TextDecoder().decode(signed.payload))).toMatchObject({ record_id: receipt, channel: 'link', event_id: link.event_id, request_id: link.request_id, action: 'partial_consent' });

    const records = await db.system.query<Record<string, any>>('select id, dp_id, consent_action, purposes, event_id, request_id, channel from consent_records where org_id = $1', [a.id]);
    expect(records).toEqual([
      {
        id: receipt,
        dp_id: 'dp-1',
        consent_action: 'partial_consent',
        purposes: [
          { id: s.purposeIds[0], granted: true },
          { id: s.purposeIds[1], granted: false },
        ],
        event_id: link.event_id,
        request_id: link.request_id,
        channel: 'link',
      },
    ]);
    const history = await api(a, 'GET', `${LINK}/history?asset_id=${s.assetId}`);
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json().data).toMatchObject([{ request_id: link.request_id, status: 'complete', consent_action: 'partial_consent', completed_at: clock.now().toISOString() }]);
    const audit = await db.system.query<Record<string, any>>("select actor_type, actor_id, target_id, details from audit_log where org_id = $1 and action = 'consent.recorded'", [a.id]);
    expect(audit).toEqual([{ actor_type: 'data_principal', actor_id: link.event_id, target_id: receipt, details: expect.objectContaining({ channel: 'link', consent_action: 'partial_consent' }) }]);

    // Completed: the page says so, and a second submission records nothing.
    const again = await v.open();
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('Already done');
    expect((await v.post('consent', { purpose: s.purposeIds })).statusCode).toBe(409);
    expect(await db.system.query('select id from consent_records where org_id = $1', [a.id])).toHaveLength(1);
  });

  test('every purpose agreed: approved; none: declined; a request without dp_id uses the verified phone', async () => {
    const a = await tenant();
    const s = await setup(a);
    const all = await createLink(a, s);
    const first = await verified(a, all.token);
    expect((await first.v.post('consent', { purpose: s.purposeIds })).body).toContain('You agreed to every purpose.');
    const none = await createLink(a, s, { dp_id: undefined });
    const second = await verified(a, none.token);
    expect((await second.v.post('consent')).body).toContain('You declined.');
    const rows = await db.system.query<Record<string, any>>('select dp_id, consent_action from consent_requests where org_id = $1 order by created_at, id', [a.id]);
    expect(rows).toEqual([
      { dp_id: 'dp-1', consent_action: 'approved' },
      { dp_id: '+919876543210', consent_action: 'declined' },
    ]);
  });
});

describe('one-time codes', () => {
  test('a wrong code is refused with the tries left; the fifth wrong try locks the code, even against the right one', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    await v.open();
    await v.post('code');
    const code = await deliveredCode();
    const wrong = code === '000000' ? '111111' : '000000';
    for (let left = 4; left >= 1; left--) {
      const res = await v.post('verify', { code: wrong });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(`<p class="alert" role="alert">That code is not right. ${left === 1 ? '1 try' : `${left} tries`} left.</p>`);
    }
    const fifth = await v.post('verify', { code: wrong });
    expect(fifth.statusCode).toBe(429);
    expect(fifth.body).toContain('Too many wrong tries. Send a new code.');
    const right = await v.post('verify', { code });
    expect(right.statusCode).toBe(429);
    expect((await codeRow(a, link.event_id))!.verified_at).toBeNull();
    // Not a wrong try: a malformed code.
    expect((await v.post('verify', { code: '12ab' })).statusCode).toBe(429);
  });

  test('a malformed code is not counted; a code before any was sent is refused', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    await v.open();
    const early = await v.post('verify', { code: '123456' });
    expect(early.statusCode).toBe(400);
    expect(early.body).toContain('Send a code first.');
    await v.post('code');
    await deliveredCode();
    const res = await v.post('verify', { code: '12ab' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Enter the 6 digits of the code.');
    expect((await codeRow(a, link.event_id))!.attempts).toBe(0);
  });

  test('a code is valid for 10 minutes', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    await v.open();
    await v.post('code');
    const code = await deliveredCode();
    clock.advance(10 * MINUTE);
    const res = await v.post('verify', { code });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This code has expired. Send a new code.');
  });

  test('resends are throttled (60 s apart, 5 codes a link); a new code replaces the old one', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    await v.open();
    await v.post('code');
    const first = await deliveredCode();
    clock.advance(20_000);
    const soon = await v.post('code');
    expect(soon.statusCode).toBe(429);
    expect(soon.body).toContain('Please wait 40 seconds before asking for another code.');
    let last = first;
    for (let i = 2; i <= 5; i++) {
      clock.advance(MINUTE);
      expect((await v.post('code')).statusCode).toBe(303);
      last = await deliveredCode();
    }
    clock.advance(MINUTE);
    const sixth = await v.post('code');
    expect(sixth.statusCode).toBe(429);
    expect(sixth.body).toContain('Too many codes were sent for this link.');
    expect((await codeRow(a, link.event_id))!.sends).toBe(5);
    if (first !== last) expect((await v.post('verify', { code: first })).statusCode).toBe(400);
    expect((await v.post('verify', { code: last })).statusCode).toBe(303);
  });

  test('the verification belongs to the browser session that entered the code', async () => {
    const a = await tenant();
    const s = await setup(a);
    const link = await createLink(a, s);
    await verified(a, link.token);
    const other = visitor(a.host, link.token);
    const page = await other.open();
    expect(page.body).not.toContain('Your choices');
    const res = await other.post('consent', { purpose: s.purposeIds });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Confirm your phone with a code first.');
  });
});

describe('links that no longer take consent, and unknown ones', () => {
  test('an expired link says so: the organization can send a new one', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a), { expiry_hours: 1 });
    const v = visitor(a.host, link.token);
    await v.open();
    clock.advance(HOUR);
    const res = await v.open();
    expect(res.statusCode).toBe(410);
    expect(res.body).toContain('This link has expired');
    expect(res.body).toContain(`${a.name.replace('&', '&amp;')} can send you a new one.`);
    expect((await v.post('code')).statusCode).toBe(410);
  });

  test('a superseded (regenerated) link says so; the new one works', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a), { expiry_hours: 1 });
    clock.advance(HOUR);
    const dup = await api(a, 'POST', `${LINK}/duplicate/${link.request_id}`, {});
    expect(dup.statusCode, dup.body).toBe(201);
    const old = await visitor(a.host, link.token).open();
    expect(old.statusCode).toBe(410);
    expect(old.body).toContain('This link was replaced');
    const fresh = dup.json().consent_link as string;
    expect((await visitor(a.host, fresh.slice(fresh.lastIndexOf('/') + 1)).open()).statusCode).toBe(200);
  });

  test('an unknown token, a malformed one, another organization and an unknown host get the same 404 page', async () => {
    const a = await tenant();
    const b = await tenant();
    const link = await createLink(a, await setup(a));
    const pages = await Promise.all([
      visitor(a.host, 'A'.repeat(32)).open(),
      visitor(a.host, 'nope').open(),
      visitor(b.host, link.token).open(),
      visitor(`unknown-org.${config.baseDomain}`, link.token).open(),
      visitor(config.baseDomain, link.token).open(),
    ]);
    for (const res of pages) {
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(pages[0]!.body);
    }
    expect(pages[0]!.body).toContain('Page not found');
    expect(pages[0]!.body).not.toContain(a.slug);
  });
});

describe('security', () => {
  test('strict CSP and the usual headers on the page; none of them on the JSON API', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const res = await visitor(a.host, link.token).open();
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none';style-src 'sha256-[A-Za-z0-9+/=]+';form-action 'self';frame-ancestors 'none';base-uri 'none'$/);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(String(res.headers['set-cookie'])).toMatch(/; Path=\/c\/; HttpOnly; SameSite=Strict; Max-Age=86400$/);
    const hash = /'sha256-([^']+)'/.exec(csp)![1];
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]!;
    expect(createHash('sha256').update(style).digest('base64')).toBe(hash);
    const apiRes = await api(a, 'GET', `${LINK}/history?asset_id=${link.request_id}`);
    expect(apiRes.headers['content-security-policy']).toBeUndefined();
  });

  test('forms without the CSRF token, or without the session cookie, are refused with a 403 page', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    await v.open();
    for (const res of [await v.post('code', {}, { csrf: false }), await v.post('code', {}, { cookie: false }), await v.post('code', { csrf: 'x' }, { csrf: false })]) {
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('Please open the link again');
    }
    expect(await db.system.query('select 1 from consent_link_codes where org_id = $1', [a.id])).toEqual([]);
    // The token is tied to the link: another link's form token does not work here.
    const other = await createLink(a, await setup(a));
    const w = visitor(a.host, other.token);
    await w.open();
    const crossed = await app.inject({
      method: 'POST',
      url: `/c/${link.token}/code`,
      headers: { host: a.host, cookie: w.cookie!, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `csrf=${encodeURIComponent(w.csrf!)}`,
    });
    expect(crossed.statusCode).toBe(403);
  });

  test('the JSON API still answers 415 to a form body', async () => {
    const a = await tenant();
    const res = await app.inject({ method: 'POST', url: LINK, headers: { host: a.host, 'x-api-key': a.key, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'phone=1' });
    expect(res.statusCode).toBe(415);
  });
});

describe('languages', () => {
  test('the page follows Accept-Language, offers a switch, and ?lang= wins; the code SMS is in the page language', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token, { 'accept-language': 'hi-IN,hi;q=0.9,en;q=0.8' });
    const hindi = await v.open();
    expect(hindi.body).toContain('<html lang="hi">');
    expect(hindi.body).toContain('आपकी सहमति माँग रहा है');
    expect(hindi.body).toContain('<span class="badge required">आवश्यक</span>');
    expect(hindi.body).toContain(`<a href="/c/${link.token}?lang=en" lang="en" hreflang="en">English</a>`);
    const english = await v.open('?lang=en');
    expect(english.body).toContain('<html lang="en">');
    expect(english.body).toContain('asks for your consent');
    const form = new URLSearchParams({ csrf: v.csrf! });
    await app.inject({ method: 'POST', url: `/c/${link.token}/code?lang=hi`, headers: { host: a.host, cookie: v.cookie!, 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    await app.outbox.runOnce();
    expect(provider.sent.at(-1)!.body).toMatch(/^.+ के लिए आपका कोड \d{6} है।/);
  });
});

describe('the outbox worker', () => {
  test('a failed send is retried with backoff, then sent; after 5 attempts it is marked failed', async () => {
    const a = await tenant();
    const s = await setup(a);
    await app.outbox.runOnce();
    await createLink(a, s);
    provider.fail(1);
    expect(await app.outbox.runOnce()).toEqual({ sent: 0, retrying: 1, failed: 0 });
    const status = async () =>
      (await db.system.query<Record<string, any>>('select status, attempts, next_attempt_at, last_error from outbound_messages where org_id = $1', [a.id]))[0];
    expect(await status()).toEqual({ status: 'queued', attempts: 1, next_attempt_at: new Date(clock.now().getTime() + 30_000), last_error: 'gateway unavailable' });
    expect(await app.outbox.runOnce()).toEqual({ sent: 0, retrying: 0, failed: 0 });
    clock.advance(30_000);
    expect(await app.outbox.runOnce()).toEqual({ sent: 1, retrying: 0, failed: 0 });
    expect(await status()).toMatchObject({ status: 'sent', attempts: 2, last_error: null });

    await createLink(a, s, { dp_id: 'dp-2' });
    provider.fail(5);
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect(await app.outbox.runOnce()).toEqual(attempt < 5 ? { sent: 0, retrying: 1, failed: 0 } : { sent: 0, retrying: 0, failed: 1 });
      if (attempt < 5) clock.advance(retryDelayMs(attempt));
    }
    const failed = await db.system.query<Record<string, any>>("select status, attempts, body from outbound_messages where org_id = $1 and status <> 'sent'", [a.id]);
    expect(failed).toEqual([{ status: 'failed', attempts: 5, body: null }]);
    expect([1, 2, 3, 4, 5, 10].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 3_600_000]);
  });

  test('the http provider POSTs JSON to the channel webhook; a non-2xx answer is an error', async () => {
    const received: { url: string; headers: IncomingMessage['headers']; body: unknown }[] = [];
    let status = 202;
    const server = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        received.push({ url: req.url!, headers: req.headers, body: JSON.parse(data) });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const http = createHttpProvider({ smsUrl: new URL(`${base}/sms`), emailUrl: null });
      await http.send({ id: 'm-1', channel: 'sms', recipient: '+919876543210', body: 'hello' });
      expect(received).toEqual([
        { url: '/sms', headers: expect.objectContaining({ 'content-type': 'application/json', 'idempotency-key': 'm-1' }), body: { id: 'm-1', channel: 'sms', to: '+919876543210', body: 'hello' } },
      ]);
      status = 500;
      await expect(http.send({ id: 'm-2', channel: 'sms', recipient: '+919876543210', body: 'x' })).rejects.toThrow('sms webhook answered 500');
      await expect(http.send({ id: 'm-3', channel: 'email', recipient: 'a@b.c', body: 'x' })).rejects.toThrow('EMAIL_WEBHOOK_URL is not set');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the contact person (DPDP Rule 9, issue 35)', () => {
  const person = { full_name: 'Meera Iyer', email: 'dpo@acme.example', phone: '+919811111111', working_hours: 'Mon-Fri 09:00-17:00 IST', response_time: 'Within 7 days' };
  const setPerson = async (a: Tenant) => {
    const res = await app.inject({ method: 'PUT', url: '/api/v1/organization/dpo', headers: { host: a.host, 'x-api-key': a.key }, payload: person });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  /** The page's footer: the contact person with every field, in the page's language. */
  const expectPerson = (body: string, lang: 'en' | 'hi' = 'en') => {
    const footer = /<footer>([\s\S]*)<\/footer>/.exec(body)?.[1] ?? '';
    expect(footer).toContain(lang === 'en' ? 'Who to contact' : 'किससे संपर्क करें');
    for (const value of Object.values(person)) expect(footer).toContain(value);
    expect(footer).toContain('href="mailto:dpo@acme.example"');
    expect(footer).toContain('href="tel:+919811111111"');
  };

  test('every state of the page shows the contact person, in English and Hindi', async () => {
    const a = await tenant();
    await setPerson(a);
    const s = await setup(a);
    const link = await createLink(a, s, { expiry_hours: 1 });
    const v = visitor(a.host, link.token);
    expectPerson((await v.open()).body);
    expectPerson((await v.open('?lang=hi')).body, 'hi');
    await v.post('code');
    expectPerson((await v.open()).body);
    const wrong = await v.post('verify', { code: '000000' });
    expect(wrong.statusCode).toBe(400);
    expectPerson(wrong.body);
    const code = await deliveredCode();
    await v.post('verify', { code });
    const choices = await v.open();
    expect(choices.body).toContain('Your choices');
    expectPerson(choices.body);
    const missing = await v.post('consent', { purpose: [] }, { csrf: false });
    expect(missing.statusCode).toBe(403);
    expectPerson(missing.body);
    const done = await v.post('consent', { purpose: s.purposeIds });
    expect(done.statusCode).toBe(200);
    expectPerson(done.body);
    const completed = await v.open('?lang=hi');
    expect(completed.statusCode).toBe(409);
    expectPerson(completed.body, 'hi');

    const expiring = await createLink(a, s, { expiry_hours: 1 });
    const replaced = await createLink(a, s, { expiry_hours: 1 });
    clock.advance(HOUR);
    expect((await api(a, 'POST', `${LINK}/duplicate/${replaced.request_id}`, {})).statusCode).toBe(201);
    const superseded = await visitor(a.host, replaced.token).open();
    expect(superseded.statusCode).toBe(410);
    expect(superseded.body).toContain('This link was replaced');
    expectPerson(superseded.body);
    const expired = await visitor(a.host, expiring.token).open();
    expect(expired.body).toContain('This link has expired');
    expectPerson(expired.body);

    const closing = await createLink(a, s);
    const patch = await app.inject({ method: 'PATCH', url: `/api/v1/collection-points/${s.pointId}`, headers: { host: a.host, 'x-api-key': a.key }, payload: { status: 'inactive' } });
    expect(patch.statusCode, patch.body).toBe(200);
    const closed = await visitor(a.host, closing.token).open('?lang=hi');
    expect(closed.statusCode).toBe(410);
    expectPerson(closed.body, 'hi');
  });

  test('with no contact person set, every page says how to reach the organization: its Rights Center', async () => {
    const a = await tenant();
    const link = await createLink(a, await setup(a));
    const v = visitor(a.host, link.token);
    const page = await v.open();
    const footer = /<footer>([\s\S]*)<\/footer>/.exec(page.body)?.[1] ?? '';
    expect(footer).toContain('has not named a contact person yet. You can reach them through their Rights Center.');
    expect(footer).toContain('<a href="/rights?lang=en">');
    const hindi = /<footer>([\s\S]*)<\/footer>/.exec((await v.open('?lang=hi')).body)?.[1] ?? '';
    expect(hindi).toContain('अधिकार केंद्र');
    expect(hindi).toContain('<a href="/rights?lang=hi">');
  });
});
