// The signed-in session. The refresh token never reaches this code: the server keeps it in an HttpOnly
// cookie. The access token lives in memory only (gone with the tab); a reload gets a new one from
// /auth/browser/refresh, proving the request is ours with the assent_csrf cookie's value. Refreshes are
// serialised across this browser's tabs (Web Locks), so a refresh token is never spent twice, which the
// server would take for theft.
import type { Paths } from './types';
import { ApiError, apiErrorFrom, networkError } from './errors';

export type Role = 'owner' | 'admin' | 'member';
type BrowserSession = Paths['/auth/browser/login']['post']['responses'][200]['content']['application/json'];

export interface Session {
  accessToken: string;
  /** ms since the epoch, by this browser's clock. */
  expiresAt: number;
  user: { id: string; email: string };
  role: Role;
  organization: { id: string; slug: string; name: string };
}

export type SessionState =
  | { status: 'unknown' }
  | { status: 'signed-out'; ended: boolean }
  | { status: 'signed-in'; session: Session };

const CSRF_COOKIE = 'assent_csrf';
/** Renew this long before the access token expires, rather than wait for a 401. */
const RENEW_BEFORE_MS = 60_000;

let state: SessionState = { status: 'unknown' };
const listeners = new Set<() => void>();

export function sessionState(): SessionState {
  return state;
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setState(next: SessionState): void {
  state = next;
  for (const l of listeners) l();
}

function current(): Session | null {
  return state.status === 'signed-in' ? state.session : null;
}

/** The value the server set in the readable assent_csrf cookie, or null when there is no session. */
export function csrfCookie(): string | null {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE && value.join('=')) return value.join('=');
  }
  return null;
}

async function post(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(new URL(path, window.location.origin), { method: 'POST', credentials: 'same-origin', cache: 'no-store', ...init });
  } catch {
    throw networkError();
  }
}

function accept(body: BrowserSession): Session {
  const session: Session = {
    accessToken: body.access_token,
    expiresAt: Date.now() + body.expires_in * 1000,
    user: body.user,
    role: body.role,
    organization: body.organization,
  };
  setState({ status: 'signed-in', session });
  return session;
}

export async function signIn(email: string, password: string): Promise<Session> {
  const res = await post('/auth/browser/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (!res.ok) throw await apiErrorFrom(res);
  return accept((await res.json()) as BrowserSession);
}

function inBrowserLock<T>(fn: () => Promise<T>): Promise<T> {
  // Web Locks exist in secure contexts (https, and http://*.localhost); elsewhere one tab at a time is all we can do.
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  return locks ? (locks.request('assent-session-refresh', fn) as Promise<T>) : fn();
}

let refreshing: Promise<Session | null> | null = null;

/** A new access token, or null when the session is over (then the state says signed-out). */
export function refreshSession(): Promise<Session | null> {
  refreshing ??= inBrowserLock(async () => {
    const csrf = csrfCookie();
    if (!csrf) {
      setState({ status: 'signed-out', ended: state.status === 'signed-in' });
      return null;
    }
    const res = await post('/auth/browser/refresh', { headers: { 'x-csrf-token': csrf } });
    if (res.status === 401 || res.status === 403) {
      setState({ status: 'signed-out', ended: state.status === 'signed-in' });
      return null;
    }
    if (!res.ok) throw await apiErrorFrom(res);
    return accept((await res.json()) as BrowserSession);
  }).finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** At start-up: a session survives a reload through the refresh cookie. */
export async function restoreSession(): Promise<void> {
  if (!csrfCookie()) {
    setState({ status: 'signed-out', ended: false });
    return;
  }
  try {
    await refreshSession();
  } catch {
    // The server could not be reached: show the sign-in page rather than spin forever.
    setState({ status: 'signed-out', ended: false });
  }
}

export async function signOut(): Promise<void> {
  const csrf = csrfCookie();
  try {
    await post('/auth/browser/logout', { headers: csrf ? { 'x-csrf-token': csrf } : {} });
  } finally {
    setState({ status: 'signed-out', ended: false });
  }
}

async function send(request: Request, session: Session | null): Promise<Response> {
  const headers = new Headers(request.headers);
  if (session) headers.set('authorization', `Bearer ${session.accessToken}`);
  try {
    return await fetch(new Request(request, { headers }));
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw networkError();
  }
}

/**
 * fetch for the API client: adds the access token, renews it when it is about to expire, and after a
 * 401 renews it once and retries (another tab may have rotated the session).
 */
export async function authorizedFetch(request: Request): Promise<Response> {
  const again = request.clone();
  let session = current();
  if (session && session.expiresAt - Date.now() < RENEW_BEFORE_MS) session = await refreshSession();
  const first = await send(request, session);
  if (first.status !== 401 || !session) return first;
  // Renewed meanwhile by a request of this tab: use that token; else renew now.
  const latest = current();
  const renewed = latest && latest.accessToken !== session.accessToken ? latest : await refreshSession();
  return renewed ? send(again, renewed) : first;
}
