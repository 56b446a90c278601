// Login sessions: opaque access tokens (1 hour) and rotating refresh tokens (30 days), stored as hashes.
// Reusing a rotated refresh token ends the whole session; logout ends it at once. Failed logins are
// throttled per email and client address together (an attacker who knows an email cannot lock its owner
// out elsewhere) and per client address.
import { createHash } from 'node:crypto';
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { verifyPassword } from '../../platform/crypto/passwords.js';
import {
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
  looksLikeToken,
  newPrefixedToken,
  sha256Hex,
} from '../../platform/crypto/opaque-tokens.js';
import type { WindowCounter } from '../../platform/rate-limit.js';
import type { ScriptRunner } from '../../platform/db/types.js';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
export const LOGIN_WINDOW_MS = 15 * 60_000;
/** Failures for one email from one address (the owner elsewhere is never held back by them). */
export const MAX_FAILURES_PER_EMAIL = 10;
export const MAX_FAILURES_PER_ADDRESS = 50;
/**
 * The longer back-off, for the address only: an address that keeps failing (more than 200 failures in
 * 24 hours, i.e. past its 15-minute cap again and again) waits until its day is over. The owner of an
 * email tried from that address signs in from any other address as before.
 */
export const ADDRESS_BACKOFF_MS = 24 * 3600_000;
export const MAX_FAILURES_PER_ADDRESS_PER_DAY = 200;

export interface TokenPair {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

export interface SessionDeps {
  db: Database;
  clock: Clock;
  /** Keyed by loginPairKey(email, address). */
  failuresByEmail: WindowCounter;
  failuresByAddress: WindowCounter;
  /** Per address over ADDRESS_BACKOFF_MS: the longer back-off. */
  failuresByAddressDaily: WindowCounter;
  /** LOGIN_ADDRESS_DAILY_LIMIT (default MAX_FAILURES_PER_ADDRESS_PER_DAY). */
  maxFailuresPerAddressPerDay?: number;
  /** Told when a session ends, so this process refuses its tokens at once. */
  onSessionEnded?: (sessionId: string) => void;
}

export interface SignedInUser {
  id: string;
  email: string;
}

const invalidToken = () => new AppError('invalid_token', 'Invalid or expired token');

async function issueTokens(tx: ScriptRunner, sessionId: string, now: Date): Promise<TokenPair> {
  const access = newPrefixedToken(ACCESS_TOKEN_PREFIX);
  const refresh = newPrefixedToken(REFRESH_TOKEN_PREFIX);
  await tx.query(
    `insert into auth_tokens (token_hash, session_id, kind, created_at, expires_at)
     values ($1, $3, 'access', $4, $5), ($2, $3, 'refresh', $4, $6)`,
    [access.hash, refresh.hash, sessionId, now, new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000), new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000)],
  );
  return { access_token: access.token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh.token };
}

/**
 * The throttle's key for an email tried from an address: the email only as a hash (Redis keys are
 * readable by whoever operates Redis), the address as is.
 */
export function loginPairKey(email: string, address: string): string {
  return `${createHash('sha256').update(email).digest('hex').slice(0, 32)}|${address}`;
}

export function createSessionService({ db, clock, failuresByEmail, failuresByAddress, failuresByAddressDaily, maxFailuresPerAddressPerDay = MAX_FAILURES_PER_ADDRESS_PER_DAY, onSessionEnded }: SessionDeps) {
  /** Checks an email and password, throttled per email and per address: the user, or a 401 / 429. */
  async function authenticate(input: { email: string; password: string; address: string }): Promise<SignedInUser> {
    const email = input.email.trim().toLowerCase();
    // Counted before the password is checked, atomically: concurrent attempts each take their own place,
    // and the ones past the cap are refused without a password check.
    const pair = loginPairKey(email, input.address);
    const [byPair, byAddress, byAddressDaily] = await Promise.all([
      failuresByEmail.increment(pair),
      failuresByAddress.increment(input.address),
      failuresByAddressDaily.increment(input.address),
    ]);
    const blocked = [
      byPair.count > MAX_FAILURES_PER_EMAIL ? byPair : null,
      byAddress.count > MAX_FAILURES_PER_ADDRESS ? byAddress : null,
      byAddressDaily.count > maxFailuresPerAddressPerDay ? byAddressDaily : null,
    ];
    if (blocked.some(Boolean)) {
      const wait = Math.max(1000, ...blocked.map((b) => b?.resetInMs ?? 0));
      throw new AppError('too_many_login_attempts', 'Too many login attempts', undefined, { 'Retry-After': String(Math.ceil(wait / 1000)) });
    }
    const rows = await db.system.query<{ id: string; password_hash: string }>('select id, password_hash from users where email = $1', [email]);
    const user = rows[0];
    // Unknown email or wrong password: the same answer, after the same work (the counts stay raised).
    if (!(await verifyPassword(input.password, user?.password_hash ?? null)) || !user) {
      throw new AppError('invalid_credentials', 'Invalid email or password');
    }
    await Promise.all([failuresByEmail.reset(pair), failuresByAddress.decrement(input.address), failuresByAddressDaily.decrement(input.address)]);
    return { id: user.id, email };
  }

  /** A new session (an access and a refresh token) for a user who has just proven who they are. */
  function startSession(userId: string): Promise<TokenPair> {
    const now = clock.now();
    return db.system.transaction(async (tx) => {
      const sessionId = uuidv7();
      await tx.query('insert into auth_sessions (id, user_id, created_at) values ($1, $2, $3)', [sessionId, userId, now]);
      return issueTokens(tx, sessionId, now);
    });
  }

  /** Spends a refresh token for a new pair; the old access token stops at once. */
  async function rotate(refreshToken: string): Promise<{ tokens: TokenPair; user: SignedInUser }> {
    if (!looksLikeToken(refreshToken, REFRESH_TOKEN_PREFIX)) throw invalidToken();
    const now = clock.now();
    const outcome = await db.system.transaction(async (tx) => {
      const rows = await tx.query<{ session_id: string; user_id: string; email: string; expires_at: Date; replaced_at: Date | null; revoked_at: Date | null }>(
        `select t.session_id, s.user_id, u.email, t.expires_at, t.replaced_at, s.revoked_at
           from auth_tokens t join auth_sessions s on s.id = t.session_id join users u on u.id = s.user_id
          where t.token_hash = $1 and t.kind = 'refresh'
          for update of s`,
        [sha256Hex(refreshToken)],
      );
      const row = rows[0];
      if (!row || row.revoked_at) return { error: true as const };
      if (row.replaced_at) {
        // A rotated refresh token used again: someone holds a copy. End the session for everyone.
        await tx.query("update auth_sessions set revoked_at = $2, revoked_reason = 'refresh_token_reused' where id = $1", [row.session_id, now]);
        return { error: true as const, ended: row.session_id };
      }
      if (row.expires_at.getTime() <= now.getTime()) return { error: true as const };
      // The old access token stops working at once, and this refresh token is spent.
      await tx.query('update auth_tokens set replaced_at = $2 where session_id = $1 and replaced_at is null', [row.session_id, now]);
      return { tokens: await issueTokens(tx, row.session_id, now), user: { id: row.user_id, email: row.email }, ended: row.session_id };
    });
    if (outcome.ended) onSessionEnded?.(outcome.ended);
    if ('error' in outcome) throw invalidToken();
    return { tokens: outcome.tokens, user: outcome.user };
  }

  return {
    authenticate,
    startSession,

    async login(input: { email: string; password: string; address: string }): Promise<TokenPair> {
      return startSession((await authenticate(input)).id);
    },

    rotate,

    async refresh(refreshToken: string): Promise<TokenPair> {
      return (await rotate(refreshToken)).tokens;
    },

    /** Ends the session a refresh token belongs to (the browser's sign-out, which holds only that token). */
    async endSessionOf(refreshToken: string): Promise<void> {
      if (!looksLikeToken(refreshToken, REFRESH_TOKEN_PREFIX)) return;
      const rows = await db.system.query<{ id: string }>(
        `update auth_sessions set revoked_at = $2, revoked_reason = 'logout'
          where revoked_at is null and id = (select session_id from auth_tokens where token_hash = $1 and kind = 'refresh')
          returning id`,
        [sha256Hex(refreshToken), clock.now()],
      );
      if (rows[0]) onSessionEnded?.(rows[0].id);
    },

    async logout(accessToken: string | null): Promise<void> {
      if (!accessToken || !looksLikeToken(accessToken, ACCESS_TOKEN_PREFIX)) throw invalidToken();
      const now = clock.now();
      const rows = await db.system.query<{ id: string }>(
        `update auth_sessions set revoked_at = $2, revoked_reason = 'logout'
          where revoked_at is null and id = (
            select session_id from auth_tokens where token_hash = $1 and kind = 'access' and replaced_at is null and expires_at > $2)
          returning id`,
        [sha256Hex(accessToken), now],
      );
      if (!rows[0]) throw invalidToken();
      onSessionEnded?.(rows[0].id);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
