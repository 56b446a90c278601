// Organizations and their API keys: work done before any tenant is known (CLI, key management), so it
// runs on the system connection; this folder and platform/auth are the only places allowed to.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { isUniqueViolation } from '../../platform/db/tenant-tx.js';
import { generateApiKey } from '../../platform/crypto/api-keys.js';
import { uuidv7, isUuid } from '../../platform/ids.js';
import type { Scope } from '../../platform/auth/api-key-verifier.js';
import { slugProblem } from './slugs.js';

export const SCOPES: readonly Scope[] = ['admin', 'grievances', 'nominees', 'consent'];

export interface OrganizationRecord {
  id: string;
  slug: string;
  name: string;
  created_at: Date;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface AccountsDeps {
  db: Database;
  clock: Clock;
  /** Told when a key is revoked, so this process refuses it at once. */
  onKeyRevoked?: (keyId: string) => void;
}

export function createAccountsService({ db, clock, onKeyRevoked }: AccountsDeps) {
  async function organizationBySlug(slug: string): Promise<OrganizationRecord> {
    const rows = await db.system.query<OrganizationRecord>('select id, slug, name, created_at from organizations where slug = $1', [slug]);
    if (!rows[0]) throw new AppError('not_found', `No organization with slug "${slug}"`);
    return rows[0];
  }

  return {
    organizationBySlug,

    async createOrganization(input: { slug: string; name?: string }): Promise<OrganizationRecord> {
      const slug = input.slug.trim();
      const problem = slugProblem(slug);
      if (problem) throw new AppError('bad_request', `Slug "${slug}" ${problem}`, [{ field: 'slug', message: problem }]);
      const name = (input.name ?? slug).trim();
      if (name.length === 0 || name.length > 255) {
        throw new AppError('bad_request', 'Name must be 1-255 characters', [{ field: 'name', message: 'must be 1-255 characters' }]);
      }
      try {
        const rows = await db.system.query<OrganizationRecord>(
          'insert into organizations (id, slug, name, created_at) values ($1, $2, $3, $4) returning id, slug, name, created_at',
          [uuidv7(), slug, name, clock.now()],
        );
        return rows[0]!;
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('conflict', `An organization with slug "${slug}" already exists`);
        throw e;
      }
    },

    async createApiKey(slug: string, input: { scopes?: string[]; name?: string }): Promise<ApiKeyRecord & { key: string }> {
      const org = await organizationBySlug(slug);
      const scopes = [...new Set(input.scopes && input.scopes.length > 0 ? input.scopes : ['admin'])];
      const unknown = scopes.filter((s) => !SCOPES.includes(s as Scope));
      if (unknown.length > 0) {
        throw new AppError('bad_request', `Unknown scope ${unknown.join(', ')}: use ${SCOPES.join(', ')}`, [
          { field: 'scopes', message: `must be among ${SCOPES.join(', ')}` },
        ]);
      }
      const name = (input.name ?? 'default').trim();
      if (name.length === 0 || name.length > 255) {
        throw new AppError('bad_request', 'Key name must be 1-255 characters', [{ field: 'name', message: 'must be 1-255 characters' }]);
      }
      const generated = generateApiKey();
      const rows = await db.system.query<ApiKeyRecord>(
        `insert into api_keys (org_id, id, name, prefix, key_hash, scopes, created_at)
         values ($1, $2, $3, $4, $5, $6::text[], $7)
         returning id, name, prefix, scopes, created_at, last_used_at, revoked_at`,
        [org.id, uuidv7(), name, generated.prefix, generated.hash, `{${scopes.join(',')}}`, clock.now()],
      );
      return { ...rows[0]!, key: generated.key };
    },

    async listApiKeys(slug: string): Promise<ApiKeyRecord[]> {
      const org = await organizationBySlug(slug);
      return db.system.query<ApiKeyRecord>(
        `select id, name, prefix, scopes, created_at, last_used_at, revoked_at
           from api_keys where org_id = $1 order by created_at, id`,
        [org.id],
      );
    },

    async revokeApiKey(slug: string, keyId: string): Promise<ApiKeyRecord> {
      const org = await organizationBySlug(slug);
      const notFound = new AppError('not_found', `No API key with id "${keyId}" in organization "${slug}"`);
      if (!isUuid(keyId)) throw notFound;
      const rows = await db.system.query<ApiKeyRecord>(
        `update api_keys set revoked_at = coalesce(revoked_at, $3)
          where org_id = $1 and id = $2
          returning id, name, prefix, scopes, created_at, last_used_at, revoked_at`,
        [org.id, keyId, clock.now()],
      );
      if (!rows[0]) throw notFound;
      onKeyRevoked?.(keyId);
      return rows[0];
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
