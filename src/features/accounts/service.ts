// Organizations and their API keys. Work done before any tenant is known (CLI) runs on the system
// connection; this folder and platform/auth are the only places allowed to. Key management through the
// API runs in a tenant transaction, with its audit entry in the same commit.
import { normaliseOrigins } from '../../platform/http/cors.js';
import type { Database, Queryable } from '../../platform/db/types.js';
import type { SigningKeyring } from '../../platform/crypto/signing-keys.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { isUniqueViolation, tenantReads, withTenant } from '../../platform/db/tenant-tx.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { recordAudit } from '../audit/index.js';
import { generateApiKey } from '../../platform/crypto/api-keys.js';
import { uuidv7, isUuid } from '../../platform/ids.js';
import type { Scope } from '../../platform/auth/api-key-verifier.js';
import { slugProblem } from './slugs.js';

export const SCOPES: readonly Scope[] = ['admin', 'grievances', 'nominees', 'consent', 'sdk', 'fulfilment'];

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
  /**
   * Makes receipt signing keys: a new organization gets its first one in its creating statement.
   * Without it (a CLI on PostgreSQL with no ASSENT_SECRET_KEY) the key is made on first use instead.
   */
  keyring?: SigningKeyring;
}

const KEY_COLUMNS = 'id, name, prefix, scopes, created_at, last_used_at, revoked_at';

/** The scopes (deduplicated; admin when none) and name of a new key, or a 400. */
function checkKeyInput(input: { scopes?: string[]; name?: string }): { scopes: string[]; name: string } {
  const scopes = [...new Set(input.scopes && input.scopes.length > 0 ? input.scopes : ['admin'])];
  const unknown = scopes.filter((s) => !SCOPES.includes(s as Scope));
  if (unknown.length > 0) {
    throw new AppError('validation_failed', `Unknown scope ${unknown.join(', ')}: use ${SCOPES.join(', ')}`, [
      { field: 'scopes', message: `must be among ${SCOPES.join(', ')}` },
    ]);
  }
  const name = (input.name ?? 'default').trim();
  if (name.length === 0 || name.length > 255) {
    throw new AppError('validation_failed', 'Key name must be 1-255 characters', [{ field: 'name', message: 'must be 1-255 characters' }]);
  }
  return { scopes, name };
}

async function insertKey(q: Queryable, orgId: string, input: { scopes: string[]; name: string }, at: Date): Promise<ApiKeyRecord & { key: string }> {
  const generated = generateApiKey();
  const rows = await q.query<ApiKeyRecord>(
    `insert into api_keys (org_id, id, name, prefix, key_hash, scopes, created_at)
     values ($1, $2, $3, $4, $5, $6::text[], $7)
     returning ${KEY_COLUMNS}`,
    [orgId, uuidv7(), input.name, generated.prefix, generated.hash, `{${input.scopes.join(',')}}`, at],
  );
  return { ...rows[0]!, key: generated.key };
}

const keyNotFound = () => new AppError('not_found', 'API key not found');

export function createAccountsService({ db, clock, onKeyRevoked, keyring }: AccountsDeps) {
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
      if (problem) throw new AppError('validation_failed', `Slug "${slug}" ${problem}`, [{ field: 'slug', message: problem }]);
      const name = (input.name ?? slug).trim();
      if (name.length === 0 || name.length > 255) {
        throw new AppError('validation_failed', 'Name must be 1-255 characters', [{ field: 'name', message: 'must be 1-255 characters' }]);
      }
      try {
        const at = clock.now();
        if (!keyring) {
          const rows = await db.system.query<OrganizationRecord>(
            'insert into organizations (id, slug, name, created_at) values ($1, $2, $3, $4) returning id, slug, name, created_at',
            [uuidv7(), slug, name, at],
          );
          return rows[0]!;
        }
        // The organization and its receipt signing key, in one transaction. signing_keys forces row-level
        // security, so even this owner connection inserts the key only with the new organization set as
        // the tenant (as withTenant does; a superuser would bypass the policy, a login role holding only
        // assent_app does not).
        const key = keyring.generate();
        return await db.system.transaction(async (tx) => {
          const rows = await tx.query<OrganizationRecord>(
            'insert into organizations (id, slug, name, created_at) values ($1, $2, $3, $4) returning id, slug, name, created_at',
            [uuidv7(), slug, name, at],
          );
          const org = rows[0]!;
          await tx.query("select set_config('app.org_id', $1, true)", [org.id]);
          await tx.query(
            'insert into signing_keys (org_id, kid, public_jwk, private_key_enc, created_at) values ($1, $2, $3::text::jsonb, $4, $5)',
            [org.id, key.kid, JSON.stringify(key.public_jwk), key.private_key_enc, at],
          );
          return org;
        });
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('conflict', `An organization with slug "${slug}" already exists`);
        throw e;
      }
    },

    /**
     * A current receipt signing key for every organization without one (those created before
     * migration 0018, or by a CLI that had no ASSENT_SECRET_KEY). Run by the server at start; the
     * signing path also makes one on first use. Returns how many were made.
     */
    async ensureSigningKeys(): Promise<number> {
      if (!keyring) return 0;
      // signing_keys forces row-level security: which organizations lack a key, and the key's insert, are
      // asked inside each organization's tenant scope (a query across all of them as the owner would see
      // no key at all, unless the connecting role is a superuser). The reads are one statement each, so
      // they go out together (pipelined on PostgreSQL's read lanes), a batch at a time.
      const orgs = await db.system.query<{ id: string }>('select id from organizations order by id');
      const missing: string[] = [];
      for (let i = 0; i < orgs.length; i += 200) {
        const batch = orgs.slice(i, i + 200);
        const current = await Promise.all(
          batch.map(({ id }) =>
            tenantReads(db, id).query<{ has: boolean }>(
              'select exists (select 1 from signing_keys where org_id = $1::uuid and retired_at is null) as has',
              [id],
            ),
          ),
        );
        batch.forEach(({ id }, j) => {
          if (!current[j]![0]!.has) missing.push(id);
        });
      }
      let made = 0;
      for (const id of missing) {
        const key = keyring.generate();
        const rows = await withTenant(db, id, (tx) =>
          tx.query(
            `insert into signing_keys (org_id, kid, public_jwk, private_key_enc, created_at) values ($1, $2, $3::text::jsonb, $4, $5)
             on conflict (org_id) where retired_at is null do nothing returning kid`,
            [tx.orgId, key.kid, JSON.stringify(key.public_jwk), key.private_key_enc, clock.now()],
          ),
        );
        made += rows.length;
      }
      return made;
    },

    async createApiKey(slug: string, input: { scopes?: string[]; name?: string }): Promise<ApiKeyRecord & { key: string }> {
      const org = await organizationBySlug(slug);
      return insertKey(db.system, org.id, checkKeyInput(input), clock.now());
    },

    async listApiKeys(slug: string): Promise<ApiKeyRecord[]> {
      const org = await organizationBySlug(slug);
      return db.system.query<ApiKeyRecord>(
        `select ${KEY_COLUMNS} from api_keys where org_id = $1 order by created_at, id`,
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
          returning ${KEY_COLUMNS}`,
        [org.id, keyId, clock.now()],
      );
      if (!rows[0]) throw notFound;
      onKeyRevoked?.(keyId);
      return rows[0];
    },

    /** The addressed organization, for its management API. */
    async organization(ctx: TenantContext): Promise<OrganizationRecord & { grievance_period_days: number }> {
      const rows = await db.system.query<OrganizationRecord & { grievance_period_days: number }>(
        'select id, slug, name, created_at, grievance_period_days from organizations where id = $1',
        [ctx.orgId],
      );
      return rows[0]!;
    },

    /** Changes the organization's settings (the grievance period, 1-90 days: the schema checks it), audited. */
    async updateGrievancePeriod(ctx: TenantContext, input: { grievance_period_days?: number }): Promise<void> {
      const at = clock.now();
      const fields = Object.keys(input).filter((k) => input[k as keyof typeof input] !== undefined);
      if (input.grievance_period_days !== undefined) {
        const days = input.grievance_period_days;
        await withTenant(db, ctx.orgId, async (tx) => {
          const [before] = await tx.query<{ grievance_period_days: number }>('select grievance_period_days from organizations where id = $1', [ctx.orgId]);
          await tx.query('update organizations set grievance_period_days = $2 where id = $1', [ctx.orgId, days]);
          await recordAudit(tx, ctx, at, {
            action: 'organization.updated',
            targetType: 'organization',
            targetId: ctx.orgId,
            details: { fields, grievance_period_days: days, previous_grievance_period_days: before?.grievance_period_days ?? null },
          });
        });
      }
    },

    /** The organization's own settings: its limit per API key (null: the server's default). */
    async settings(ctx: TenantContext): Promise<{ api_rate_limit: number | null; allowed_origins: string[] }> {
      const rows = await db.system.query<{ api_rate_limit: number | null; allowed_origins: string[] }>(
        'select api_rate_limit, allowed_origins from organizations where id = $1',
        [ctx.orgId],
      );
      return rows[0]!;
    },

    /** Changes the organization's settings; the change is audited. */
    async updateSettings(
      ctx: TenantContext,
      input: { api_rate_limit?: number | null; allowed_origins?: string[] },
    ): Promise<{ api_rate_limit: number | null; allowed_origins: string[] }> {
      const at = clock.now();
      if (input.allowed_origins !== undefined) {
        const origins = normaliseOrigins(input.allowed_origins);
        await db.system.query('update organizations set allowed_origins = $2::text[] where id = $1', [ctx.orgId, origins]);
        await withTenant(db, ctx.orgId, (tx) =>
          recordAudit(tx, ctx, at, { action: 'organization.updated', targetType: 'organization', targetId: ctx.orgId, details: { allowed_origins: origins } }),
        );
      }
      if (input.api_rate_limit !== undefined) {
        await db.system.query('update organizations set api_rate_limit = $2 where id = $1', [ctx.orgId, input.api_rate_limit]);
        await withTenant(db, ctx.orgId, (tx) =>
          recordAudit(tx, ctx, at, { action: 'organization.updated', targetType: 'organization', targetId: ctx.orgId, details: { api_rate_limit: input.api_rate_limit } }),
        );
      }
      return this.settings(ctx);
    },

    /** A new key of the addressed organization; the plaintext is in the answer and nowhere else. */
    createKey(ctx: TenantContext, input: { scopes: string[]; name: string }): Promise<ApiKeyRecord & { key: string }> {
      const checked = checkKeyInput(input);
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const created = await insertKey(tx, ctx.orgId, checked, at);
        await recordAudit(tx, ctx, at, { action: 'api_key.created', targetType: 'api_key', targetId: created.id, details: { scopes: created.scopes } });
        return created;
      });
    },

    listKeys(ctx: TenantContext): Promise<ApiKeyRecord[]> {
      return withTenant(db, ctx.orgId, (tx) =>
        tx.query<ApiKeyRecord>(`select ${KEY_COLUMNS} from api_keys where org_id = $1 order by created_at, id`, [ctx.orgId]),
      );
    },

    /** Revokes a key (again: nothing changes, no second audit entry); it fails at once in this process. */
    async revokeKey(ctx: TenantContext, keyId: string): Promise<ApiKeyRecord> {
      if (!isUuid(keyId)) throw keyNotFound();
      const at = clock.now();
      const key = await withTenant(db, ctx.orgId, async (tx) => {
        const revoked = await tx.query<ApiKeyRecord>(
          `update api_keys set revoked_at = $3 where org_id = $1 and id = $2 and revoked_at is null returning ${KEY_COLUMNS}`,
          [ctx.orgId, keyId, at],
        );
        if (revoked[0]) {
          await recordAudit(tx, ctx, at, { action: 'api_key.revoked', targetType: 'api_key', targetId: keyId });
          return revoked[0];
        }
        const existing = await tx.query<ApiKeyRecord>(`select ${KEY_COLUMNS} from api_keys where org_id = $1 and id = $2`, [ctx.orgId, keyId]);
        if (!existing[0]) throw keyNotFound();
        return existing[0];
      });
      onKeyRevoked?.(keyId);
      return key;
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
