// Checks Bearer access tokens and organization memberships. Warm answers come from memory (no round
// trip); logout, refresh, password changes and membership changes drop the entries at once, in this
// process by a call and in the others by a notification (auth-changes.ts); the TTL is the fallback. Expiry is checked against the clock on every request.
import type { Database } from '../db/types.js';
import type { Clock } from '../clock.js';
import { ACCESS_TOKEN_PREFIX, looksLikeToken, sha256Hex } from '../crypto/opaque-tokens.js';

export type Role = 'owner' | 'admin' | 'member';

export interface VerifiedToken {
  userId: string;
  sessionId: string;
  expiresAt: Date;
}

export interface BearerVerifier {
  verifyAccess(token: string): Promise<VerifiedToken | null>;
  roleIn(orgId: string, userId: string): Promise<Role | null>;
  forgetSession(sessionId: string): void;
  forgetUser(userId: string): void;
  forgetMembership(orgId: string, userId: string): void;
  /** Forgets every cached token and role (notifications may have been missed). */
  clear(): void;
  /** As ApiKeyVerifier.setCacheTrusted: false asks the database on every request until set true again. */
  setCacheTrusted(trusted: boolean): void;
}

export const BEARER_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 50_000;

export function createBearerVerifier(db: Database, clock: Clock): BearerVerifier {
  const tokens = new Map<string, { token: VerifiedToken; at: number }>();
  const roles = new Map<string, { role: Role | null; at: number }>();
  let trusted = true;
  let generation = 0; // as in the key verifier: nothing read before a change of trust is cached after it
  const fresh = (at: number) => trusted && clock.now().getTime() - at < BEARER_CACHE_TTL_MS;

  return {
    async verifyAccess(token) {
      if (!looksLikeToken(token, ACCESS_TOKEN_PREFIX)) return null;
      const hash = sha256Hex(token);
      let hit = tokens.get(hash);
      if (!hit || !fresh(hit.at)) {
        const readIn = generation;
        const rows = await db.system.query<{ user_id: string; session_id: string; expires_at: Date }>(
          `select s.user_id, s.id as session_id, t.expires_at
             from auth_tokens t join auth_sessions s on s.id = t.session_id
            where t.token_hash = $1 and t.kind = 'access' and t.replaced_at is null and s.revoked_at is null`,
          [hash],
        );
        const row = rows[0];
        if (!row) {
          tokens.delete(hash);
          return null;
        }
        if (tokens.size >= MAX_ENTRIES) tokens.clear();
        hit = { token: { userId: row.user_id, sessionId: row.session_id, expiresAt: row.expires_at }, at: clock.now().getTime() };
        if (trusted && readIn === generation) tokens.set(hash, hit);
      }
      return hit.token.expiresAt.getTime() > clock.now().getTime() ? hit.token : null;
    },

    async roleIn(orgId, userId) {
      const key = `${orgId}:${userId}`;
      const hit = roles.get(key);
      if (hit && fresh(hit.at)) return hit.role;
      const readIn = generation;
      const rows = await db.system.query<{ role: Role }>('select role from memberships where org_id = $1 and user_id = $2', [orgId, userId]);
      const role = rows[0]?.role ?? null;
      if (roles.size >= MAX_ENTRIES) roles.clear();
      if (trusted && readIn === generation) roles.set(key, { role, at: clock.now().getTime() });
      return role;
    },

    forgetSession(sessionId) {
      for (const [k, v] of tokens) if (v.token.sessionId === sessionId) tokens.delete(k);
    },
    forgetUser(userId) {
      for (const [k, v] of tokens) if (v.token.userId === userId) tokens.delete(k);
      for (const k of roles.keys()) if (k.endsWith(`:${userId}`)) roles.delete(k);
    },
    forgetMembership(orgId, userId) {
      roles.delete(`${orgId}:${userId}`);
    },
    clear() {
      tokens.clear();
      roles.clear();
    },
    setCacheTrusted(value) {
      trusted = value;
      generation += 1;
      tokens.clear();
      roles.clear();
    },
  };
}
