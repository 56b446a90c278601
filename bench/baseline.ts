// The baseline bench/run.ts measures the service against: a bare Fastify server running the same SQL
// for each benchmarked endpoint (the features' own service and repository code, so the statements are
// the service's by construction, on one connection in the order sent), and nothing else: no tenant
// transaction (each statement commits on its own) or row-level security (the
// organization comes from a map of Host labels loaded at start), no credentials, no validation, no
// response schemas (JSON.stringify), no logger. A request with an Idempotency-Key runs the key's own
// statements around the change (since 2026-11-29; before, the baseline ignored the header). Run as its own process:
//   PORT=3100 DATA_DIR=... | DATABASE_URL=... node --import tsx bench/baseline.ts
import Fastify from 'fastify';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { Database, Queryable } from '../src/platform/db/types.js';
import type { TenantContext } from '../src/platform/auth/access.js';
import { systemClock } from '../src/platform/clock.js';
import { DEFAULT_PGLITE_SHARED_BUFFERS } from '../src/config.js';
import { createNomineeService } from '../src/features/nominees/index.js';
import { createConsentLinkService } from '../src/features/consent-links/service.js';
import { createConsentService } from '../src/features/consents/service.js';
import { createReceiptService } from '../src/features/receipts/index.js';
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { BENCH_SECRET_KEY } from './secret.js';
import { fulfilmentServices } from './fulfilment.js';
import { hashApiKey } from '../src/platform/crypto/api-keys.js';
import { IDEMPOTENCY_LOOKUP, IDEMPOTENCY_STORE, IDEMPOTENCY_TTL_MS, idempotencyRequestHash } from '../src/platform/http/idempotency.js';
import type { ClaimInput } from '../src/features/fulfilment/schemas.js';
import type { PrincipalContext } from '../src/platform/auth/access.js';
import type { CreateGrievanceInput, UpdateGrievanceInput } from '../src/features/grievances/schemas.js';
import type { CreateNomineeInput } from '../src/features/nominees/schemas.js';
import type { CreateConsentLinkInput, HistoryQueryInput } from '../src/features/consent-links/schemas.js';
import type { RecordConsentInput } from '../src/features/consents/schemas.js';

/** The store with its transaction taken away: each statement runs on its own, as the owner. */
async function openBare(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (url) {
    // The service's pool: the same size, prepared statements.
    const sql = postgres(url, { max: 10, onnotice: () => {}, connection: { application_name: 'assent-bench-baseline' } });
    const on = (s: postgres.Sql | postgres.ReservedSql): Queryable => ({
      async query<T>(text: string, params?: readonly unknown[]) {
        return (await s.unsafe(text, (params ?? []) as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[];
      },
    });
    // A service's "transaction" runs on one connection, each statement committing on its own: the
    // statements keep the order they were sent in (the services send a change's follow-ups, such as its
    // webhook event or the fulfilment's tasks, side by side with it and rely on that order, as they may
    // inside a real transaction), without BEGIN, COMMIT or the tenant.
    const session = async <T>(fn: (q: Queryable) => Promise<T>): Promise<T> => {
      const conn = await sql.reserve();
      try {
        return await fn(on(conn));
      } finally {
        conn.release();
      }
    };
    return bareDatabase('postgres', on(sql), () => sql.end({ timeout: 5 }), session);
  }
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('baseline: set DATA_DIR or DATABASE_URL');
  // The service's shared_buffers, so the ratio measures the service's own work, not a setting.
  const sharedBuffers = process.env.PGLITE_SHARED_BUFFERS || DEFAULT_PGLITE_SHARED_BUFFERS;
  const pg = await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] });
  const q: Queryable = {
    async query<T>(text: string, params?: readonly unknown[]) {
      return (await pg.query<T>(text, params as unknown[] | undefined)).rows;
    },
  };
  return bareDatabase('pglite', q, () => pg.close());
}

function bareDatabase(kind: Database['kind'], q: Queryable, close: () => Promise<void>, session?: <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>): Database {
  return {
    kind,
    system: { ...q, transaction: (fn) => fn({ ...q, exec: async () => {} }), exec: async () => {} },
    tenantTransaction: (_orgId, fn) => (session ? session(fn) : fn(q)),
    tenantQuery: (_orgId, text, params) => q.query(text, params),
    close,
  };
}

async function main(): Promise<void> {
  const db = await openBare();
  const orgs = new Map<string, TenantContext>();
  const actor = { type: 'api_key' as const, id: '00000000-0000-4000-8000-000000000001', scopes: ['admin' as const] };
  for (const o of await db.system.query<{ id: string; slug: string; name: string }>('select id, slug, name from organizations')) {
    orgs.set(o.slug, { orgId: o.id, slug: o.slug, orgName: o.name, actor, requestId: 'baseline' });
  }
  const ctxOf = (host: string | undefined): TenantContext => {
    const ctx = orgs.get((host ?? '').split('.')[0]!);
    if (!ctx) throw Object.assign(new Error('unknown organization'), { statusCode: 404 });
    return ctx;
  };

  const deps = { db, clock: systemClock, defaultCountryCode: '+91', publicUrl: new URL('http://localhost:3000') };
  // Consents are signed as the service signs them (a receipt per record), with the bench's secret.
  const receipts = createReceiptService({ ...deps, keyring: createSigningKeyring(BENCH_SECRET_KEY) }).signer;
  // Tickets fan out to the organization's systems as in the service (bench/fulfilment.ts).
  const { grievances, fulfilment } = fulfilmentServices(db);
  // A system key claims for its own system: its key id, looked up once (the service caches keys too).
  const keyIds = new Map<string, string>();
  const systemCtx = async (host: string | undefined, key: string): Promise<TenantContext> => {
    let id = keyIds.get(key);
    if (!id) {
      id = (await db.system.query<{ id: string }>('select id from api_keys where key_hash = $1 and revoked_at is null', [hashApiKey(key)]))[0]?.id ?? '';
      keyIds.set(key, id);
    }
    return { ...ctxOf(host), actor: { type: 'api_key', id, scopes: ['fulfilment'] } };
  };
  const nominees = createNomineeService(deps);
  const consentLinks = createConsentLinkService(deps);
  const consents = createConsentService({ ...deps, receipts });
  // A data principal's routes: the person from X-Bench-Dp-Id (the bench sends it; no token to check).
  const principalOf = (headers: Record<string, string | string[] | undefined>): PrincipalContext => {
    const dpId = String(headers['x-bench-dp-id'] ?? '');
    return { ...ctxOf(headers.host as string | undefined), actor: { type: 'data_principal', id: '00000000-0000-4000-8000-000000000003', dpId } };
  };

  const app = Fastify({ logger: false });
  app.get<{ Params: { user_id: string } }>('/grievance/user/:user_id', (req) => grievances.listForUser(ctxOf(req.headers.host), req.params.user_id));
  app.post<{ Body: CreateGrievanceInput }>('/grievance', async (req, reply) => {
    const ctx = ctxOf(req.headers.host);
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') return reply.code(201).send(await grievances.create(ctx, req.body));
    // Idempotency-Key: the feature's own statements (src/platform/http/idempotency.ts), bare: the key's
    // lookup, then the change, then the answer stored, each committing on its own.
    const now = new Date();
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
    const [found] = await db.system.query<{ request_hash: string | null; status_code: number | null; body: string | null }>(IDEMPOTENCY_LOOKUP, [ctx.orgId, key, cutoff]);
    if (found?.request_hash) return reply.code(found.status_code!).type('application/json').send(found.body);
    const body = JSON.stringify(await grievances.create(ctx, req.body));
    await db.system.query(IDEMPOTENCY_STORE, [ctx.orgId, key, idempotencyRequestHash(req.method, req.url, req.body), 201, body, now, cutoff]);
    return reply.code(201).type('application/json').send(body);
  });
  app.put<{ Params: { ticket_id: string }; Body: UpdateGrievanceInput }>('/grievance/:ticket_id', (req) =>
    grievances.update(ctxOf(req.headers.host), req.params.ticket_id, req.body),
  );
  app.get<{ Params: { user_id: string } }>('/nominee/user/:user_id', (req) => nominees.listForUser(ctxOf(req.headers.host), req.params.user_id));
  app.post<{ Body: CreateNomineeInput }>('/nominee', async (req, reply) => reply.code(201).send(await nominees.create(ctxOf(req.headers.host), req.body)));
  app.get<{ Querystring: Record<string, string> }>('/api/v1/external/public/consent-link/history', (req) => {
    const { limit, offset, ...rest } = req.query;
    const query = { ...rest, limit: limit === undefined ? undefined : Number(limit), offset: offset === undefined ? undefined : Number(offset) };
    return consentLinks.history(ctxOf(req.headers.host), query as HistoryQueryInput);
  });
  app.post<{ Body: CreateConsentLinkInput }>('/api/v1/external/public/consent-link', async (req, reply) =>
    reply.code(201).send(await consentLinks.create(ctxOf(req.headers.host), req.body)),
  );
  app.get('/api/v1/me/consents', (req) => consents.mine(principalOf(req.headers)));
  app.post<{ Params: { collection_point_id: string }; Body: { purposes: RecordConsentInput['purposes'] } }>(
    '/api/v1/me/consents/:collection_point_id',
    async (req, reply) => reply.code(201).send(await consents.giveMine(principalOf(req.headers), req.params.collection_point_id, req.body.purposes)),
  );
  app.post<{ Body: ClaimInput }>('/api/v1/fulfilment/tasks/claim', async (req) => fulfilment.claim(await systemCtx(req.headers.host, String(req.headers['x-api-key'] ?? '')), req.body));
  app.get('/health', async () => ({ status: 'ok' }));

  await app.listen({ port: Number(process.env.PORT ?? 3100), host: process.env.HOST ?? '127.0.0.1' });
  const stop = async () => {
    await app.close();
    await db.close();
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

await main();
