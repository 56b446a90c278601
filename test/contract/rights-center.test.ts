// The Rights Center (contract §7, issue 15 item 6) through HTTP on both stores, as a browser without
// JavaScript uses it: sign-in with a code (to a phone or an email on file) or with ?token=, the session
// cookie, sign-out, CSRF on every form, the contact person and the language switch on every page, the
// consents (state, change, withdraw in one POST), and another person's records answering 404.
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Res = LightMyRequestResponse;
const MINUTE = 60_000;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

async function api(a: Tenant, method: 'GET' | 'POST' | 'PUT', url: string, body?: object) {
  const res = await t.call({ method, url, org: a, key: a.key, body });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

interface Point {
  id: string;
  purposeIds: string[];
}

/** A collection point with a required and an optional purpose. */
async function point(a: Tenant, name = 'Sign-up'): Promise<Point> {
  const asset = await api(a, 'POST', '/api/v1/assets', { name: `Website ${name}`, kind: 'website' });
  const cp = await api(a, 'POST', '/api/v1/collection-points', {
    asset_id: asset.id,
    name,
    notice: 'We use your data to run your account. <b>not bold</b>',
    purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
  });
  return { id: cp.id, purposeIds: cp.purposes.map((p: { id: string }) => p.id) };
}

async function consent(a: Tenant, p: Point, dpId: string, granted: boolean[] = [true, true]) {
  return api(a, 'POST', `/consent/${p.id}/consent`, { dp_id: dpId, purposes: p.purposeIds.map((id, i) => ({ id, granted: granted[i] })) });
}

async function mint(a: Tenant, dpId: string): Promise<string> {
  return (await api(a, 'POST', `/api/v1/data-principals/${dpId}/tokens`, {})).access_token;
}

async function lastCodeFor(a: TestOrg, recipient: string): Promise<string | null> {
  const rows = await t.db.system.query<{ body: string }>(
    'select body from outbound_messages where org_id = $1 and recipient = $2 order by created_at desc, id desc limit 1',
    [a.id, recipient],
  );
  return rows[0] ? rows[0].body : null;
}

const records = async (a: TestOrg) =>
  t.db.system.query<Record<string, unknown>>('select dp_id, collection_point_id, consent_action, purposes, channel from consent_records where org_id = $1 order by created_at, id', [a.id]);

/** A browser without JavaScript: keeps the cookie, reads each page's CSRF token, follows nothing by itself. */
function browser(a: TestOrg, headers: Record<string, string> = {}) {
  let cookie: string | null = null;
  let csrf: string | null = null;
  const keep = (res: Res) => {
    const set = res.headers['set-cookie'];
    if (typeof set === 'string') cookie = set.split(';')[0]!;
    csrf = /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? csrf;
    return res;
  };
  return {
    get cookie() {
      return cookie;
    },
    get csrf() {
      return csrf;
    },
    set cookie(value: string | null) {
      cookie = value;
    },
    async get(url: string) {
      return keep(await t.app.inject({ method: 'GET', url, headers: { host: a.host, ...headers, ...(cookie ? { cookie } : {}) } }));
    },
    async post(url: string, fields: Record<string, string | string[]> = {}, options: { csrf?: string | false } = {}) {
      const form = new URLSearchParams();
      const token = options.csrf === undefined ? csrf : options.csrf;
      if (token) form.append('csrf', token);
      for (const [k, val] of Object.entries(fields)) for (const one of [val].flat()) form.append(k, one);
      return keep(
        await t.app.inject({
          method: 'POST',
          url,
          headers: { host: a.host, 'content-type': 'application/x-www-form-urlencoded', ...headers, ...(cookie ? { cookie } : {}) },
          payload: form.toString(),
        }),
      );
    },
  };
}

/** Signed in with a token minted for dpId, the way an app's link does it. */
async function signedIn(a: Tenant, dpId: string) {
  const b = browser(a);
  const res = await b.get(`/rights?token=${await mint(a, dpId)}`);
  expect(res.statusCode).toBe(303);
  await b.get('/rights');
  return b;
}

const main = (body: string) => /<main>\n([\s\S]*)\n<\/main>/.exec(body)![1]!;
const footer = (body: string) => /<footer>\n([\s\S]*)\n<\/footer>/.exec(body)![1]!;

describe('sign-in with a code', () => {
  test('phone on file: the sign-in page, a code by SMS, the code form, signed in with a session cookie', async () => {
    const a = await t.tenant();
    await api(a, 'PUT', '/api/v1/data-principals/dp-1', { phone: '9876543210' });
    const b = browser(a);

    const page = await b.get('/rights');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none';style-src 'sha256-[A-Za-z0-9+/=]+';form-action 'self';frame-ancestors 'none';base-uri 'none'$/);
    expect(page.headers['set-cookie']).toMatch(/^assent_rights=[\w-]{43}; Path=\/rights; HttpOnly; SameSite=Lax; Max-Age=86400$/);
    expect(page.body).not.toContain('<script');
    expect(main(page.body)).toBe(`<h1>Sign in</h1>

<p>See and change the consents you gave ${a.slug}, withdraw them, make a request about your data, and appoint a nominee. We send a 6-digit code to the phone number or email address ${a.slug} has on file for you.</p>

<form method="post" action="/rights/sign-in?lang=en">
<input type="hidden" name="csrf" value="${b.csrf}">
<input type="hidden" name="next" value="/rights">
<label for="contact">Phone number or email address</label>
<p class="hint" id="contact-hint">For example +919876543210 or name@example.com</p>
<input type="text" id="contact" name="contact" autocomplete="username" aria-describedby="contact-hint" maxlength="254" required value="">
<button type="submit">Send code</button>
</form>`);

    const sent = await b.post('/rights/sign-in?lang=en', { contact: '98765 43210', next: '/rights' });
    expect(sent.statusCode).toBe(200);
    expect(main(sent.body)).toContain('<p class="ok" role="status">If 98765 43210 is on file, a 6-digit code is on its way. It is valid for 10 minutes.</p>');
    expect(main(sent.body)).toContain('<input type="hidden" name="contact" value="98765 43210">');
    const sms = (await lastCodeFor(a, '+919876543210'))!;
    const code = /\b(\d{6})\b/.exec(sms)![1]!;
    expect(sms).toBe(`${code} is your code to sign in to ${a.slug}'s Rights Center. It is valid for 10 minutes. Do not share it with anyone.`);

    const verified = await b.post('/rights/sign-in/verify?lang=en', { contact: '98765 43210', code, next: '/rights' });
    expect(verified.statusCode).toBe(303);
    expect(verified.headers.location).toBe('/rights?lang=en');
    // The cookie holds a Rights Center session id, never a dpt_ token (issue 35).
    expect(verified.headers['set-cookie']).toMatch(/^assent_rights=[\w-]{43}\.drs_[0-9A-Za-z]{43}; Path=\/rights; HttpOnly; SameSite=Lax; Max-Age=3600$/);
    const session = /\.(drs_[0-9A-Za-z]{43});/.exec(verified.headers['set-cookie'] as string)![1]!;
    // Stored only as its hash; no dpt_ token was made for this sign-in.
    const stored = await t.db.system.query<{ session_hash: string; source: string }>('select session_hash, source from rights_center_sessions where org_id = $1', [a.id]);
    expect(stored).toEqual([{ session_hash: createHash('sha256').update(session).digest('hex'), source: 'code' }]);
    expect(await t.db.system.query('select 1 from dp_tokens where org_id = $1', [a.id])).toEqual([]);

    const home = await b.get('/rights');
    expect(home.statusCode).toBe(200);
    expect(main(home.body)).toContain('<h1>Your consents</h1>');
    expect(main(home.body)).toContain('You have no consent on record with this organization.');
    expect(home.body).toContain('<form method="post" action="/rights/sign-out?lang=en">');
    // The sign-in is the person's own act, in the audit log.
    const audit = await t.db.system.query<{ actor_type: string; action: string }>("select actor_type, action from audit_log where org_id = $1 and action = 'data_principal.signed_in'", [a.id]);
    expect(audit).toEqual([{ actor_type: 'data_principal', action: 'data_principal.signed_in' }]);
  });

  test('email on file, in Hindi: the code goes by email, worded in Hindi', async () => {
    const a = await t.tenant();
    await api(a, 'PUT', '/api/v1/data-principals/dp-2', { email: 'asha@example.com' });
    const b = browser(a);
    const page = await b.get('/rights?lang=hi');
    expect(page.body).toContain('<html lang="hi">');
    expect(main(page.body)).toContain('<h1>साइन इन करें</h1>');
    await b.post('/rights/sign-in?lang=hi', { contact: 'Asha@Example.com' });
    const mail = (await lastCodeFor(a, 'asha@example.com'))!;
    const code = /\b(\d{6})\b/.exec(mail)![1]!;
    expect(mail).toBe(`${a.slug} के अधिकार केंद्र में साइन इन करने के लिए आपका कोड ${code} है। यह 10 मिनट तक मान्य है। इसे किसी के साथ साझा न करें।`);
    const verified = await b.post('/rights/sign-in/verify?lang=hi', { contact: 'Asha@Example.com', code });
    expect(verified.headers.location).toBe('/rights?lang=hi');
    expect(main((await b.get('/rights?lang=hi')).body)).toContain('<h1>आपकी सहमतियाँ</h1>');
  });

  test('an unknown contact gets the same page and no message; a malformed one is asked again (400)', async () => {
    const a = await t.tenant();
    const b = browser(a);
    await b.get('/rights');
    const unknown = await b.post('/rights/sign-in', { contact: '+919999999999' });
    expect(unknown.statusCode).toBe(200);
    expect(main(unknown.body)).toContain('If +919999999999 is on file, a 6-digit code is on its way.');
    expect(await lastCodeFor(a, '+919999999999')).toBeNull();
    const wrong = await b.post('/rights/sign-in/verify', { contact: '+919999999999', code: '123456' });
    expect(wrong.statusCode).toBe(401);
    expect(main(wrong.body)).toContain('<p class="alert" role="alert" id="code-error">That code is not right, or it has expired. Check it, or send a new code.</p>');
    const bad = await b.post('/rights/sign-in', { contact: '12345' });
    expect(bad.statusCode).toBe(400);
    expect(main(bad.body)).toContain('<p class="alert" role="alert">Enter a phone number (10 digits, or + and the country code) or an email address.</p>');
    expect(main(bad.body)).toContain('value="12345"');
  });

  test('a wrong code is refused (401); a resend within 30 s is refused with Retry-After (429), the code form kept', async () => {
    const a = await t.tenant();
    await api(a, 'PUT', '/api/v1/data-principals/dp-3', { phone: '+919800000003' });
    const b = browser(a);
    await b.get('/rights');
    await b.post('/rights/sign-in', { contact: '+919800000003' });
    const code = /\b(\d{6})\b/.exec((await lastCodeFor(a, '+919800000003'))!)![1]!;
    const wrong = await b.post('/rights/sign-in/verify', { contact: '+919800000003', code: code === '000000' ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    // The error alone (no "a code is on its way" beside it); the field is invalid and described by it (issue 30).
    expect(main(wrong.body)).toContain('<p class="alert" role="alert" id="code-error">That code is not right, or it has expired. Check it, or send a new code.</p>');
    expect(main(wrong.body)).not.toContain('class="ok"');
    expect(main(wrong.body)).toContain('maxlength="6" required aria-invalid="true" aria-describedby="code-error">');
    t.clock.advance(10_000);
    const again = await b.post('/rights/sign-in', { contact: '+919800000003' });
    expect(again.statusCode).toBe(429);
    expect(again.headers['retry-after']).toBe('20');
    expect(main(again.body)).toContain('<p class="alert" role="alert" id="code-error">A code was sent a moment ago. Please wait 20 seconds before asking for another.</p>');
    expect(main(again.body)).toContain('<label for="code">6-digit code</label>');
    expect(main(again.body)).not.toContain('aria-invalid');
    // The first code still works.
    expect((await b.post('/rights/sign-in/verify', { contact: '+919800000003', code })).statusCode).toBe(303);
  });

  test('a sign-in leads back to the page asked for; never off the Rights Center', async () => {
    const a = await t.tenant();
    await api(a, 'PUT', '/api/v1/data-principals/dp-4', { phone: '+919800000004' });
    const b = browser(a);
    await b.get('/rights');
    await b.post('/rights/sign-in', { contact: '+919800000004', next: '//evil.example/rights' });
    const code = /\b(\d{6})\b/.exec((await lastCodeFor(a, '+919800000004'))!)![1]!;
    const res = await b.post('/rights/sign-in/verify', { contact: '+919800000004', code, next: 'https://evil.example/' });
    expect(res.headers.location).toBe('/rights?lang=en');
  });
});

describe('sign-in with ?token=', () => {
  test('a minted token signs in, the URL is left without it, the cookie lives as long as the token', async () => {
    const a = await t.tenant();
    const token = (await api(a, 'POST', '/api/v1/data-principals/dp-9/tokens', { ttl_seconds: 600 })).access_token;
    const b = browser(a);
    const res = await b.get(`/rights?token=${token}&lang=hi`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/rights?lang=hi');
    expect(res.headers['set-cookie']).toMatch(/^assent_rights=[\w-]{43}\.drs_[0-9A-Za-z]{43}; Path=\/rights; HttpOnly; SameSite=Lax; Max-Age=600$/);
    expect(res.headers['set-cookie']).not.toContain(token);
    const home = await b.get('/rights');
    expect(main(home.body)).toContain('<h1>Your consents</h1>');
  });

  test('an unknown or another organization\'s token: 401 and the sign-in form', async () => {
    const a = await t.tenant();
    const other = await t.tenant();
    const foreign = await mint(other, 'dp-1');
    for (const token of [foreign, 'dpt_' + 'x'.repeat(32), 'nonsense']) {
      const res = await browser(a).get(`/rights?token=${token}`);
      expect(res.statusCode).toBe(401);
      expect(main(res.body)).toContain('<p class="alert" role="alert">This sign-in link has expired or is not valid. Sign in with a code instead.</p>');
      expect(res.headers['set-cookie']).not.toContain('dpt_');
    }
  });

  test('when the token expires the session ends: 401, sign in again, the token dropped from the cookie', async () => {
    const a = await t.tenant();
    const b = browser(a);
    await b.get(`/rights?token=${(await api(a, 'POST', '/api/v1/data-principals/dp-9/tokens', { ttl_seconds: 60 })).access_token}`);
    t.clock.advance(61_000);
    const res = await b.get('/rights');
    expect(res.statusCode).toBe(401);
    expect(main(res.body)).toContain('<p class="alert" role="alert">Your session has ended. Please sign in again.</p>');
    expect(b.cookie).toMatch(/^assent_rights=[\w-]{43}$/);
  });

  test('a leaked session cookie is no API credential: as a Bearer token it is refused everywhere (issue 35)', async () => {
    const a = await t.tenant();
    await api(a, 'PUT', '/api/v1/data-principals/dp-1', { phone: '9876543210' });
    const b = browser(a);
    await b.get('/rights');
    await b.post('/rights/sign-in?lang=en', { contact: '9876543210', next: '/rights' });
    const code = /\b(\d{6})\b/.exec((await lastCodeFor(a, '+919876543210'))!)![1]!;
    expect((await b.post('/rights/sign-in/verify?lang=en', { contact: '9876543210', code, next: '/rights' })).statusCode).toBe(303);
    expect(main((await b.get('/rights')).body)).toContain('<h1>Your consents</h1>');
    const value = b.cookie!.split('=')[1]!;
    const session = value.split('.')[1]!;
    for (const credential of [session, value]) {
      for (const [host, url] of [[a.host, '/api/v1/me'], [a.host, '/api/v1/me/consents'], [t.config.baseDomain, '/api/v1/me']] as const) {
        const res = await t.app.inject({ method: 'GET', url, headers: { host, authorization: `Bearer ${credential}` } });
        expect(res.statusCode, `${host}${url}`).toBe(401);
      }
    }
    // And the cookie works only on the Rights Center: the API ignores it.
    const withCookie = await t.app.inject({ method: 'GET', url: '/api/v1/me', headers: { host: a.host, cookie: b.cookie! } });
    expect(withCookie.statusCode).toBe(401);
  });

  test('sign-out ends the session on the server: a copy of the cookie no longer signs in (issue 35)', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const copy = b.cookie!;
    expect((await b.post('/rights/sign-out?lang=en')).statusCode).toBe(303);
    const stolen = await t.app.inject({ method: 'GET', url: '/rights', headers: { host: a.host, cookie: copy } });
    expect(stolen.statusCode).toBe(401);
    expect(main(stolen.body)).toContain('Your session has ended. Please sign in again.');
    const ended = await t.db.system.query<{ ended: boolean }>('select ended_at is not null as ended from rights_center_sessions where org_id = $1', [a.id]);
    expect(ended).toEqual([{ ended: true }]);
  });

  test("a new sign-in deletes the person's expired and ended sessions; live ones and other people's stay (migration 0036)", async () => {
    const a = await t.tenant();
    const ended = await signedIn(a, 'dp-1');
    expect((await ended.post('/rights/sign-out?lang=en')).statusCode).toBe(303);
    await browser(a).get(`/rights?token=${(await api(a, 'POST', '/api/v1/data-principals/dp-1/tokens', { ttl_seconds: 60 })).access_token}`);
    const live = await signedIn(a, 'dp-1');
    await signedIn(a, 'dp-2');
    const count = async () => t.db.system.query<{ dp_id: string; n: number }>('select dp_id, count(*)::int as n from rights_center_sessions where org_id = $1 group by dp_id order by dp_id', [a.id]);
    // The ended one went at the next sign-in; the 60-second one and the live one remain.
    expect(await count()).toEqual([{ dp_id: 'dp-1', n: 2 }, { dp_id: 'dp-2', n: 1 }]);
    t.clock.advance(61_000);
    await signedIn(a, 'dp-1');
    // The expired one is gone; the live one and the new one remain; dp-2's is untouched.
    expect(await count()).toEqual([{ dp_id: 'dp-1', n: 2 }, { dp_id: 'dp-2', n: 1 }]);
    const expired = await t.db.system.query('select 1 from rights_center_sessions where org_id = $1 and expires_at <= $2', [a.id, t.clock.now()]);
    expect(expired).toEqual([]);
    expect(main((await live.get('/rights')).body)).toContain('<h1>Your consents</h1>');
  });

  test('sign-out drops the token; the next page is the sign-in form', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const res = await b.post('/rights/sign-out?lang=en');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/rights?lang=en&done=signed-out');
    expect(b.cookie).toMatch(/^assent_rights=[\w-]{43}$/);
    const page = await b.get('/rights?lang=en&done=signed-out');
    expect(page.statusCode).toBe(200);
    expect(main(page.body)).toContain('<p class="ok" role="status">You are signed out.</p>');
    expect(main(page.body)).toContain('<h1>Sign in</h1>');
  });
});

describe('every page', () => {
  test('shows the contact person (DPDP Rule 9), or says there is none', async () => {
    const a = await t.tenant();
    const b = browser(a);
    expect(footer((await b.get('/rights')).body)).toBe(`<h2>Who to contact</h2><p>${a.slug} has not named a contact person yet.</p>`);
    await api(a, 'PUT', '/api/v1/organization/dpo', { full_name: 'Meera <DPO>', email: 'DPO@Example.com', phone: '+919811111111', working_hours: 'Mon-Fri 9-5', response_time: '7 days' });
    const expected = `<h2>Who to contact</h2>
<p>Meera &lt;DPO&gt;</p>
<dl>
<dt>Email</dt><dd><a href="mailto:dpo@example.com">dpo@example.com</a></dd>
<dt>Phone</dt><dd><a href="tel:+919811111111">+919811111111</a></dd>
<dt>Working hours</dt><dd>Mon-Fri 9-5</dd>
<dt>Response time</dt><dd>7 days</dd>
</dl>`;
    expect(footer((await b.get('/rights')).body)).toBe(expected);
    const s = await signedIn(a, 'dp-1');
    expect(footer((await s.get('/rights')).body)).toBe(expected);
    expect(footer((await s.post('/rights/consents/nope/withdraw')).body)).toBe(expected);
  });

  test('the language switch keeps the page; Accept-Language chooses when ?lang= does not', async () => {
    const a = await t.tenant();
    const res = await browser(a, { 'accept-language': 'hi-IN,hi;q=0.9,en;q=0.5' }).get('/rights');
    expect(res.body).toContain('<html lang="hi">');
    expect(res.body).toContain('<nav aria-label="भाषा"><a href="/rights?lang=en" lang="en" hreflang="en">English</a><a href="/rights?lang=hi" lang="hi" aria-current="true">हिन्दी</a></nav>');
  });

  test('a host that names no organization: 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/rights', headers: { host: 'nobody-here.localhost' } });
    expect(res.statusCode).toBe(404);
    expect(main(res.body)).toContain('<h1>Page not found</h1>');
  });

  test('CSRF: a form without the token, with another session\'s, or without the cookie is refused (403) and changes nothing', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await consent(a, p, 'dp-1');
    const b = await signedIn(a, 'dp-1');
    const other = await signedIn(a, 'dp-1');
    const before = await records(a);
    const cases: Res[] = [
      await b.post(`/rights/consents/${p.id}/withdraw`, {}, { csrf: false }),
      await b.post(`/rights/consents/${p.id}/withdraw`, {}, { csrf: other.csrf! }),
      await b.post(`/rights/consents/${p.id}`, { purpose: p.purposeIds }, { csrf: 'x'.repeat(43) }),
      await b.post('/rights/sign-out', {}, { csrf: false }),
    ];
    const noCookie = browser(a);
    cases.push(await noCookie.post('/rights/sign-in', { contact: '+919800000001' }, { csrf: b.csrf! }));
    for (const res of cases) {
      expect(res.statusCode).toBe(403);
      expect(main(res.body)).toContain('<h1>Please try again</h1>');
    }
    expect(await records(a)).toEqual(before);
    expect(main((await b.get('/rights')).body)).toContain('<h1>Your consents</h1>');
  });
});

describe('consents', () => {
  test('every consent with its current state, purposes, notice, a one-step withdraw form and a change form', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const given = await consent(a, p, 'dp-1', [true, false]);
    const b = await signedIn(a, 'dp-1');
    const res = await b.get('/rights');
    expect(res.statusCode).toBe(200);
    const at = new Date(given.created_at);
    const when = new Intl.DateTimeFormat('en-IN', { dateStyle: 'long', timeStyle: 'long', timeZone: 'UTC' }).format(at);
    expect(main(res.body)).toBe(`<h1>Your consents</h1>


<p>Every consent you have given here, as it stands now. You can change your choices or withdraw at any time; withdrawing is one click.</p>
<section class="consent" aria-labelledby="cp-0">
<h2 id="cp-0">Sign-up</h2>
<p><span class="state">You agreed to some purposes</span> · Since <time datetime="${at.toISOString()}">${when}</time></p>
<ul class="purposes"><li>Account<span class="badge required">Required</span>: <strong>Agreed</strong></li><li>Offers<span class="badge">Optional</span>: <strong>Not agreed</strong></li></ul>
<p><a href="/rights/consents/${given.consent_id}/receipt?lang=en" download="consent-receipt-${given.consent_id}.jws">Download the signed receipt of this record</a></p>
<form method="post" action="/rights/consents/${p.id}/withdraw?lang=en">
<input type="hidden" name="csrf" value="${b.csrf}">
<button type="submit" class="danger">Withdraw consent: Sign-up</button>
</form>
<details>
<summary>Notice (version 1)</summary>
<p class="notice">We use your data to run your account. &lt;b&gt;not bold&lt;/b&gt;</p>
</details>
<details>
<summary>Change your choices</summary>
<form method="post" action="/rights/consents/${p.id}?lang=en">
<input type="hidden" name="csrf" value="${b.csrf}">
<fieldset>
<legend>Change your choices: Sign-up</legend>
<p>Tick each purpose you agree to. If you do not agree to a required purpose, your consent is recorded as declined.</p>
<div class="choice"><input type="checkbox" id="cp-0-0" name="purpose" value="${p.purposeIds[0]}" checked>
<label for="cp-0-0">Account<span class="badge required">Required</span></label></div><div class="choice"><input type="checkbox" id="cp-0-1" name="purpose" value="${p.purposeIds[1]}">
<label for="cp-0-1">Offers<span class="badge">Optional</span></label></div>
</fieldset>
<button type="submit">Save my choices: Sign-up</button>
</form>
</details>
</section>
<h2>Your data</h2>
<p><a href="/rights/data?lang=en">What we hold about you, and copies of your data</a></p>`);
  });

  test("each record's signed receipt downloads as a file that verifies with the JWKS; another person's is the 404 page", async () => {
    const a = await t.tenant();
    const p = await point(a);
    const given = await consent(a, p, 'dp-1', [true, false]);
    const theirs = await consent(a, p, 'dp-2');
    const b = await signedIn(a, 'dp-1');
    const res = await b.get(`/rights/consents/${given.consent_id}/receipt?lang=en`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/jose; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="consent-receipt-${given.consent_id}.jws"`);
    const jwks = (await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: a })).json();
    const verified = await compactVerify(res.body, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toMatchObject({ record_id: given.consent_id, principal: { dp_id: 'dp-1' } });
    const other = await b.get(`/rights/consents/${theirs.consent_id}/receipt`);
    expect(other.statusCode).toBe(404);
    expect(other.body).not.toMatch(/eyJ[\w-]+\.eyJ/); // no JWS in it
  });

  test('withdraw is one POST: a revoked record for this person, channel rights_center, the person as the audit actor', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await consent(a, p, 'dp-1');
    const b = await signedIn(a, 'dp-1');
    t.clock.advance(MINUTE);
    const res = await b.post(`/rights/consents/${p.id}/withdraw?lang=en`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/rights?lang=en&done=withdrawn&cp=${p.id}`);
    expect(await records(a)).toEqual([
      { dp_id: 'dp-1', collection_point_id: p.id, consent_action: 'approved', purposes: p.purposeIds.map((id) => ({ id, granted: true })), channel: 'api' },
      { dp_id: 'dp-1', collection_point_id: p.id, consent_action: 'revoked', purposes: p.purposeIds.map((id) => ({ id, granted: false })), channel: 'rights_center' },
    ]);
    const audit = await t.db.system.query<{ actor_type: string }>("select actor_type from audit_log where org_id = $1 and action = 'consent.withdrawn'", [a.id]);
    expect(audit).toEqual([{ actor_type: 'data_principal' }]);
    const page = await b.get(res.headers.location as string);
    expect(main(page.body)).toContain('<p class="ok" role="status">Your consent for Sign-up is withdrawn.</p>');
    expect(main(page.body)).toContain('<span class="state">Withdrawn</span>');
    expect(main(page.body)).not.toContain('Withdraw consent: Sign-up');
    // Again: already withdrawn (409), nothing recorded.
    const again = await b.post(`/rights/consents/${p.id}/withdraw`);
    expect(again.statusCode).toBe(409);
    expect(main(again.body)).toContain('<p class="alert" role="alert">This consent was already withdrawn.</p>');
    expect(await records(a)).toHaveLength(2);
  });

  test('a withdrawal through the page and through POST /api/v1/me/consents/{id}/withdraw make the same record', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await consent(a, p, 'dp-page');
    await consent(a, p, 'dp-api');
    const b = await signedIn(a, 'dp-page');
    expect((await b.post(`/rights/consents/${p.id}/withdraw`)).statusCode).toBe(303);
    const api = await t.app.inject({ method: 'POST', url: `/api/v1/me/consents/${p.id}/withdraw`, headers: { host: a.host, authorization: `Bearer ${await mint(a, 'dp-api')}` } });
    expect(api.statusCode, api.body).toBe(201);
    const rows = await t.db.system.query<Record<string, unknown>>(
      "select dp_id, collection_point_id, consent_action, purposes, notice_version, channel, request_id, event_id from consent_records where org_id = $1 and consent_action = 'revoked' order by dp_id",
      [a.id],
    );
    const withoutDp = rows.map(({ dp_id: _dp, ...rest }) => rest);
    expect(rows.map((r) => r.dp_id)).toEqual(['dp-api', 'dp-page']);
    expect(withoutDp[0]).toEqual(withoutDp[1]);
    expect(withoutDp[0]).toEqual({ collection_point_id: p.id, consent_action: 'revoked', purposes: p.purposeIds.map((id) => ({ id, granted: false })), notice_version: 1, channel: 'rights_center', request_id: null, event_id: null });
    const audit = await t.db.system.query<Record<string, unknown>>("select actor_type, action, details from audit_log where org_id = $1 and action = 'consent.withdrawn' order by at, id", [a.id]);
    expect(audit).toHaveLength(2);
    const strip = (d: Record<string, unknown>) => ({ ...d, previous_consent_id: undefined });
    expect({ ...audit[0], details: strip(audit[0]!.details as Record<string, unknown>) }).toEqual({ ...audit[1], details: strip(audit[1]!.details as Record<string, unknown>) });
    expect(audit[0]!.actor_type).toBe('data_principal');
  });

  test('change: the ticked purposes are agreed, the others not; a required one left out makes it declined', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await consent(a, p, 'dp-1', [true, false]);
    const b = await signedIn(a, 'dp-1');
    const res = await b.post(`/rights/consents/${p.id}?lang=hi`, { purpose: p.purposeIds });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/rights?lang=hi&done=changed&cp=${p.id}`);
    expect(main((await b.get(res.headers.location as string)).body)).toContain('<p class="ok" role="status">Sign-up के लिए आपके विकल्प सहेज लिए गए हैं।</p>');
    await b.post(`/rights/consents/${p.id}`, { purpose: p.purposeIds[1]! });
    expect((await records(a)).slice(1)).toEqual([
      { dp_id: 'dp-1', collection_point_id: p.id, consent_action: 'approved', purposes: p.purposeIds.map((id) => ({ id, granted: true })), channel: 'rights_center' },
      { dp_id: 'dp-1', collection_point_id: p.id, consent_action: 'declined', purposes: [{ id: p.purposeIds[0], granted: false }, { id: p.purposeIds[1], granted: true }], channel: 'rights_center' },
    ]);
  });

  test("another person's consent, or an unknown collection point: 404, nothing recorded; the list shows only one's own", async () => {
    const a = await t.tenant();
    const mine = await point(a, 'Mine');
    const theirs = await point(a, 'Theirs');
    await consent(a, mine, 'dp-1');
    await consent(a, theirs, 'dp-2');
    const b = await signedIn(a, 'dp-1');
    const list = main((await b.get('/rights')).body);
    expect(list).toContain('<h2 id="cp-0">Mine</h2>');
    expect(list).not.toContain('Theirs');
    const before = await records(a);
    for (const res of [
      await b.post(`/rights/consents/${theirs.id}/withdraw`),
      await b.post(`/rights/consents/${theirs.id}`, { purpose: theirs.purposeIds }),
      await b.post('/rights/consents/00000000-0000-7000-8000-000000000000/withdraw'),
      await b.post('/rights/consents/not-a-point'),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(main(res.body)).toContain('<h1>Page not found</h1>');
    }
    expect(await records(a)).toEqual(before);
  });

  test('signed out, a form that acts for the person asks to sign in again (401) and records nothing', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await consent(a, p, 'dp-1');
    const b = browser(a);
    await b.get('/rights');
    const res = await b.post(`/rights/consents/${p.id}/withdraw`);
    expect(res.statusCode).toBe(401);
    expect(main(res.body)).toContain('<h1>Sign in</h1>');
    expect(await records(a)).toHaveLength(1);
  });
});

describe('requests (grievance tickets)', () => {
  const tickets = async (a: TestOrg) =>
    t.db.system.query<Record<string, unknown>>('select ticket_id, client_user_id, subject, description, category, status from grievances where org_id = $1 order by created_at, id', [a.id]);

  test('file a request: 303 to its page; the ticket is the person\'s, open, with its first history entry', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const list = await b.get('/rights/requests');
    expect(list.statusCode).toBe(200);
    expect(main(list.body)).toContain('<p>You have not made a request yet.</p>');
    expect(main(list.body)).toContain('<option value="erasure">Erase my data</option>');
    expect(main(list.body)).toContain('<form method="post" action="/rights/requests?lang=en">');

    const res = await b.post('/rights/requests?lang=en', { category: 'erasure', subject: '  Delete my account  ', description: 'Please erase <everything>.' });
    expect(res.statusCode).toBe(303);
    const [stored] = await tickets(a);
    expect(stored).toEqual({ ticket_id: expect.stringMatching(/^GRV-[A-Z0-9]{8}$/), client_user_id: 'dp-1', subject: 'Delete my account', description: 'Please erase <everything>.', category: 'erasure', status: 'open' });
    const id = stored!.ticket_id as string;
    expect(res.headers.location).toBe(`/rights/requests/${id}?lang=en&done=filed`);

    const page = await b.get(res.headers.location as string);
    expect(page.statusCode).toBe(200);
    const body = main(page.body);
    expect(body).toContain(`<h1>${id}: Delete my account</h1>`);
    expect(body).toContain(`<p class="ok" role="status">Your request ${id} is sent. We will tell you by SMS or email when there is news.</p>`);
    expect(body).toContain('<dt>Status</dt><dd><strong>Open</strong></dd>');
    expect(body).toContain('<dt>About</dt><dd>Erase my data</dd>');
    expect(body).toContain('<p class="notice">Please erase &lt;everything&gt;.</p>');
    expect(body).toMatch(/<ol class="history"><li><time datetime="[^"]+">[^<]+<\/time>: Made: Open<\/li><\/ol>/);
    expect(body).toContain('<p>No messages yet.</p>');
    expect(main((await b.get('/rights/requests')).body)).toContain(`<a href="/rights/requests/${id}?lang=en">${id}: Delete my account</a>`);
  });

  test('a request missing its category, subject or text is asked again (400) with what was typed; nothing filed', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const res = await b.post('/rights/requests', { category: 'nonsense', subject: ' ', description: 'Kept text' });
    expect(res.statusCode).toBe(400);
    expect(main(res.body)).toContain('<div class="alert" role="alert"><ul><li>What is it about?: please choose one.</li><li>Subject: please fill this in.</li></ul></div>');
    expect(main(res.body)).toContain('>Kept text</textarea>');
    const long = await b.post('/rights/requests', { category: 'other', subject: 'x'.repeat(201), description: 'd' });
    expect(main(long.body)).toContain('<li>Subject: at most 200 characters.</li>');
    expect(await tickets(a)).toEqual([]);
  });

  test('the organization replies and moves the status; the person reads both and writes back', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const filed = await b.post('/rights/requests', { category: 'data_access', subject: 'My data', description: 'Send me a copy.' });
    const id = /requests\/(GRV-[A-Z0-9]{8})/.exec(filed.headers.location as string)![1]!;
    t.clock.advance(MINUTE);
    expect((await t.call({ method: 'PUT', url: `/grievance/${id}`, org: a, key: a.key, body: { status: 'in_progress' } })).statusCode).toBe(200);
    t.clock.advance(MINUTE);
    const reply = await t.call({ method: 'POST', url: `/grievance/${id}/messages`, org: a, key: a.key, body: { message: 'We are collecting it.\nExpect it within a week.' } });
    expect(reply.statusCode, reply.body).toBe(201);

    const page = main((await b.get(`/rights/requests/${id}`)).body);
    expect(page).toContain('<dt>Status</dt><dd><strong>In progress</strong></dd>');
    expect(page).toMatch(/<li><time[^>]*>[^<]+<\/time>: Made: Open<\/li><li><time[^>]*>[^<]+<\/time>: Open → In progress<\/li>/);
    expect(page).toMatch(/<li class="message system"><p class="from"><strong>Status update<\/strong> · <time[^>]*>[^<]+<\/time><\/p><p class="notice">Status changed from Open to In progress<\/p><\/li>/);
    expect(page).toMatch(/<li class="message agent"><p class="from"><strong>The organization<\/strong> · <time[^>]*>[^<]+<\/time><\/p><p class="notice">We are collecting it.\nExpect it within a week.<\/p><\/li>/);

    const sent = await b.post(`/rights/requests/${id}/messages?lang=en`, { message: 'Thank you!' });
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe(`/rights/requests/${id}?lang=en&done=sent#conversation`);
    const messages = await t.call({ method: 'GET', url: `/grievance/${id}/messages`, org: a, key: a.key });
    expect(messages.json().map((x: { sender: string; message: string }) => [x.sender, x.message])).toEqual([
      ['system', 'Status changed from open to in progress'],
      ['agent', 'We are collecting it.\nExpect it within a week.'],
      ['user', 'Thank you!'],
    ]);
    const empty = await b.post(`/rights/requests/${id}/messages`, { message: '   ' });
    expect(empty.statusCode).toBe(400);
    expect(main(empty.body)).toContain('<li>Your message: please fill this in.</li>');
    expect(await b.post(`/rights/requests/${id}/messages`, { message: 'no token' }, { csrf: false }).then((r) => r.statusCode)).toBe(403);
  });

  test('the due date on the list and the page: days left, then days late with "Overdue", paused on hold; in Hindi too, with the status change said in Hindi', async () => {
    const a = await t.tenant();
    let b = await signedIn(a, 'dp-1');
    const filed = await b.post('/rights/requests', { category: 'erasure', subject: 'Erase me', description: 'Please.' });
    const id = /requests\/(GRV-[A-Z0-9]{8})/.exec(filed.headers.location as string)![1]!;
    const due = new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString();
    const dueTime = `<time datetime="${due}">`;
    t.clock.advance(27.5 * 86_400_000);
    b = await signedIn(a, 'dp-1'); // a token lives an hour: sign in again after the clock moved
    let list = main((await b.get('/rights/requests')).body);
    expect(list).toContain(`<br>Answer due by: ${dueTime}`);
    expect(list).toMatch(/Answer due by: <time[^>]*>[^<]+<\/time> \(3 days left\)<\/li>/);
    expect(list).not.toContain('Overdue');
    let page = main((await b.get(`/rights/requests/${id}`)).body);
    expect(page).toMatch(new RegExp(`<dt>Answer due by</dt><dd>${dueTime}[^<]+</time> \\(3 days left\\)</dd>`));

    t.clock.advance(4 * 86_400_000); // 1.5 days late
    b = await signedIn(a, 'dp-1');
    list = main((await b.get('/rights/requests')).body);
    expect(list).toMatch(/\(2 days late\) <span class="badge overdue">Overdue<\/span><\/li>/);
    page = main((await b.get(`/rights/requests/${id}`)).body);
    expect(page).toMatch(/<dt>Answer due by<\/dt><dd><time[^>]*>[^<]+<\/time> \(2 days late\) <span class="badge overdue">Overdue<\/span><\/dd>/);

    expect((await t.call({ method: 'POST', url: `/api/v1/grievances/${id}/status`, org: a, key: a.key, body: { status: 'on_hold', note: 'internal' } })).statusCode).toBe(200);
    page = main((await b.get(`/rights/requests/${id}`)).body);
    expect(page).toContain('(2 days late; the clock is paused while the request is on hold) <span class="badge overdue">Overdue</span>');
    expect(page).toContain('<p class="notice">Status changed from Open to On hold</p>');
    expect(page).not.toContain('internal');

    const hindi = main((await b.get(`/rights/requests/${id}?lang=hi`)).body);
    expect(hindi).toContain('<dt>उत्तर की अंतिम तिथि</dt>');
    expect(hindi).toContain('(2 दिन की देरी; अनुरोध रुका होने तक समय की गिनती रुकी है) <span class="badge overdue">समय सीमा पार</span>');
    expect(hindi).toContain('<p class="notice">स्थिति खुला से बदलकर रुका हुआ की गई</p>');
    expect(hindi).not.toContain('Status changed');
    // Every time in Hindi is Hindi throughout: a 24-hour clock and the zone in Devanagari (issue 30).
    const hindiTimes = [...hindi.matchAll(/<time datetime="[^"]+">([^<]+)<\/time>/g)].map((x) => x[1]!);
    expect(hindiTimes.length).toBeGreaterThan(2);
    for (const when of hindiTimes) expect(when).toMatch(/^\d{1,2} [\u0900-\u097F]+ \d{4} को \d{2}:\d{2}:\d{2} बजे \(यूटीसी\)$/);
    expect(main((await b.get('/rights/requests?lang=hi')).body)).toContain('उत्तर की अंतिम तिथि: <time');

    // Answered: no clock on the list; the page says so.
    expect((await t.call({ method: 'POST', url: `/api/v1/grievances/${id}/status`, org: a, key: a.key, body: { status: 'resolved' } })).statusCode).toBe(200);
    expect(main((await b.get('/rights/requests')).body)).not.toContain('Answer due by');
    page = main((await b.get(`/rights/requests/${id}`)).body);
    expect(page).toMatch(/<dt>Answer due by<\/dt><dd><time[^>]*>[^<]+<\/time> \(answered\)<\/dd>/);
    expect(page).toContain('<p class="notice">Status changed from On hold to Resolved</p>');
  });

  test("another person's request, or one that does not exist: 404 to read and to write on", async () => {
    const a = await t.tenant();
    const theirs = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'dp-2', subject: 'Theirs', description: 'd', category: 'other' } });
    const id = theirs.json().ticket_id as string;
    const b = await signedIn(a, 'dp-1');
    expect(main((await b.get('/rights/requests')).body)).not.toContain(id);
    for (const res of [await b.get(`/rights/requests/${id}`), await b.get('/rights/requests/GRV-ZZZZZZZZ'), await b.get('/rights/requests/nope'), await b.post(`/rights/requests/${id}/messages`, { message: 'hi' })]) {
      expect(res.statusCode).toBe(404);
      expect(main(res.body)).toContain('<h1>Page not found</h1>');
    }
    const messages = await t.call({ method: 'GET', url: `/grievance/${id}/messages`, org: a, key: a.key });
    expect(messages.json()).toEqual([]);
  });
});

describe('nominees', () => {
  const stored = async (a: TestOrg) =>
    t.db.system.query<Record<string, unknown>>(
      'select client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status from nominees where org_id = $1 order by created_at, id',
      [a.id],
    );
  const fields = { nominee_name: 'Asha Rao', nominee_email: 'Asha@Example.com', nominee_mobile: '98765 43210', relationship: 'spouse', purpose_of_appointment: '' };

  test('appoint (pending, for this person), change (a new person: back to pending), remove', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const empty = await b.get('/rights/nominees');
    expect(empty.statusCode).toBe(200);
    expect(main(empty.body)).toContain('<p>You have not appointed a nominee.</p>');
    expect(main(empty.body)).toContain('<label for="new-name">Full name</label>');

    const res = await b.post('/rights/nominees?lang=en', fields);
    expect(res.statusCode).toBe(303);
    expect(await stored(a)).toEqual([
      { client_user_id: 'dp-1', nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse', purpose_of_appointment: null, status: 'pending' },
    ]);
    const id = (await t.db.system.query<{ id: string }>('select id from nominees where org_id = $1', [a.id]))[0]!.id;
    expect(res.headers.location).toBe(`/rights/nominees?lang=en&done=appointed&nominee=${id}`);
    const page = main((await b.get(res.headers.location as string)).body);
    expect(page).toContain('<p class="ok" role="status">Asha Rao is appointed. The organization will verify them.</p>');
    expect(page).toContain('<dt>Status</dt><dd><strong>Waiting for verification</strong></dd>');
    expect(page).toContain('<dt>Mobile number</dt><dd>+919876543210</dd>');
    expect(page).toContain(`<form method="post" action="/rights/nominees/${id}?lang=en">`);
    expect(page).toContain('<input type="text" id="nominee-0-name" name="nominee_name" maxlength="255" autocomplete="off" required value="Asha Rao">');

    // The organization verifies; a change of who it is sends it back to pending.
    expect((await t.call({ method: 'PUT', url: `/nominee/${id}`, org: a, key: a.key, body: { status: 'verified' } })).statusCode).toBe(200);
    const changed = await b.post(`/rights/nominees/${id}`, { ...fields, nominee_name: 'Asha R. Rao', purpose_of_appointment: 'Everything' });
    expect(changed.statusCode).toBe(303);
    expect(await stored(a)).toEqual([
      { client_user_id: 'dp-1', nominee_name: 'Asha R. Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse', purpose_of_appointment: 'Everything', status: 'pending' },
    ]);
    expect(main((await b.get(changed.headers.location as string)).body)).toContain('Your changes to Asha R. Rao are saved.');

    const removed = await b.post(`/rights/nominees/${id}/remove?lang=en`);
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe('/rights/nominees?lang=en&done=removed');
    expect(await stored(a)).toEqual([]);
    expect(main((await b.get(removed.headers.location as string)).body)).toContain('<p class="ok" role="status">The nominee is removed.</p>');
  });

  test('a form with problems is asked again (400) listing them; nothing stored', async () => {
    const a = await t.tenant();
    const b = await signedIn(a, 'dp-1');
    const res = await b.post('/rights/nominees', { nominee_name: 'Asha', nominee_email: 'not-an-email', nominee_mobile: '123', relationship: 'cousin' });
    expect(res.statusCode).toBe(400);
    expect(main(res.body)).toContain(
      '<div class="alert" role="alert"><ul><li>Email address: enter an email address like name@example.com.</li><li>Mobile number: enter 10 digits, or + and the country code.</li><li>Relationship to you: please choose one.</li></ul></div>',
    );
    expect(main(res.body)).toContain('id="new-name" name="nominee_name" maxlength="255" autocomplete="off" required value="Asha"');
    expect(await stored(a)).toEqual([]);
  });

  test("another person's nominee: 404 to change or remove, nothing changes", async () => {
    const a = await t.tenant();
    const theirs = await t.call({ method: 'POST', url: '/nominee', org: a, key: a.key, body: { user_id: 'dp-2', nominee_name: 'Ravi', nominee_email: 'ravi@example.com', nominee_mobile: '+919800000009', relationship: 'child' } });
    expect(theirs.statusCode, theirs.body).toBe(201);
    const id = theirs.json().id as string;
    const b = await signedIn(a, 'dp-1');
    expect(main((await b.get('/rights/nominees')).body)).not.toContain('Ravi');
    const before = await stored(a);
    for (const res of [await b.post(`/rights/nominees/${id}`, fields), await b.post(`/rights/nominees/${id}`, { nominee_name: '' }), await b.post(`/rights/nominees/${id}/remove`), await b.post('/rights/nominees/nope/remove')]) {
      expect(res.statusCode).toBe(404);
      expect(main(res.body)).toContain('<h1>Page not found</h1>');
    }
    expect(await stored(a)).toEqual(before);
  });
});
