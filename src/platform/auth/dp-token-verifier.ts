// Checks a data principal's token (dpt_…) for the addressed organization. The token is looked up by its
// SHA-256 in the organization's own dp_tokens (a tenant read: row-level security applies), and warm
// answers come from memory for 10 s; expiry is checked against the clock on every request.
import type { Database } from '../db/types.js';
import type { Clock } from '../clock.js';
import { looksLikeDpToken, sha256Hex } from '../crypto/opaque-tokens.js';

export interface VerifiedDpToken {
  /** The data principal's internal id (data_principals.id): the audit actor id. */
  dataPrincipalId: string;
  dpId: string;
  expiresAt: Date;
  /** A nominee's token: the appointment it acts under (the person is dpId); null for the person's own. */
  nomineeId: string | null;
}

export interface DpTokenVerifier {
  verify(orgId: string, token: string): Promise<VerifiedDpToken | null>;
  /** The organization a token was issued in (the bare base host), or null; `verify` then checks the token itself. */
  organizationOf(token: string): Promise<string | null>;
  /** Drops cached answers for a revoked token (by its hash). */
  forget(orgId: string, tokenHash: string): void;
}

export const DP_TOKEN_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 50_000;

export function createDpTokenVerifier(db: Database, clock: Clock): DpTokenVerifier {
  const cache = new Map<string, { token: VerifiedDpToken | null; at: number }>();
  const orgs = new Map<string, { orgId: string; at: number }>();
  return {
    async verify(orgId, token) {
      if (!looksLikeDpToken(token)) return null;
      const hash = sha256Hex(token);
      const key = `${orgId}:${hash}`;
      const now = clock.now().getTime();
      let hit = cache.get(key);
      if (!hit || now - hit.at >= DP_TOKEN_CACHE_TTL_MS) {
        const rows = await db.tenantQuery<{ data_principal_id: string; dp_id: string; expires_at: Date; nominee_id: string | null }>(
          orgId,
          `select data_principal_id, dp_id, expires_at, nominee_id from dp_tokens
            where org_id = $1::uuid and token_hash = $2::text and revoked_at is null`,
          [orgId, hash],
        );
        const row = rows[0];
        // Unknown tokens are not remembered: one minted a moment ago (by another process) must work at once.
        if (!row) {
          cache.delete(key);
          return null;
        }
        if (cache.size >= MAX_ENTRIES) cache.clear();
        hit = { token: { dataPrincipalId: row.data_principal_id, dpId: row.dp_id, expiresAt: row.expires_at, nomineeId: row.nominee_id }, at: now };
        cache.set(key, hit);
      }
      return hit.token && hit.token.expiresAt.getTime() > now ? hit.token : null;
    },
    async organizationOf(token) {
      if (!looksLikeDpToken(token)) return null;
      const hash = sha256Hex(token);
      const now = clock.now().getTime();
      const hit = orgs.get(hash);
      // A token never changes organization: a remembered answer only needs to be young enough.
      if (hit && now - hit.at < DP_TOKEN_CACHE_TTL_MS) return hit.orgId;
      const rows = await db.system.query<{ org_id: string }>(
        'select org_id from dp_token_orgs where token_hash = $1 and expires_at > $2',
        [hash, clock.now()],
      );
      const orgId = rows[0]?.org_id ?? null;
      if (orgId) {
        if (orgs.size >= MAX_ENTRIES) orgs.clear();
        orgs.set(hash, { orgId, at: now });
      }
      return orgId;
    },
    forget(orgId, tokenHash) {
      cache.delete(`${orgId}:${tokenHash}`);
    },
  };
}
