// Several processes on one PostgreSQL database: a revoked key, an ended session or a changed membership
// must stop working on every process at once, not when each one's cache expires. Migration 0012's
// triggers send a notification on `assent_auth` in the transaction of the change; every process listens
// and drops what it cached. While the listening connection is lost the caches are not trusted at all:
// every key, token and role is read from the database until the connection is back, and then what was
// cached is dropped (what was sent meanwhile is gone). Before issue 34 the cache was trusted until the
// reconnection (about 950 ms after pg_terminate_backend; a revoked key answered up to 1,916 requests).
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/types.js';
import type { ApiKeyVerifier } from './api-key-verifier.js';
import type { BearerVerifier } from './bearer-verifier.js';

export const AUTH_CHANNEL = 'assent_auth';

type AuthChange = { kind: 'api_key'; id: string } | { kind: 'session'; id: string } | { kind: 'membership'; org_id: string; user_id: string };

export interface AuthChangeDeps {
  db: Pick<Database, 'listen'>;
  apiKeys: Pick<ApiKeyVerifier, 'invalidate' | 'clear' | 'setCacheTrusted'>;
  bearer: Pick<BearerVerifier, 'forgetSession' | 'forgetMembership' | 'clear' | 'setCacheTrusted'>;
  log: Pick<FastifyBaseLogger, 'warn'>;
}

/** Applies one notification's payload to the caches. */
export function applyAuthChange(payload: string, { apiKeys, bearer, log }: Omit<AuthChangeDeps, 'db'>): void {
  let change: AuthChange;
  try {
    change = JSON.parse(payload) as AuthChange;
  } catch {
    log.warn({ payload: payload.slice(0, 200) }, 'auth change notification is not JSON; caches cleared');
    apiKeys.clear();
    bearer.clear();
    return;
  }
  if (change.kind === 'api_key') apiKeys.invalidate(change.id);
  else if (change.kind === 'session') bearer.forgetSession(change.id);
  else if (change.kind === 'membership') bearer.forgetMembership(change.org_id, change.user_id);
}

/** Starts listening (PostgreSQL); null on a store that one process owns (PGlite), where the calls suffice. */
export async function followAuthChanges(deps: AuthChangeDeps): Promise<{ close(): Promise<void> } | null> {
  if (!deps.db.listen) return null;
  let connected = false;
  return deps.db.listen(
    AUTH_CHANNEL,
    (payload) => applyAuthChange(payload, deps),
    () => {
      // The first subscription finds nothing cached worth dropping; a later one follows a lost connection.
      if (connected) {
        deps.log.warn('auth change notifications: listening again after a lost connection; caches cleared and trusted again');
        deps.apiKeys.setCacheTrusted(true);
        deps.bearer.setCacheTrusted(true);
      }
      connected = true;
    },
    () => {
      deps.log.warn('auth change notifications: connection lost; keys, tokens and roles are read from the database until it is back');
      deps.apiKeys.setCacheTrusted(false);
      deps.bearer.setCacheTrusted(false);
    },
  );
}
