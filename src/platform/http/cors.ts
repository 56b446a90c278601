// CORS for the data principal's surfaces only (contract §9): `/api/v1/me...` (§7), the SDK surface
// `/api/v1/internal/...` (§8) and the code sign-ins (`/rights/otp`, `/rights/nominee/otp` and their `/verify`). A browser page
// on one of the organization's allowed origins (PATCH /api/v1/organization {allowed_origins}) may call
// them; organization endpoints never send a CORS header, so no other site's script can read them.
//
// Why not @fastify/cors: the decision needs the organization, which the access hook resolves from the
// credential on the bare host; @fastify/cors answers preflights with a catch-all `OPTIONS *` route
// (which every route's declared access rule, and the 405-with-Allow answers, would have to make room
// for) and decides in one hook, before or after authentication but not for both the preflight and the
// actual answer (an error thrown by authentication skips its later hooks). Two small hooks here do it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/types.js';
import type { Clock } from '../clock.js';
import { addressOf, type OrganizationDirectory } from '../auth/tenant-host.js';
import { hostOf, organizationOf } from '../auth/access.js';
import { AppError } from './errors.js';
import type { RouteIndex } from './route-index.js';

/** At most this many origins per organization (the migration's check says the same). */
export const MAX_ALLOWED_ORIGINS = 20;

/** Request headers a browser may send to the data principal's surfaces. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-User-Id', 'X-Org-Id', 'X-API-Key', 'X-Request-Id', 'Accept-Language'];
/** Response headers a browser's script may read. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed'];
const MAX_AGE_SECONDS = 600;
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/** Whether a route (its URL pattern, or a request's path) is one of the data principal's surfaces. */
export function isCorsPath(url: string): boolean {
  return (
    url === '/api/v1/me' ||
    url.startsWith('/api/v1/me/') ||
    url.startsWith('/api/v1/internal/') ||
    url === '/rights/otp' ||
    url === '/rights/otp/verify' ||
    url === '/rights/nominee/otp' ||
    url === '/rights/nominee/otp/verify'
  );
}

/**
 * Checks and normalises an organization's allowed origins: absolute http(s) origins (scheme, host,
 * optional port; no path, query, fragment or credentials), at most MAX_ALLOWED_ORIGINS, duplicates
 * removed. A trailing `/` is accepted and dropped. Anything else: 400 naming each bad entry.
 */
export function normaliseOrigins(input: readonly string[]): string[] {
  const details: { field: string; message: string }[] = [];
  const out: string[] = [];
  input.forEach((raw, i) => {
    const value = raw.trim();
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {
      url = null;
    }
    const bare = value.endsWith('/') ? value.slice(0, -1) : value;
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username ||
      url.password ||
      url.pathname !== '/' ||
      url.search ||
      url.hash ||
      bare.toLowerCase() !== url.origin
    ) {
      details.push({ field: `allowed_origins.${i}`, message: 'must be an origin: http(s)://host[:port], without a path, query or fragment (e.g. https://shop.example.com)' });
      return;
    }
    if (!out.includes(url.origin)) out.push(url.origin);
  });
  if (out.length > MAX_ALLOWED_ORIGINS) details.push({ field: 'allowed_origins', message: `must have at most ${MAX_ALLOWED_ORIGINS} origins` });
  if (details.length > 0) {
    throw new AppError('validation_failed', `Invalid request body: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
  }
  return out;
}

export interface OriginPolicy {
  /** The organization's allowed origins (cached 30 s; `forget` after a change). */
  allowedFor(orgId: string): Promise<readonly string[]>;
  /** Whether any organization allows this origin (a preflight on the bare host, before any credential). */
  allowedAnywhere(origin: string): Promise<boolean>;
  forget(orgId: string): void;
}

export function createOriginPolicy(db: Database, clock: Clock): OriginPolicy {
  const byOrg = new Map<string, { origins: readonly string[]; at: number }>();
  const byOrigin = new Map<string, { allowed: boolean; at: number }>();
  const fresh = (at: number) => clock.now().getTime() - at < TTL_MS;
  return {
    async allowedFor(orgId) {
      const hit = byOrg.get(orgId);
      if (hit && fresh(hit.at)) return hit.origins;
      const rows = await db.system.query<{ allowed_origins: string[] }>('select allowed_origins from organizations where id = $1', [orgId]);
      const origins = rows[0]?.allowed_origins ?? [];
      if (byOrg.size >= MAX_ENTRIES) byOrg.clear();
      byOrg.set(orgId, { origins, at: clock.now().getTime() });
      return origins;
    },
    async allowedAnywhere(origin) {
      const hit = byOrigin.get(origin);
      if (hit && fresh(hit.at)) return hit.allowed;
      const rows = await db.system.query<{ one: number }>('select 1 as one from organizations where $1 = any(allowed_origins) limit 1', [origin]);
      if (byOrigin.size >= MAX_ENTRIES) byOrigin.clear();
      byOrigin.set(origin, { allowed: rows.length > 0, at: clock.now().getTime() });
      return rows.length > 0;
    },
    forget(orgId) {
      byOrg.delete(orgId);
      byOrigin.clear();
    },
  };
}

export interface CorsDeps {
  policy: OriginPolicy;
  organizations: OrganizationDirectory;
  baseDomain: string;
  trustProxy: boolean;
  /** Which methods a path takes (the preflight's Access-Control-Allow-Methods). */
  routes: RouteIndex;
}

const headerOf = (request: FastifyRequest, name: string): string => {
  const v = request.headers[name];
  return ((Array.isArray(v) ? v[0] : v) ?? '').trim();
};

/**
 * Installs the preflight answer (an OPTIONS request naming a method, to a data principal's path: 204,
 * with the allowed methods and headers when the origin is allowed) and the CORS headers of actual
 * answers (from the organization the request resolved to; errors included when the host names it).
 */
export function installCors(app: FastifyInstance, deps: CorsDeps): void {
  const hostOrganization = async (request: FastifyRequest) => {
    const address = addressOf(hostOf(request, deps.trustProxy), deps.baseDomain);
    if (address.kind !== 'organization' || !address.slug) return { bare: address.kind === 'bare', org: null };
    return { bare: false, org: await deps.organizations.bySlug(address.slug) };
  };

  // Callback style (app.ts says why): only a preflight waits for anything.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    if (request.method !== 'OPTIONS') return done();
    // A preflight it answers is not passed on (done is not called once the answer is sent).
    preflight(request, reply).then((answered) => {
      if (!answered) done();
    }, done);
  });

  async function preflight(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const path = request.url.split('?')[0] ?? '/';
    const origin = headerOf(request, 'origin');
    const wanted = headerOf(request, 'access-control-request-method').toUpperCase();
    if (!isCorsPath(path) || !origin || !wanted) return false;
    const methods = deps.routes.methodsAt(path, { api: true }).filter((m) => m !== 'OPTIONS');
    if (methods.length === 0) return false; // no such endpoint: the ordinary 404
    // No credential travels with a preflight: on the bare host the origin must be allowed by some
    // organization; the actual answer is then readable only if the credential's organization allows it.
    const { bare, org } = await hostOrganization(request);
    const allowed = org ? (await deps.policy.allowedFor(org.id)).includes(origin) : bare ? await deps.policy.allowedAnywhere(origin) : false;
    reply.header('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    if (allowed) {
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Access-Control-Allow-Methods', methods.join(', '));
      reply.header('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
      reply.header('Access-Control-Max-Age', String(MAX_AGE_SECONDS));
    }
    reply.code(204).send();
    return true;
  }

  app.addHook('onSend', (request, reply, payload, done) => {
    const url = request.routeOptions.url;
    if (!url || !isCorsPath(url) || request.method === 'OPTIONS') return done(null, payload);
    reply.header('Vary', 'Origin');
    const origin = headerOf(request, 'origin');
    if (!origin) return done(null, payload);
    allowOrigin(request, reply, origin).then(() => done(null, payload), (e: Error) => done(e));
  });

  async function allowOrigin(request: FastifyRequest, reply: FastifyReply, origin: string): Promise<void> {
    // The organization the request resolved to; before that (an error of authentication), the one its
    // host names, or on the bare host the code sign-in's X-Org-Id.
    const orgId = request.tenant?.orgId ?? (await organizationOf(request, deps, { orgHeaderOnBareHost: true }).catch(() => null))?.id;
    if (orgId && (await deps.policy.allowedFor(orgId)).includes(origin)) {
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    }
  }
}
