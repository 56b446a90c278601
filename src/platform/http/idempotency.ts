// Idempotency-Key on creating POSTs (contract §9). A route opts in with route config `idempotent: true`;
// this file holds the whole rule, so no route writes it again.
//
// A request with a key runs inside one tenant transaction that this file opens before the handler and
// ends after the answer is serialized: every tenant transaction the handler's services open for the
// same organization (withTenant, withPrincipal, tenantReads: all go through Database) joins it as a
// savepoint, and the answer is written to idempotency_keys in that same transaction just before it
// commits. So the key is stored exactly when the change is, on both stores, and a change that failed
// (any answer but a 2xx) stores nothing and may be sent again with the same key.
//
// In flight: a second request with the key while the first runs gets 409, from a set in this process
// and, across processes, from a transaction-scoped advisory lock on (organization, key) taken by the
// first statement of the transaction (PGlite is one process, where the set is the whole story).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler, RouteOptions } from 'fastify';
import type { Clock } from '../clock.js';
import type { Database, Queryable } from '../db/types.js';
import { AppError } from './errors.js';
import { sha256Hex } from '../crypto/opaque-tokens.js';
import { createIntervalJob } from '../jobs.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Takes `Idempotency-Key` (a POST that creates something; its answer holds no secret). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: IdempotentRequest | null;
  }
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The request's own transaction, which the handler's tenant work joins. */
interface IdempotentRequest {
  readonly orgId: string;
  readonly key: string;
  readonly hash: string;
  readonly tx: Queryable;
  /** Ends the transaction: commit (after `last`) or roll back. */
  finish(commit: boolean, last?: (tx: Queryable) => Promise<void>): Promise<void>;
  open: boolean;
  /** Joined work runs one piece at a time (savepoints nest in order). */
  queue: Promise<unknown>;
  savepoints: number;
}

const current = new AsyncLocalStorage<IdempotentRequest>();

/** The idempotent request a tenant use for `orgId` should join, if one is running here. */
function joining(orgId: string): IdempotentRequest | null {
  const scope = current.getStore();
  return scope && scope.open && scope.orgId === orgId ? scope : null;
}

/** Runs fn in the request's transaction as a savepoint: a failure undoes fn's statements only, as its own transaction would have. */
function joined<T>(scope: IdempotentRequest, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  const run = async () => {
    const name = `assent_sp_${++scope.savepoints}`;
    // SAVEPOINT leaves with fn's first statements and RELEASE with whatever comes next (the next piece,
    // or the key's insert and COMMIT): no round trip of their own. Statements on one connection run in
    // the order sent, so fn's run inside the savepoint; if SAVEPOINT failed, so do they (and fn throws),
    // and a failed RELEASE aborts the transaction, whose COMMIT the store then refuses.
    const opened = scope.tx.query(`savepoint ${name}`);
    opened.catch(() => {});
    try {
      const result = await fn(scope.tx);
      await opened;
      scope.tx.query(`release savepoint ${name}`).catch(() => {});
      return result;
    } catch (e) {
      await scope.tx.query(`rollback to savepoint ${name}`).catch(() => {});
      throw e;
    }
  };
  const next = scope.queue.then(run, run);
  scope.queue = next.catch(() => {});
  return next;
}

/**
 * The Database the app's services use: the same, except that inside an idempotent request the tenant
 * work of that request's organization runs in the request's transaction.
 */
export function idempotencyAwareDatabase(db: Database): Database {
  return {
    ...db,
    kind: db.kind,
    system: db.system,
    tenantTransaction(orgId, fn) {
      const scope = joining(orgId);
      return scope ? joined(scope, fn) : db.tenantTransaction(orgId, fn);
    },
    tenantQuery(orgId, text, params) {
      const scope = joining(orgId);
      return scope ? joined(scope, (tx) => tx.query(text, params)) : db.tenantQuery(orgId, text, params);
    },
    close: () => db.close(),
  };
}

const rollbackOnly = Symbol('rollback');

/** Opens a tenant transaction that stays open until finish() is called. */
async function openTransaction(db: Database, orgId: string): Promise<Pick<IdempotentRequest, 'tx' | 'finish'>> {
  let decide!: (d: { commit: boolean; last?: (tx: Queryable) => Promise<void> }) => void;
  const decided = new Promise<{ commit: boolean; last?: (tx: Queryable) => Promise<void> }>((resolve) => (decide = resolve));
  let ready!: (tx: Queryable) => void;
  const opened = new Promise<Queryable>((resolve) => (ready = resolve));
  let lastStatement: Promise<void> | null = null;
  const done = db.tenantTransaction(orgId, async (tx) => {
    ready(tx);
    const { commit, last } = await decided;
    if (!commit) throw rollbackOnly;
    // Not waited for: it leaves with COMMIT. If it fails, the transaction is aborted and COMMIT is
    // refused (the store's tenantTransaction checks that COMMIT committed), so the change is not stored
    // without its key; finish() then throws the statement's own error.
    if (last) {
      lastStatement = last(tx);
      lastStatement.catch(() => {});
    }
  });
  const tx = await Promise.race([opened, done.then(() => Promise.reject(new Error('transaction ended before it opened')))]);
  return {
    tx,
    async finish(commit, last) {
      decide({ commit, last });
      try {
        await done;
      } catch (e) {
        if (e === rollbackOnly) return;
        await lastStatement;
        throw e;
      }
      await lastStatement;
    },
  };
}

/**
 * The key's lock and its stored answer, in one statement (the request's first): $1 organization, $2 key,
 * $3 the oldest creation time still honoured. Exported for the benchmark's baseline (bench/baseline.ts),
 * which runs the same statements bare.
 */
export const IDEMPOTENCY_LOOKUP = `select pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 0)) as locked,
                  k.request_hash, k.status_code, k.body
             from (select 1) one
             left join idempotency_keys k on k.org_id = $1::uuid and k.key = $2::text and k.created_at > $3::timestamptz`;

/** The answer stored with the change: $1 organization, $2 key, $3 request hash, $4 status, $5 body, $6 now, $7 the expiry cut-off. */
export const IDEMPOTENCY_STORE = `insert into idempotency_keys (org_id, key, request_hash, status_code, body, created_at)
           values ($1::uuid, $2::text, $3::text, $4::int, $5::text, $6::timestamptz)
           on conflict (org_id, key) do update
              set request_hash = excluded.request_hash, status_code = excluded.status_code, body = excluded.body, created_at = excluded.created_at
            where idempotency_keys.created_at <= $7::timestamptz`;

/** Object keys sorted, so the same JSON body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function requestHash(request: FastifyRequest): string {
  return idempotencyRequestHash(request.method, request.url, request.body);
}

/** What a key is bound to: the method, the URL and the body (its keys in any order). */
export function idempotencyRequestHash(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${url}\n${canonical(body)}`).digest('hex');
}

function keyHeader(request: FastifyRequest): string | undefined {
  const v = request.headers['idempotency-key'];
  return Array.isArray(v) ? v[0] : v;
}

export interface IdempotencyDeps {
  /** The store itself (not the idempotency-aware wrapper): the request's transaction is opened on it. */
  db: Database;
  clock: Clock;
}

/**
 * The key as stored: a data principal's keys are theirs alone (two people of one organization sending
 * the same key and body must not get each other's answer), so theirs is a hash of their dp_id and the
 * key (67 characters, within the column's 255).
 */
function scopedKey(tenant: NonNullable<FastifyRequest['tenant']>, key: string): string {
  if (tenant.actor.type === 'nominee') return `nominee:${sha256Hex(`${tenant.actor.id}\n${tenant.actor.dpId}\n${key}`)}`;
  return tenant.actor.type === 'data_principal' ? `dp:${sha256Hex(`${tenant.actor.dpId}\n${key}`)}` : key;
}

/**
 * Installs the rule for every route registered after it whose config says `idempotent: true`.
 * Must run after the access hook is installed (the organization comes from `request.tenant`).
 */
export function installIdempotency(app: FastifyInstance, { db, clock }: IdempotencyDeps): void {
  app.decorateRequest('idempotency', null);
  // Requests running here, by organization and key: a repeat while one runs is a 409 at once.
  const running = new Set<string>();

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const key = keyHeader(request);
    if (key === undefined) return;
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 'Invalid request headers: Idempotency-Key must be 1-255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' },
      ]);
    }
    const tenant = request.tenant;
    if (!tenant) throw new Error(`idempotent route ${request.routeOptions.url} has no tenant context`);
    return beginScoped(request, reply, tenant, scopedKey(tenant, key));
  }

  async function beginScoped(request: FastifyRequest, reply: FastifyReply, tenant: NonNullable<FastifyRequest['tenant']>, key: string): Promise<FastifyReply | undefined> {
    const slot = `${tenant.orgId}\n${key}`;
    if (running.has(slot)) throw inFlight();
    running.add(slot);
    let release = true;
    try {
      const hash = requestHash(request);
      const transaction = await openTransaction(db, tenant.orgId);
      const cutoff = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
      let first: { locked: boolean; request_hash: string | null; status_code: number | null; body: string | null } | undefined;
      try {
        [first] = await transaction.tx.query<{ locked: boolean; request_hash: string | null; status_code: number | null; body: string | null }>(
          IDEMPOTENCY_LOOKUP,
          [tenant.orgId, key, cutoff],
        );
      } catch (e) {
        await transaction.finish(false).catch(() => {});
        throw e;
      }
      if (!first?.locked || first.request_hash !== null) {
        await transaction.finish(false);
        if (!first?.locked) throw inFlight();
        if (first.request_hash !== hash) {
          throw new AppError('idempotency_key_reused', 'Idempotency-Key was already used with another request body');
        }
        return reply
          .code(first.status_code!)
          .header('idempotent-replayed', 'true')
          .type('application/json; charset=utf-8')
          .send(first.body);
      }
      request.idempotency = { orgId: tenant.orgId, key, hash, ...transaction, open: true, queue: Promise.resolve(), savepoints: 0 };
      release = false;
      return;
    } finally {
      if (release) running.delete(slot);
    }
  }

  /** Ends the request's transaction: a 2xx answer is stored with the change and committed; anything else rolls back. */
  async function end(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const scope = request.idempotency;
    if (!scope?.open) return;
    scope.open = false;
    try {
      // Joined work still running (a handler that answered early) finishes first.
      await scope.queue;
      const status = reply.statusCode;
      if (status < 200 || status > 299) return await scope.finish(false);
      const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : JSON.stringify(payload ?? null);
      const at = clock.now();
      const cutoff = new Date(at.getTime() - IDEMPOTENCY_TTL_MS);
      await scope.finish(true, async (tx) => {
        await tx.query(
          IDEMPOTENCY_STORE,
          [scope.orgId, scope.key, scope.hash, status, body, at, cutoff],
        );
      });
    } finally {
      running.delete(`${scope.orgId}\n${scope.key}`);
    }
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.idempotent) return;
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      const scope = request.idempotency;
      return scope ? current.run(scope, () => handler.call(this, request, reply)) : handler.call(this, request, reply);
    };
    // Callback style: a request without the header pays no promise (app.ts says why). A replayed answer
    // is sent by begin, and then the request goes no further (done is not called).
    const beginHook: preHandlerHookHandler = (request, reply, done) => {
      if (keyHeader(request) === undefined) return done();
      begin(request, reply).then((replayed) => {
        if (replayed === undefined) done();
      }, done);
    };
    route.preHandler = [...[route.preHandler ?? []].flat(), beginHook];
    // onSend sees the status and the serialized answer, and runs before anything is written.
    const endHook: onSendHookHandler = (request, reply, payload, done) => {
      if (!request.idempotency?.open) return done(null, payload);
      end(request, reply, payload).then(() => done(null, payload), (e: Error) => done(e));
    };
    route.onSend = [...[route.onSend ?? []].flat(), endHook];
    // Whatever happened, a transaction still open when the answer has gone is rolled back.
    const closeHook: onResponseHookHandler = (request, _reply, done) => {
      const scope = request.idempotency;
      if (!scope?.open) return done();
      scope.open = false;
      running.delete(`${scope.orgId}\n${scope.key}`);
      scope.finish(false).catch(() => {}).then(() => done());
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), closeHook];
  });
}

function inFlight(): AppError {
  return new AppError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still being processed: retry later');
}

/** Deletes keys older than 24 hours, a batch at a time; several processes may run it at once. */
export async function purgeExpiredIdempotencyKeys(db: Database, now: Date, batch = 1000): Promise<number> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
  let total = 0;
  for (;;) {
    const rows = await db.system.query<{ n: number }>(
      `with old as (
         select org_id, key from idempotency_keys where created_at <= $1::timestamptz
          order by created_at limit $2::int for update skip locked
       ), gone as (
         delete from idempotency_keys k using old where k.org_id = old.org_id and k.key = old.key returning 1
       )
       select count(*)::int as n from gone`,
      [cutoff, batch],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batch) return total;
  }
}

export interface IdempotencyPurge {
  runOnce(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/** The periodic purge (hourly by default); main.ts starts it, app.close() stops it. */
export function createIdempotencyPurge(db: Database, clock: Clock, log: { error(o: object, m: string): void }, intervalMs = 60 * 60 * 1000): IdempotencyPurge {
  const runOnce = async () => {
    const purged = await purgeExpiredIdempotencyKeys(db, clock.now());
    // The same hourly sweep drops the bare host's directory of expired data principals' tokens (migration 0017).
    await db.system.query('delete from dp_token_orgs where expires_at < $1', [new Date(clock.now().getTime() - 60 * 60 * 1000)]);
    return purged;
  };
  return { runOnce, ...createIntervalJob({ name: 'idempotency key purge', run: runOnce, intervalMs, log }) };
}
