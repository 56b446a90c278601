// Rate limits on the tenant API (contract §9): per API key (the organization's limit, default
// RATE_LIMIT_PER_KEY, 500 per 60 s) and per client address (RATE_LIMIT_PER_ADDRESS), counted by
// rate-limiter-flexible: in this process's memory, or in Redis when REDIS_URL is set so every process
// of a deployment shares the counts. Every tenant answer carries RateLimit-Limit/-Remaining/-Reset
// (the key's counter when an API key was used, else the address's); over the limit: 429 rate_limited
// with Retry-After. Public routes (login, the consent page, health) are not counted here: login and
// sign-in codes have their own limits.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Clock } from '../clock.js';
import type { Database } from '../db/types.js';
import { AppError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: never counted (the default for public routes). */
    rateLimit?: boolean;
  }
}

export interface RateLimitOptions {
  db: Database;
  clock: Clock;
  redisUrl: string | null;
  /** REDIS_KEY_PREFIX (default `assent:`): namespaces the counters in a shared Redis. */
  redisPrefix: string;
  perKey: number;
  perAddress: number;
  windowSeconds: number;
  log: { warn(o: object, m: string): void };
}

export interface RateLimits {
  /** Whether a route is counted (and so documents 429 and the RateLimit-* headers). */
  counts(route: Pick<RouteOptions, 'config'>): boolean;
  /** Drops a cached organization limit (after it was changed here). */
  forgetOrganization(orgId: string): void;
  close(): Promise<void>;
}

// The limiters count without a ceiling of their own; each request's limit is compared here, so one
// limiter serves organizations with different limits.
const UNBOUNDED = 2_000_000_000;
const ORG_LIMIT_TTL_MS = 30_000;

export function counts(route: Pick<RouteOptions, 'config'>): boolean {
  const config = route.config as { access?: unknown; rateLimit?: boolean } | undefined;
  if (config?.rateLimit !== undefined) return config.rateLimit;
  return config?.access !== undefined && config.access !== 'public';
}

/** Installs the two hooks: the address before the access hook (call before installAccessControl), the key after it. */
export function installRateLimits(app: FastifyInstance, options: RateLimitOptions): { afterAccess(): void; limits: RateLimits } {
  const redis = options.redisUrl ? new Redis(options.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }) : null;
  const limiter = (prefix: string): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${options.redisPrefix}rl:${prefix}`, points: UNBOUNDED, duration: options.windowSeconds })
      : new RateLimiterMemory({ keyPrefix: prefix, points: UNBOUNDED, duration: options.windowSeconds });
  const byKey = limiter('key');
  const byAddress = limiter('addr');

  const orgLimits = new Map<string, { limit: number; at: number }>();
  async function keyLimit(orgId: string): Promise<number> {
    const now = options.clock.now().getTime();
    const cached = orgLimits.get(orgId);
    if (cached && now - cached.at < ORG_LIMIT_TTL_MS) return cached.limit;
    const [row] = await options.db.system.query<{ api_rate_limit: number | null }>('select api_rate_limit from organizations where id = $1::uuid', [orgId]);
    const limit = row?.api_rate_limit ?? options.perKey;
    if (orgLimits.size > 10_000) orgLimits.clear();
    orgLimits.set(orgId, { limit, at: now });
    return limit;
  }

  /** Counts one request; sets the headers; 429 past the limit. A counter that cannot be reached lets the request through. */
  async function take(reply: FastifyReply, counter: RateLimiterAbstract, key: string, limit: number): Promise<void> {
    let res: RateLimiterRes;
    try {
      res = await counter.consume(key, 1);
    } catch (e) {
      if (e instanceof RateLimiterRes) res = e;
      else {
        options.log.warn({ err: e }, 'rate limit counter unavailable; request not counted');
        return;
      }
    }
    const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    reply.header('RateLimit-Limit', String(limit));
    reply.header('RateLimit-Remaining', String(Math.max(0, limit - res.consumedPoints)));
    reply.header('RateLimit-Reset', String(reset));
    if (res.consumedPoints > limit) {
      throw new AppError('rate_limited', 'Rate limit exceeded', undefined, { 'Retry-After': String(reset) });
    }
  }

  // Callback style: the routes that are not counted pay no promise (app.ts says why).
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    if (!counts(request.routeOptions)) return done();
    take(reply, byAddress, request.ip, options.perAddress).then(() => done(), done);
  });

  return {
    afterAccess() {
      app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
        const tenant = request.tenant;
        if (!counts(request.routeOptions) || tenant?.actor.type !== 'api_key') return done();
        const keyId = tenant.actor.id;
        keyLimit(tenant.orgId)
          .then((limit) => take(reply, byKey, keyId, limit))
          .then(() => done(), done);
      });
    },
    limits: {
      counts,
      forgetOrganization: (orgId) => void orgLimits.delete(orgId),
      async close() {
        if (redis) await redis.quit().catch(() => redis.disconnect());
      },
    },
  };
}
