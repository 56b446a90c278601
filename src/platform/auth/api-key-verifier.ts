// Checks an X-API-Key against the addressed organization. Warm keys are answered from memory (no round
// trip); a revocation drops the entry at once, in this process by a call and in the others by a
// notification (auth-changes.ts); the TTL bounds how long a missed notification can matter.
// last_used_at is collected in memory and written in one statement per flush, not on every request.
import type { Database } from '../db/types.js';
import type { Clock } from '../clock.js';
import { hashApiKey, looksLikeApiKey } from '../crypto/api-keys.js';

export type Scope = 'admin' | 'grievances' | 'nominees' | 'consent' | 'sdk' | 'fulfilment';

export interface VerifiedKey {
  id: string;
  orgId: string;
  scopes: Scope[];
}

export interface ApiKeyVerifier {
  verify(orgId: string, key: string): Promise<VerifiedKey | null>;
  /** The active key, whichever organization it belongs to (the bare base host: a key selects its own organization). */
  resolve(key: string): Promise<VerifiedKey | null>;
  /** Called on revocation: the key fails at once in this process. */
  invalidate(keyId: string): void;
  /** Forgets every cached key (notifications may have been missed). */
  clear(): void;
  /**
   * false: forgets every cached key and asks the database on every request until set true again (the
   * notifications that would drop a revoked key are not arriving); true: forgets them again (what was
   * sent meanwhile is lost) and caches from then on.
   */
  setCacheTrusted(trusted: boolean): void;
  /** Writes the collected last_used_at times. */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

export const KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 50_000;

export function createApiKeyVerifier(db: Database, clock: Clock, options: { flushEveryMs?: number } = {}): ApiKeyVerifier {
  const cache = new Map<string, { key: VerifiedKey; at: number }>();
  const usage = new Map<string, { orgId: string; at: Date }>();
  let trusted = true;
  // Bumped when trust changes: an answer read before the change is not cached after it (a revocation
  // committed between that read and the new LISTEN sent a notification nobody heard).
  let generation = 0;
  let flushing: Promise<void> | null = null;

  const flushUsage = async (): Promise<void> => {
    if (flushing) await flushing;
    if (usage.size === 0) return;
    const batch = [...usage].map(([id, u]) => ({ org_id: u.orgId, id, at: u.at.toISOString() }));
    usage.clear();
    flushing = db.system
      .query(
        `update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
           from jsonb_to_recordset($1::text::jsonb) as u(org_id uuid, id uuid, at timestamptz)
          where k.org_id = u.org_id and k.id = u.id`,
        [JSON.stringify(batch)],
      )
      .then(() => undefined);
    try {
      await flushing;
    } finally {
      flushing = null;
    }
  };

  const timer = setInterval(() => void flushUsage().catch(() => {}), options.flushEveryMs ?? 30_000);
  timer.unref();

  return {
    async verify(orgId, key) {
      if (!looksLikeApiKey(key)) return null;
      const hash = hashApiKey(key);
      const cacheKey = `${orgId}:${hash}`;
      const now = clock.now();
      let entry = cache.get(cacheKey);
      if (!trusted || !entry || now.getTime() - entry.at >= KEY_CACHE_TTL_MS) {
        const readIn = generation;
        const rows = await db.system.query<{ id: string; scopes: Scope[] }>(
          'select id, scopes from api_keys where org_id = $1 and key_hash = $2 and revoked_at is null',
          [orgId, hash],
        );
        const row = rows[0];
        if (!row) {
          cache.delete(cacheKey);
          return null;
        }
        if (cache.size >= MAX_ENTRIES) cache.clear();
        entry = { key: { id: row.id, orgId, scopes: row.scopes }, at: now.getTime() };
        if (trusted && readIn === generation) cache.set(cacheKey, entry);
      }
      usage.set(entry.key.id, { orgId, at: now });
      return entry.key;
    },
    async resolve(key) {
      if (!looksLikeApiKey(key)) return null;
      const hash = hashApiKey(key);
      const cacheKey = `*:${hash}`;
      const now = clock.now();
      let entry = cache.get(cacheKey);
      if (!trusted || !entry || now.getTime() - entry.at >= KEY_CACHE_TTL_MS) {
        const readIn = generation;
        const rows = await db.system.query<{ id: string; org_id: string; scopes: Scope[] }>(
          'select id, org_id, scopes from api_keys where key_hash = $1 and revoked_at is null limit 2',
          [hash],
        );
        // Two organizations with one key hash cannot happen by chance; if it ever did, neither is guessed.
        const row = rows.length === 1 ? rows[0] : undefined;
        if (!row) {
          cache.delete(cacheKey);
          return null;
        }
        if (cache.size >= MAX_ENTRIES) cache.clear();
        entry = { key: { id: row.id, orgId: row.org_id, scopes: row.scopes }, at: now.getTime() };
        if (trusted && readIn === generation) cache.set(cacheKey, entry);
      }
      usage.set(entry.key.id, { orgId: entry.key.orgId, at: now });
      return entry.key;
    },
    invalidate(keyId) {
      for (const [k, v] of cache) if (v.key.id === keyId) cache.delete(k);
    },
    clear() {
      cache.clear();
    },
    setCacheTrusted(value) {
      trusted = value;
      generation += 1;
      cache.clear();
    },
    flushUsage,
    async close() {
      clearInterval(timer);
      await flushUsage();
    },
  };
}
