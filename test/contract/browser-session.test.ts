// The dashboard's sign-in (/auth/browser/*): the refresh token only in an HttpOnly, SameSite=Strict
// cookie, the access token in the body, CSRF (signed double submit) on refresh and sign-out, membership
// of the host's organization required, rotation and reuse detection as for /auth/refresh.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

const PASSWORD = 'a long enough password';
const WINDOW_MS = 15 * 60_000;
const REFRESH_MAX_AGE = 30 * 24 * 3600;

let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await buildTestApp();
  org = await t.org();
});
afterAll(async () => t?.close());
// Each test starts with fresh login-throttling windows.
beforeEach(() => t.clock.advance(WINDOW_MS));

interface Cookie {
  name: string;
  value: string;
  path?: string;
  maxAge?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: string;
}
type Response = Awaited<ReturnType<TestApp['call']>> & { cookies: Cookie[] };

async function member(role: 'owner' | 'admin' | 'member' = 'admin', inOrg: TestOrg = org) {
  const u = await t.app.services.users.createUser({ email: `browser-${randomBytes(4).toString('hex')}@example.com`, password: PASSWORD });
  await t.app.services.users.addMember(inOrg.id, u.id, role);
  return u;
}

const signIn = (email: string, password = PASSWORD, host: string | undefined = org.host, headers: Record<string, string> = {}) =>
  t.call({ method: 'POST', url: '/auth/browser/login', org: host, body: { email, password }, headers }) as Promise<Response>;

/** What the browser sends back: the cookies (as the page's path would get them) and the CSRF header. */
interface Jar {
  refresh: string;
  csrf: string;
}
function jarOf(res: Response): Jar {
  const get = (name: string) => res.cookies.find((c) => c.name === name)!.value;
  return { refresh: get('assent_refresh'), csrf: get('assent_csrf') };
}
const post = (path: 'refresh' | 'logout', jar: Partial<Jar>, headers: Record<string, string> = {}, host = org.host) =>
  t.call({
    method: 'POST',
    url: `/auth/browser/${path}`,
    org: host,
    headers: {
      ...(jar.refresh ? { cookie: `assent_refresh=${jar.refresh}` } : {}),
      ...(jar.csrf ? { 'x-csrf-token': jar.csrf } : {}),
      ...headers,
    },
  }) as Promise<Response>;
const use = (accessToken: string) => t.call({ method: 'GET', url: '/api/v1/organization', org, headers: { authorization: `Bearer ${accessToken}` } });

function expectCleared(res: Response) {
  expect(res.cookies).toEqual([
    expect.objectContaining({ name: 'assent_refresh', value: '', maxAge: 0, path: '/auth/browser' }),
    expect.objectContaining({ name: 'assent_csrf', value: '', maxAge: 0, path: '/' }),
  ]);
}

describe('POST /auth/browser/login', () => {
  test('200: the access token in the body, the refresh token only in an HttpOnly SameSite=Strict cookie on /auth/browser', async () => {
    const u = await member('admin');
    const res = await signIn(u.email);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      access_token: expect.stringMatching(/^asa_[0-9A-Za-z]{32}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      user: { id: u.id, email: u.email },
      role: 'admin',
      organization: { id: org.id, slug: org.slug, name: expect.any(String) },
    });
    expect(res.body).not.toContain('asr_');
    expect(res.headers['cache-control']).toBe('no-store');
    const [refresh, csrf] = res.cookies;
    expect(refresh).toEqual({ name: 'assent_refresh', value: expect.stringMatching(/^asr_[0-9A-Za-z]{32}$/), path: '/auth/browser', httpOnly: true, sameSite: 'Strict', maxAge: REFRESH_MAX_AGE });
    // Readable by the page (no HttpOnly), on every path, not Secure over plain http.
    expect(csrf).toEqual({ name: 'assent_csrf', value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), path: '/', sameSite: 'Strict', maxAge: REFRESH_MAX_AGE });
    expect((await use(res.json().access_token)).statusCode).toBe(200);
    // The cookie holds a real refresh token of a stored session (only its hash is stored).
    const stored = await t.db.system.query('select kind from auth_tokens where token_hash = $1', [createHash('sha256').update(refresh!.value).digest('hex')]);
    expect(stored).toEqual([{ kind: 'refresh' }]);
  });

  test('cookies are Secure when PUBLIC_URL is https', async () => {
    const https = await buildTestApp({ env: { PUBLIC_URL: 'https://localhost' } });
    try {
      const o = await https.org();
      const u = await https.app.services.users.createUser({ email: 'secure@example.com', password: PASSWORD });
      await https.app.services.users.addMember(o.id, u.id, 'owner');
      const res = (await https.call({ method: 'POST', url: '/auth/browser/login', org: o, body: { email: u.email, password: PASSWORD } })) as Response;
      expect(res.statusCode).toBe(200);
      expect(res.cookies.map((c) => [c.name, c.secure])).toEqual([
        ['assent_refresh', true],
        ['assent_csrf', true],
      ]);
      expect(String(res.headers['set-cookie'])).toContain('; Secure');
    } finally {
      await https.close();
    }
  });

  test('wrong password: 401 Invalid email or password, no cookie', async () => {
    const u = await member();
    const res = await signIn(u.email, 'not the password at all');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid email or password', code: 'invalid_credentials' });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('a user of another organization: 403 User not a member of this tenant, and no session is started', async () => {
    const other = await t.org();
    const u = await member('owner', other);
    const res = await signIn(u.email);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(await t.db.system.query('select id from auth_sessions where user_id = $1', [u.id])).toEqual([]);
  });

  test('an unknown organization host or the bare domain: 403 like a non-member (reveals nothing)', async () => {
    const u = await member();
    for (const host of ['nosuchorg.localhost', 'localhost']) {
      const res = await signIn(u.email, PASSWORD, host);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
    }
  });

  test("a request from another site's page (Origin of another host): 403, no session", async () => {
    const u = await member();
    const res = await signIn(u.email, PASSWORD, org.host, { origin: 'http://evil.example' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatch(/^Cross-origin request refused/);
    expect(await t.db.system.query('select id from auth_sessions where user_id = $1', [u.id])).toEqual([]);
    const same = await signIn(u.email, PASSWORD, org.host, { origin: `http://${org.host}` });
    expect(same.statusCode).toBe(200);
  });

  test('validation: unknown fields and missing password are 400 with details', async () => {
    const res = await t.call({ method: 'POST', url: '/auth/browser/login', org, body: { email: 'a@example.com', remember: true } });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([
      { field: 'password', message: 'is required' },
      { field: 'remember', message: 'is not an accepted field' },
    ]);
  });

  test('failures count with /auth/login: 10 for one email, then 429 with Retry-After', async () => {
    const u = await member();
    for (let i = 0; i < 10; i++) expect((await signIn(u.email, `wrong password ${i}`)).statusCode).toBe(401);
    const res = await signIn(u.email);
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual({ error: 'Too many login attempts', code: 'too_many_login_attempts' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('POST /auth/browser/refresh', () => {
  test('200: a new access token, a rotated refresh cookie and CSRF cookie; the old access token stops at once', async () => {
    const u = await member('owner');
    const first = await signIn(u.email);
    const jar = jarOf(first);
    const res = await post('refresh', jar);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(expect.objectContaining({ token_type: 'Bearer', role: 'owner', user: { id: u.id, email: u.email } }));
    const next = jarOf(res);
    expect(next.refresh).not.toBe(jar.refresh);
    expect(next.csrf).not.toBe(jar.csrf);
    expect((await use(res.json().access_token)).statusCode).toBe(200);
    expect((await use(first.json().access_token)).statusCode).toBe(401);
  });

  test('the spent refresh cookie sent again: 401, cookies cleared, and the whole session ends', async () => {
    const u = await member();
    const jar = jarOf(await signIn(u.email));
    const rotated = await post('refresh', jar);
    const again = await post('refresh', jar);
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
    expectCleared(again);
    expect((await use(rotated.json().access_token)).statusCode).toBe(401);
    expect((await post('refresh', jarOf(rotated))).statusCode).toBe(401);
  });

  test('no X-CSRF-Token, or a wrong one: 403 and nothing rotates', async () => {
    const u = await member();
    const first = await signIn(u.email);
    const jar = jarOf(first);
    for (const csrf of [undefined, 'x'.repeat(43), jarOf(await signIn(u.email)).csrf]) {
      const res = await post('refresh', { refresh: jar.refresh, csrf });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Missing or invalid CSRF token: send the assent_csrf cookie value in the X-CSRF-Token header', code: 'csrf_failed' });
    }
    expect((await use(first.json().access_token)).statusCode).toBe(200);
    expect((await post('refresh', jar)).statusCode).toBe(200);
  });

  test('no cookie (never signed in, or signed out): 401 Not signed in', async () => {
    const res = await post('refresh', {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Not signed in', code: 'not_signed_in' });
    expectCleared(res);
  });

  test('from another site (Origin): 403 before anything else', async () => {
    const u = await member();
    const jar = jarOf(await signIn(u.email));
    const res = await post('refresh', jar, { origin: 'https://evil.example' });
    expect(res.statusCode).toBe(403);
    expect((await post('refresh', jar)).statusCode).toBe(200);
  });

  test("on another organization's host: 403, and the session ends", async () => {
    const u = await member();
    const signedIn = await signIn(u.email);
    const other = await t.org();
    const res = await post('refresh', jarOf(signedIn), {}, other.host);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
    expectCleared(res);
    expect(await t.db.system.query('select revoked_at from auth_sessions where user_id = $1 and revoked_at is null', [u.id])).toEqual([]);
  });

  test('a member removed since signing in: 403 at the next refresh', async () => {
    const owner = await member('owner');
    const u = await member('member');
    const jar = jarOf(await signIn(u.email));
    const ownerToken = (await signIn(owner.email)).json().access_token;
    const removed = await t.call({ method: 'DELETE', url: `/api/v1/members/${u.id}`, org, headers: { authorization: `Bearer ${ownerToken}` } });
    expect(removed.statusCode).toBe(204);
    const res = await post('refresh', jar);
    expect(res.statusCode).toBe(403);
  });

  test('the refresh cookie expires with its token: 401 after 30 days', async () => {
    const u = await member();
    const jar = jarOf(await signIn(u.email));
    t.clock.advance(REFRESH_MAX_AGE * 1000 + 1000);
    const res = await post('refresh', jar);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
  });
});

describe('POST /auth/browser/logout', () => {
  test('204: the session ends (access token and refresh cookie refused), cookies cleared', async () => {
    const u = await member();
    const signedIn = await signIn(u.email);
    const jar = jarOf(signedIn);
    const res = await post('logout', jar);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectCleared(res);
    expect((await use(signedIn.json().access_token)).statusCode).toBe(401);
    expect((await post('refresh', jar)).statusCode).toBe(401);
  });

  test('without the CSRF token: 403 and the session lives on', async () => {
    const u = await member();
    const signedIn = await signIn(u.email);
    const res = await post('logout', { refresh: jarOf(signedIn).refresh });
    expect(res.statusCode).toBe(403);
    expect((await use(signedIn.json().access_token)).statusCode).toBe(200);
  });

  test('without a session: 204, cookies cleared', async () => {
    const res = await post('logout', {});
    expect(res.statusCode).toBe(204);
    expectCleared(res);
  });
});
