// The session: sign-in keeps the access token in memory; authorizedFetch adds it, renews it once after a
// 401 (and only once for many requests at a time), renews before expiry, and reports an ended session.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { authorizedFetch, refreshSession, restoreSession, sessionState, signIn, signOut } from './session';

interface Call {
  url: string;
  method: string;
  headers: Headers;
}

const session = (token: string, expiresIn = 3600) => ({
  access_token: token,
  token_type: 'Bearer',
  expires_in: expiresIn,
  user: { id: 'u1', email: 'a@example.com' },
  role: 'admin',
  organization: { id: 'o1', slug: 'acme', name: 'Acme' },
});
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

let calls: Call[];
let answer: (c: Call) => Response | Promise<Response>;

beforeEach(() => {
  calls = [];
  document.cookie = 'assent_csrf=csrf-1; path=/';
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const c = { url: new URL(req.url).pathname, method: req.method, headers: req.headers };
    calls.push(c);
    return answer(c);
  });
});
afterEach(async () => {
  answer = () => new Response(null, { status: 204 });
  await signOut();
  vi.unstubAllGlobals();
});

const apiCall = () => authorizedFetch(new Request(`${window.location.origin}/api/v1/grievances`));

describe('session', () => {
  test('sign-in: the access token goes on API calls as a Bearer header; the refresh token is never seen', async () => {
    answer = (c) => (c.url === '/auth/browser/login' ? json(200, session('asa_one')) : json(200, {}));
    await signIn('a@example.com', 'pw');
    expect(sessionState()).toMatchObject({ status: 'signed-in', session: { accessToken: 'asa_one', role: 'admin' } });
    await apiCall();
    expect(calls[1]!.headers.get('authorization')).toBe('Bearer asa_one');
  });

  test('a 401 renews once, with the CSRF cookie, and retries; many at once share one renewal', async () => {
    answer = (c) => (c.url === '/auth/browser/login' ? json(200, session('asa_old')) : json(200, {}));
    await signIn('a@example.com', 'pw');
    answer = (c) => {
      if (c.url === '/auth/browser/refresh') return json(200, session('asa_new'));
      return c.headers.get('authorization') === 'Bearer asa_new' ? json(200, { ok: true }) : json(401, { error: 'Invalid or expired token' });
    };
    const results = await Promise.all([apiCall(), apiCall(), apiCall()]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const refreshes = calls.filter((c) => c.url === '/auth/browser/refresh');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.headers.get('x-csrf-token')).toBe('csrf-1');
  });

  test('renewal refused: the session has ended, and the 401 is what the caller sees', async () => {
    answer = (c) => (c.url === '/auth/browser/login' ? json(200, session('asa_old')) : json(200, {}));
    await signIn('a@example.com', 'pw');
    answer = (c) => (c.url === '/auth/browser/refresh' ? json(401, { error: 'Invalid or expired token' }) : json(401, { error: 'Invalid or expired token' }));
    const res = await apiCall();
    expect(res.status).toBe(401);
    expect(sessionState()).toEqual({ status: 'signed-out', ended: true });
  });

  test('a token about to expire is renewed before the call', async () => {
    answer = (c) => (c.url === '/auth/browser/login' ? json(200, session('asa_short', 30)) : c.url === '/auth/browser/refresh' ? json(200, session('asa_fresh')) : json(200, {}));
    await signIn('a@example.com', 'pw');
    await apiCall();
    expect(calls.map((c) => c.url)).toEqual(['/auth/browser/login', '/auth/browser/refresh', '/api/v1/grievances']);
    expect(calls[2]!.headers.get('authorization')).toBe('Bearer asa_fresh');
  });

  test('after a reload: restored from the refresh cookie; without the CSRF cookie, signed out without a call', async () => {
    answer = (c) => (c.url === '/auth/browser/refresh' ? json(200, session('asa_restored')) : json(200, {}));
    await restoreSession();
    expect(sessionState()).toMatchObject({ status: 'signed-in', session: { accessToken: 'asa_restored' } });
    await signOut();
    document.cookie = 'assent_csrf=; path=/; max-age=0';
    calls = [];
    await restoreSession();
    expect(sessionState()).toEqual({ status: 'signed-out', ended: false });
    expect(calls).toEqual([]);
    expect(await refreshSession()).toBeNull();
  });

  test('sign-out sends the CSRF token and forgets the access token', async () => {
    answer = (c) => (c.url === '/auth/browser/login' ? json(200, session('asa_x')) : new Response(null, { status: 204 }));
    await signIn('a@example.com', 'pw');
    await signOut();
    const logout = calls.find((c) => c.url === '/auth/browser/logout')!;
    expect(logout.headers.get('x-csrf-token')).toBe('csrf-1');
    expect(sessionState()).toEqual({ status: 'signed-out', ended: false });
    await apiCall();
    expect(calls.at(-1)!.headers.get('authorization')).toBeNull();
  });
});
