// Authentication (contract §2): login, refresh rotation and reuse detection, logout, expiry, password
// change, and login throttling per email and per address, with the injected clock.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createRedisCounter } from '../../src/platform/rate-limit.js';
import { loginPairKey } from '../../src/features/accounts/sessions.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

const PASSWORD = 'a long enough password';
const WINDOW_MS = 15 * 60_000;
const INVALID_LOGIN = { error: 'Invalid email or password', code: 'invalid_credentials' };
const INVALID_TOKEN = { error: 'Invalid or expired token', code: 'invalid_token' };
const THROTTLED = { error: 'Too many login attempts', code: 'too_many_login_attempts' };
const TOKEN_PAIR = {
  access_token: expect.stringMatching(/^asa_[0-9A-Za-z]{32}$/),
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: expect.stringMatching(/^asr_[0-9A-Za-z]{32}$/),
};

let t: TestApp;
let org: TestOrg;
beforeAll(async () => {
  t = await buildTestApp();
  org = await t.org();
});
afterAll(async () => t?.close());
// Every test starts with fresh throttling windows: failures of earlier tests (all from 127.0.0.1) are forgotten.
beforeEach(() => t.clock.advance(WINDOW_MS));

const newEmail = () => `auth-${randomBytes(4).toString('hex')}@example.com`;

/** A new user, a member of the test organization, and their email. */
async function user(password = PASSWORD): Promise<{ id: string; email: string }> {
  const created = await t.app.services.users.createUser({ email: newEmail(), password });
  await t.app.services.users.addMember(org.id, created.id, 'member');
  return created;
}

const login = (email: string, password: string, host?: string) => t.call({ method: 'POST', url: '/auth/login', org: host, body: { email, password } });
const refresh = (token: string) => t.call({ method: 'POST', url: '/auth/refresh', body: { refresh_token: token } });
const logout = (headers: Record<string, string> = {}) => t.call({ method: 'POST', url: '/auth/logout', headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A Bearer call to the organization (any member may read it). */
const use = (token: string) => t.call({ method: 'GET', url: '/api/v1/organization', org, headers: bearer(token) });

async function tokens(email: string, password = PASSWORD): Promise<{ access_token: string; refresh_token: string }> {
  const res = await login(email, password);
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function expectWorks(token: string): Promise<void> {
  const res = await use(token);
  expect(res.statusCode).toBe(200);
}

async function expectRefused(token: string): Promise<void> {
  const res = await use(token);
  expect(res.statusCode).toBe(401);
  expect(res.json()).toEqual(INVALID_TOKEN);
}

describe('POST /auth/login', () => {
  test('§2 200 {access_token, token_type: Bearer, expires_in: 3600, refresh_token}; opaque asa_/asr_ + 32 base62', async () => {
    const u = await user();
    const res = await login(u.email, PASSWORD);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(TOKEN_PAIR);
    await expectWorks(res.json().access_token);
  });

  test('§2 tokens are stored only as SHA-256 hashes', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    for (const [token, kind] of [
      [pair.access_token, 'access'],
      [pair.refresh_token, 'refresh'],
    ] as const) {
      const rows = await t.db.system.query<Record<string, unknown>>('select * from auth_tokens where token_hash = $1', [
        createHash('sha256').update(token).digest('hex'),
      ]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.kind).toBe(kind);
      expect(JSON.stringify(rows[0])).not.toContain(token.slice(4));
    }
  });

  test('§1 login answers on any host: the bare domain, an organization host, an unknown host', async () => {
    const u = await user();
    for (const host of [undefined, org.host, 'no-such-org.localhost']) {
      const res = await login(u.email, PASSWORD, host);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(TOKEN_PAIR);
    }
  });

  test('§2 an unknown email and a wrong password get the same 401 Invalid email or password', async () => {
    const u = await user();
    const wrongPassword = await login(u.email, 'not the password at all');
    const unknownEmail = await login(newEmail(), PASSWORD);
    for (const res of [wrongPassword, unknownEmail]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_LOGIN);
      expect(res.headers['retry-after']).toBeUndefined();
    }
  });

  test('§2 the email is case-insensitive and trimmed; the password is taken exactly as typed', async () => {
    const u = await user('  padded password  ');
    expect((await login(`  ${u.email.toUpperCase()} `, '  padded password  ')).statusCode).toBe(200);
    for (const typed of ['padded password', '  padded password', '  PADDED PASSWORD  ']) {
      const res = await login(u.email, typed);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_LOGIN);
    }
  });

  test('§3 a body without email or password, or with unknown fields, is a 400 naming them', async () => {
    const res = await t.call({ method: 'POST', url: '/auth/login', body: { email: 'a@example.com', extra: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual(
      expect.arrayContaining([
        { field: 'password', message: expect.any(String) },
        { field: 'extra', message: 'is not an accepted field' },
      ]),
    );
  });
});

describe('login throttling (10 failures per email, 50 per address, in 15 minutes)', () => {
  test('§2 the 11th attempt after 10 failures for one email: 429 with Retry-After, even with the right password', async () => {
    const u = await user();
    for (let i = 0; i < 10; i++) expect((await login(u.email, `wrong password ${i}`)).statusCode).toBe(401);
    for (const password of ['still wrong password', PASSWORD]) {
      const res = await login(u.email.toUpperCase(), password);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual(THROTTLED);
      expect(res.headers['retry-after']).toBe('900');
    }
    t.clock.advance(5 * 60_000);
    const later = await login(u.email, PASSWORD);
    expect(later.statusCode).toBe(429);
    expect(later.headers['retry-after']).toBe('600');
    // Another user from the same address is not held back by this email's failures.
    const other = await user();
    expect((await login(other.email, PASSWORD)).statusCode).toBe(200);
  });

  test('§2 allowed again 15 minutes after the first failure', async () => {
    const u = await user();
    for (let i = 0; i < 10; i++) await login(u.email, 'wrong password!');
    t.clock.advance(WINDOW_MS - 1000);
    expect((await login(u.email, PASSWORD)).statusCode).toBe(429);
    t.clock.advance(1000);
    const res = await login(u.email, PASSWORD);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(TOKEN_PAIR);
  });

  test('§2 an unknown email is throttled exactly like a known one', async () => {
    const email = newEmail();
    for (let i = 0; i < 10; i++) expect((await login(email, 'wrong password!')).json()).toEqual(INVALID_LOGIN);
    const res = await login(email, 'wrong password!');
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual(THROTTLED);
  });

  test('§2 a successful login resets the count for that email', async () => {
    const u = await user();
    for (let i = 0; i < 9; i++) await login(u.email, 'wrong password!');
    expect((await login(u.email, PASSWORD)).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) expect((await login(u.email, 'wrong password!')).statusCode).toBe(401);
    expect((await login(u.email, PASSWORD)).statusCode).toBe(200);
  });

  test('§2 50 failures from one address (different emails): 429 for every email from it, other addresses unaffected', async () => {
    const u = await user();
    for (let i = 0; i < 50; i++) expect((await login(newEmail(), 'wrong password!')).statusCode).toBe(401);
    for (const email of [newEmail(), u.email]) {
      const res = await login(email, PASSWORD);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual(THROTTLED);
      expect(Number(res.headers['retry-after'])).toBe(900);
    }
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      remoteAddress: '192.0.2.7',
      headers: { host: 'localhost' },
      payload: { email: u.email, password: PASSWORD },
    });
    expect(elsewhere.statusCode).toBe(200);
    t.clock.advance(WINDOW_MS);
    expect((await login(u.email, PASSWORD)).statusCode).toBe(200);
  });
});

describe('POST /auth/refresh', () => {
  test('§2 rotates both tokens: the old access token fails at once, the new one works', async () => {
    const u = await user();
    const first = await tokens(u.email);
    await expectWorks(first.access_token); // warm: cached in this process
    const res = await refresh(first.refresh_token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(TOKEN_PAIR);
    const second = res.json();
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    await expectRefused(first.access_token);
    await expectWorks(second.access_token);
    // The new refresh token rotates again.
    const third = await refresh(second.refresh_token);
    expect(third.statusCode).toBe(200);
    await expectWorks(third.json().access_token);
  });

  test('§2 reusing a rotated refresh token: 401, and the whole session ends (the newest tokens too)', async () => {
    const u = await user();
    const first = await tokens(u.email);
    const second = (await refresh(first.refresh_token)).json();
    await expectWorks(second.access_token);
    const reuse = await refresh(first.refresh_token);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json()).toEqual(INVALID_TOKEN);
    await expectRefused(second.access_token);
    const newest = await refresh(second.refresh_token);
    expect(newest.statusCode).toBe(401);
    expect(newest.json()).toEqual(INVALID_TOKEN);
    const [session] = await t.db.system.query<{ revoked_reason: string }>(
      'select revoked_reason from auth_sessions where user_id = $1',
      [u.id],
    );
    expect(session!.revoked_reason).toBe('refresh_token_reused');
    // Other sessions of the same user are not touched.
    const other = await tokens(u.email);
    await expectWorks(other.access_token);
  });

  test('§2 an access token, a malformed or an unknown value: 401 Invalid or expired token', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    for (const value of [pair.access_token, 'nope', 'asr_' + 'A'.repeat(32)]) {
      const res = await refresh(value);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_TOKEN);
    }
  });

  test('§2 a refresh token lives 30 days', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    t.clock.advance(30 * 24 * 3600_000 - 1000);
    expect((await refresh(pair.refresh_token)).statusCode).toBe(200);
    const expired = await tokens(u.email);
    t.clock.advance(30 * 24 * 3600_000);
    const res = await refresh(expired.refresh_token);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID_TOKEN);
  });
});

describe('access token lifetime and revocation', () => {
  test('§2 an access token lives 1 hour: 401 Invalid or expired token after that, even when cached', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    t.clock.advance(3600_000 - 1000);
    await expectWorks(pair.access_token);
    t.clock.advance(1000);
    await expectRefused(pair.access_token);
    // The refresh token still gives a working pair.
    const res = await refresh(pair.refresh_token);
    expect(res.statusCode).toBe(200);
    await expectWorks(res.json().access_token);
  });

  test('§2 logout: 204, then the access and refresh tokens fail at once', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    await expectWorks(pair.access_token);
    const res = await logout(bearer(pair.access_token));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    await expectRefused(pair.access_token);
    expect((await refresh(pair.refresh_token)).json()).toEqual(INVALID_TOKEN);
    const again = await logout(bearer(pair.access_token));
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual(INVALID_TOKEN);
  });

  test('§3 logout without a token, with a bad one, a refresh token or a non-Bearer header: 401 Invalid or expired token', async () => {
    const u = await user();
    const pair = await tokens(u.email);
    for (const headers of [{}, bearer('nope'), bearer('asa_' + 'B'.repeat(32)), bearer(pair.refresh_token), { authorization: 'Basic dXNlcjpwYXNz' }]) {
      const res = await logout(headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_TOKEN);
    }
    await expectWorks(pair.access_token);
  });

  test('§2 logout ends only its own session', async () => {
    const u = await user();
    const a = await tokens(u.email);
    const b = await tokens(u.email);
    expect((await logout(bearer(a.access_token))).statusCode).toBe(204);
    await expectRefused(a.access_token);
    await expectWorks(b.access_token);
  });

  test('§2 a password change ends every session of the user at once', async () => {
    const u = await user();
    const a = await tokens(u.email);
    const b = await tokens(u.email);
    await expectWorks(a.access_token);
    await expectWorks(b.access_token);
    await t.app.services.users.setPassword(u.email, 'a brand new password');
    await expectRefused(a.access_token);
    await expectRefused(b.access_token);
    expect((await refresh(b.refresh_token)).json()).toEqual(INVALID_TOKEN);
    expect((await login(u.email, PASSWORD)).json()).toEqual(INVALID_LOGIN);
    await expectWorks((await tokens(u.email, 'a brand new password')).access_token);
  });

  test('§5.6 a valid token of a user who is not a member of the addressed organization: 403', async () => {
    const outsider = await t.app.services.users.createUser({ email: newEmail(), password: PASSWORD });
    const pair = await tokens(outsider.email);
    const res = await use(pair.access_token);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('login throttling with REDIS_URL (needs TEST_REDIS_URL)', () => {
  let withRedis: TestApp;
  beforeAll(async () => {
    withRedis = await buildTestApp({ env: { REDIS_URL: process.env.TEST_REDIS_URL } });
  });
  afterAll(async () => withRedis?.close());

  test('§2 failures are counted in Redis (shared by every process): the 11th attempt is 429 with Retry-After', async () => {
    const email = newEmail();
    // A random client address, so runs within 15 minutes of each other never add up on one address.
    const remoteAddress = `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;
    const attempt = () =>
      withRedis.app.inject({ method: 'POST', url: '/auth/login', remoteAddress, headers: { host: 'localhost' }, payload: { email, password: 'wrong password!' } });
    for (let i = 0; i < 10; i++) expect((await attempt()).json()).toEqual(INVALID_LOGIN);
    const res = await attempt();
    expect(res.statusCode).toBe(429);
    expect(res.json()).toEqual(THROTTLED);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(850);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // The same count, read through another connection as another process would.
    const shared = createRedisCounter({ url: process.env.TEST_REDIS_URL!, windowMs: WINDOW_MS, prefix: 'assent:login-pair:' });
    try {
      // 11: the refused attempt counts too. The key holds a hash of the email, never the email.
      const key = loginPairKey(email, remoteAddress);
      expect(key).not.toContain(email);
      expect((await shared.peek(key)).count).toBe(11);
      await shared.reset(key);
    } finally {
      await shared.close();
    }
    expect((await attempt()).statusCode).toBe(401);
  });
});
