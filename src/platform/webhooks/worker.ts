// The webhook worker: sends pending webhook_deliveries (written by recordEvent in the transaction of their
// change) as Standard Webhooks POSTs signed with the `standardwebhooks` library, and records the outcome.
// The outbox's claim pattern (FOR UPDATE SKIP LOCKED on the owner connection, a lease against a worker
// that dies), so several processes may share one PostgreSQL database; on PGlite it is an in-process loop.
//
// - A 2xx within 10 s is delivered; anything else is retried after 30 s, 1 min, 2 min ... (doubling,
//   at most 12 h apart) until 3 days after the event; then the delivery fails and, unless the endpoint
//   delivered anything since that event, the endpoint is disabled and the organization's owners emailed.
// - The endpoint backs off too (migration 0031): after a failed attempt it is not tried again before its
//   retry_at (the same 30 s, 1 min ... 12 h, by its consecutive failures), whatever its backlog, so a dead
//   receiver costs one attempt per period and not one per pending delivery (issue 34: 116,541 deliveries
//   to dead receivers kept the embedded store's one connection busy). A success clears it; an endpoint
//   failing for 3 days is disabled and its owners emailed. A test event or a manual retry wakes it.
// - Up to the endpoint's in_flight_limit attempts at once (migration 0080: 1 for a new endpoint, doubled by
//   each delivered attempt up to `maxPerEndpoint`, 16, back to 1 after a failure; counted across processes,
//   since the claim counts the endpoint's leased rows), and at most `maxInFlight` in all. A receiver that
//   answers is sent its backlog 16 at a time (one at a time it received at most one delivery per answer
//   time plus two statements: 105 deliveries/s to three endpoints, fewer than the writes made, issue 31);
//   a new or dead one gets one attempt at a time, and one answering in a second or more (SLOW_ANSWER_MS) has
//   its limit halved down to 1, so slow receivers hold few of the process's slots and never delay another
//   endpoint long; when slots are short each endpoint gets its first before any gets a second. Attempts of an endpoint start in its deliveries' order (due time, then id);
//   with several in flight they may arrive out of it (docs/api.md says so). Requests never wait for it.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Database } from '../db/types.js';
import { uuidv7 } from '../ids.js';
import { guardedLookup, isForbiddenAddress, isOwnHost, type AddressPolicy } from './address-guard.js';
import type { SecretBox } from './secrets.js';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** Deliveries are retried until this long after their event, then given up. */
export const RETRY_WINDOW_MS = 3 * 24 * 3_600_000;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 12 * 3_600_000;
/** A claimed delivery is offered again after this long if its worker died while sending it. */
const LEASE_MS = 60_000;
/** Attempts in flight to one endpoint at most, once it delivers (its in_flight_limit grows to this). */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 16;
/**
 * An answer this slow (or slower) halves the endpoint's limit instead of doubling it: a slow receiver is sent
 * one attempt at a time, so a few of them cannot hold the process's slots for seconds each.
 */
export const SLOW_ANSWER_MS = 1000;

/** Wait after the nth failed attempt: 30 s, 1 min, 2 min, 4 min ... at most 12 h. */
export function webhookRetryDelayMs(attempt: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
}

export interface WebhookWorkerDeps {
  db: Database;
  clock: Clock;
  secrets: SecretBox;
  policy: AddressPolicy;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  timeoutMs?: number;
  /** Attempts in flight in this process at most (default 64). */
  maxInFlight?: number;
  /** Attempts in flight to one endpoint at most (default MAX_IN_FLIGHT_PER_ENDPOINT). */
  maxPerEndpoint?: number;
  /** A delivered attempt that took this long or longer halves its endpoint's limit (default SLOW_ANSWER_MS). */
  slowAnswerMs?: number;
  intervalMs?: number;
}

export interface WebhookRun {
  delivered: number;
  retrying: number;
  failed: number;
}

export interface WebhookWorker {
  /** Claims what is due (each endpoint's in_flight_limit) and waits for those attempts: what tests call. */
  runOnce(): Promise<WebhookRun>;
  /** Polls every intervalMs; attempts run in the background, in_flight_limit per endpoint, maxInFlight in all. */
  start(): void;
  /** Stops polling, aborts the attempts in flight (they are retried later) and waits for them. */
  stop(): Promise<void>;
}

interface Claimed {
  org_id: string;
  id: string;
  endpoint_id: string;
  attempts: number;
  created_at: Date;
  url: string;
  secret: string;
  event_id: string;
  type: string;
  data: unknown;
  event_created_at: Date;
  slug: string;
}

interface Outcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** The worker stopped (the process shuts down) before the answer: no fault of the endpoint's. */
  stopped?: boolean;
  /** When the attempt was sent, and how long until its answer (or failure). */
  startedAt?: Date;
  durationMs?: number;
}

/**
 * The attempt's row in webhook_attempts (the delivery log keeps every attempt), as a CTE of the statement
 * that records it on the delivery: `$1` org, `$2` delivery, `$status` and `$error` as that statement
 * has them, then four parameters from `$first` on: attempt number, endpoint, start, duration.
 */
// The attempt is logged for the delivery row the statement's UPDATE changed (`changed`, its RETURNING):
// that UPDATE holds the row, so a DELETE of the endpoint (and its deliveries) cannot remove it before the
// log's foreign key is checked; a delivery deleted while its attempt was in flight updates nothing and
// logs nothing. (Logged beside the UPDATE without it, the insert failed with 23503 and the worker's
// record with it: found by the concurrent fuzzer, issue 34.)
const logAttempt = (status: number, error: number, first: number): string =>
  `log as (
    insert into webhook_attempts (org_id, delivery_id, attempt, endpoint_id, attempted_at, duration_ms, response_status, error)
    select changed.org_id, changed.id, $${first}::int, $${first + 1}::uuid, $${first + 2}::timestamptz, $${first + 3}::int, $${status}::int, $${error}::text
      from changed
    on conflict do nothing)`;

interface DeliveredAttempt {
  d: Claimed;
  status: number;
  startedAt: Date;
  durationMs: number;
}

/** How long a delivered attempt waits for others to share its statement (when none is on its way). */
const RECORD_BATCH_MS = 2;

/**
 * Runs `flush` on what `add` was given, many at a time: one flush at a time, the first `waitMs` after the
 * first item (or at once after the previous flush, for what came meanwhile). Each `add` settles with its flush.
 */
function batcher<T>(waitMs: number, flush: (batch: T[]) => Promise<void>): { add(item: T): Promise<void> } {
  let queue: { item: T; done: () => void; fail: (err: unknown) => void }[] = [];
  let busy = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = async () => {
    timer = null;
    busy = true;
    const batch = queue;
    queue = [];
    try {
      await flush(batch.map((q) => q.item));
      for (const q of batch) q.done();
    } catch (err) {
      for (const q of batch) q.fail(err);
    } finally {
      busy = false;
      if (queue.length > 0) void run();
    }
  };
  return {
    add(item) {
      return new Promise<void>((done, fail) => {
        queue.push({ item, done, fail });
        if (!busy && !timer) timer = setTimeout(() => void run(), waitMs);
      });
    },
  };
}

export function createWebhookWorker(deps: WebhookWorkerDeps): WebhookWorker {
  const { db, clock, secrets, policy, log } = deps;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const maxInFlight = deps.maxInFlight ?? 64;
  const maxPerEndpoint = deps.maxPerEndpoint ?? MAX_IN_FLIGHT_PER_ENDPOINT;
  const slowAnswerMs = deps.slowAnswerMs ?? SLOW_ANSWER_MS;
  const intervalMs = deps.intervalMs ?? 1000;
  const lookup = guardedLookup(policy);
  const inFlight = new Set<Promise<unknown>>();
  const aborts = new Set<AbortController>();

  // The oldest due deliveries of each enabled endpoint, as many as its in_flight_limit leaves free (its
  // leased rows count, whichever process holds them); when the process's free slots are fewer, every
  // endpoint's first turn before any endpoint's second, oldest first within a turn. The claim moves next_attempt_at to the
  // lease's end: a worker that waited on the row lock re-checks the row after the claim commits and finds
  // it no longer due (without that it would send it again). Returned in the order they are to start.
  async function claim(now: Date, limit: number): Promise<Claimed[]> {
    if (limit <= 0) return [];
    return db.system.query<Claimed>(
      `with ready as (
         select e.org_id, e.id,
                least(e.in_flight_limit, $4::int) - (select count(*) from webhook_deliveries b
                   where b.org_id = e.org_id and b.endpoint_id = e.id and b.in_flight_until > $1::timestamptz) as free
           from webhook_endpoints e
          where e.enabled and (e.retry_at is null or e.retry_at <= $1::timestamptz)
       ), picked as (
         select d.org_id, d.id, d.next_attempt_at,
                row_number() over (partition by e.org_id, e.id order by d.next_attempt_at, d.id) as turn
           from ready e
         cross join lateral (
           select d.org_id, d.id, d.next_attempt_at from webhook_deliveries d
            where d.org_id = e.org_id and d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= $1::timestamptz
            order by d.next_attempt_at, d.id limit greatest(e.free, 0)
            for update skip locked
         ) d
         where e.free > 0
         order by turn, d.next_attempt_at, d.id
         limit $2::int
       ), claimed as (
         update webhook_deliveries d set attempts = d.attempts + 1, in_flight_until = $3::timestamptz, next_attempt_at = $3::timestamptz,
                last_attempt_at = $1::timestamptz
           from picked where d.org_id = picked.org_id and d.id = picked.id
         returning d.org_id, d.id, d.endpoint_id, d.event_id, d.attempts, d.created_at
       )
       select c.org_id, c.id, c.endpoint_id, c.attempts, c.created_at, e.url, e.secret,
              ev.id as event_id, ev.type, ev.data, ev.created_at as event_created_at, o.slug
         from claimed c
         join picked p on p.org_id = c.org_id and p.id = c.id
         join webhook_endpoints e on e.org_id = c.org_id and e.id = c.endpoint_id
         join webhook_events ev on ev.org_id = c.org_id and ev.id = c.event_id
         join organizations o on o.id = c.org_id
        order by p.next_attempt_at, p.id`,
      [now, limit, new Date(now.getTime() + LEASE_MS), maxPerEndpoint],
    );
  }

  // Connections to receivers are kept open and reused (a fresh TCP connection per attempt was a fifth of
  // the worker's CPU per delivery: 800 -> 650 µs measured). The address guard runs when a connection is
  // made, as before. A reused connection the receiver closed while idle fails as the request is written;
  // that attempt is sent again once on a new connection (`fresh`), so an idle timeout is no failure.
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

  function post(d: Claimed, body: string, headers: Record<string, string>, abort: AbortController, fresh = false): Promise<Outcome> {
    return new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(d.url);
      } catch {
        return resolve({ ok: false, status: null, error: 'the endpoint URL is not valid' });
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!policy.allowPrivate && (isOwnHost(url.hostname, policy) || (isIP(host) && isForbiddenAddress(host)))) {
        return resolve({ ok: false, status: null, error: 'the endpoint URL points at an address webhooks may not reach' });
      }
      let settled = false;
      const finish = (o: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
      const client = url.protocol === 'https:' ? https : http;
      let answered = false;
      const req = client.request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Assent-Webhooks/1' },
          lookup: lookup as never,
          signal: abort.signal,
          agent: fresh ? false : url.protocol === 'https:' ? agents.https : agents.http,
        },
        (res) => {
          answered = true;
          const status = res.statusCode ?? 0;
          // The answer's body is not kept; reading it lets the socket close cleanly.
          res.resume();
          res.on('end', () => finish({ ok: status >= 200 && status < 300, status, error: status >= 200 && status < 300 ? null : `answered ${status}` }));
          res.on('error', () => finish({ ok: false, status, error: `answered ${status}, then the connection failed` }));
        },
      );
      const timer = setTimeout(() => {
        finish({ ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` });
        req.destroy();
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (!settled && !abort.signal.aborted && !answered && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
          settled = true;
          clearTimeout(timer);
          return resolve(post(d, body, headers, abort, true));
        }
        finish(
          abort.signal.aborted
            ? { ok: false, status: null, error: 'the worker stopped before an answer', stopped: true }
            : { ok: false, status: null, error: `request failed: ${err.code ?? err.message}` },
        );
      });
      req.end(body);
    });
  }

  async function attempt(d: Claimed): Promise<'delivered' | 'retrying' | 'failed'> {
    const body = JSON.stringify({
      id: d.event_id,
      type: d.type,
      created_at: new Date(d.event_created_at).toISOString(),
      organization: { id: d.org_id, slug: d.slug },
      data: d.data,
    });
    let outcome: Outcome;
    const abort = new AbortController();
    aborts.add(abort);
    const startedAt = clock.now();
    const started = performance.now();
    try {
      // The signature's timestamp is the attempt's time (the library signs id.timestamp.body).
      const timestamp = clock.now();
      const signature = new Webhook(secrets.open(d.secret)).sign(d.event_id, timestamp, body);
      const headers = { 'webhook-id': d.event_id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
      outcome = await post(d, body, headers, abort);
    } catch (err) {
      outcome = { ok: false, status: null, error: (err as Error).message };
    } finally {
      aborts.delete(abort);
    }
    return record(d, { ...outcome, startedAt, durationMs: Math.round(performance.now() - started) });
  }

  // Delivered attempts are recorded together: those that end while a statement is on its way (or within
  // RECORD_BATCH_MS of the first) share the next one. One statement per delivery was most of the worker's
  // cost on the store; on the embedded store's one connection it competed with every request.
  const delivered = batcher<DeliveredAttempt>(RECORD_BATCH_MS, async (batch) => {
    await db.system.query(
      `with done as (
         select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], $5::timestamptz[], $6::int[], $7::int[])
           as t (org_id, id, attempt, endpoint_id, started_at, duration_ms, status)
       ), changed as (
         update webhook_deliveries d set status = 'delivered', delivered_at = $8::timestamptz, in_flight_until = null,
                last_response_status = done.status, last_error = null
           from done where d.org_id = done.org_id and d.id = done.id
         returning d.org_id, d.id, done.attempt, done.endpoint_id, done.started_at, done.duration_ms, done.status
       ), log as (
         insert into webhook_attempts (org_id, delivery_id, attempt, endpoint_id, attempted_at, duration_ms, response_status, error)
         select org_id, id, attempt, endpoint_id, started_at, duration_ms, status, null from changed
         on conflict do nothing
       ), endpoint as (
         -- Doubled by each quick answer, halved (once per statement) when one was slow.
         update webhook_endpoints e set failures = 0, failing_since = null, retry_at = null,
                in_flight_limit = case when n.slow > 0 then greatest(e.in_flight_limit / 2, 1)
                                       else least(e.in_flight_limit::bigint * power(2, least(n.quick, 20))::bigint, $9::int) end
           from (select org_id, endpoint_id, count(*) filter (where duration_ms < $10::int)::int as quick,
                        count(*) filter (where duration_ms >= $10::int)::int as slow
                   from done group by org_id, endpoint_id) n
          where e.org_id = n.org_id and e.id = n.endpoint_id
            and (e.failures > 0 or e.retry_at is not null
                 or (n.slow = 0 and e.in_flight_limit < $9::int) or (n.slow > 0 and e.in_flight_limit > 1))
       )
       select count(*) from changed`,
      [
        batch.map((a) => a.d.org_id),
        batch.map((a) => a.d.id),
        batch.map((a) => a.d.attempts),
        batch.map((a) => a.d.endpoint_id),
        batch.map((a) => a.startedAt.toISOString()),
        batch.map((a) => a.durationMs),
        batch.map((a) => a.status),
        clock.now(),
        maxPerEndpoint,
        slowAnswerMs,
      ],
    );
  });

  async function record(d: Claimed, o: Outcome): Promise<'delivered' | 'retrying' | 'failed'> {
    const now = clock.now();
    const error = o.error?.slice(0, 500) ?? null;
    // The attempt's number, endpoint, start and duration (logAttempt).
    const logged = [d.attempts, d.endpoint_id, o.startedAt ?? now, o.durationMs ?? 0];
    if (o.ok) {
      await delivered.add({ d, status: o.status ?? 200, startedAt: o.startedAt ?? now, durationMs: o.durationMs ?? 0 });
      return 'delivered';
    }
    log.warn({ delivery_id: d.id, endpoint_id: d.endpoint_id, attempt: d.attempts, error }, 'webhook delivery failed');
    const next = new Date(now.getTime() + webhookRetryDelayMs(d.attempts));
    // The endpoint's own back-off: its nth consecutive failure keeps it untried for webhookRetryDelayMs(n),
    // and it is sent one attempt at a time again. Only a failure of an attempt started while the endpoint
    // was not backing off counts: the other attempts in flight with it when a receiver goes down fail
    // too, and counted they would have backed it off 2^16 times as long at once. Attempts cut short by
    // stop() (up to 16 per endpoint at a shutdown) are retried but do not back the endpoint off.
    const [endpoint] = o.stopped ? [] : await db.system.query<{ failing_since: Date }>(
      `update webhook_endpoints set failures = failures + 1, failing_since = coalesce(failing_since, $3::timestamptz),
              retry_at = $3::timestamptz + least($4::bigint * power(2, least(failures, 20))::bigint, $5::bigint) * interval '1 millisecond',
              in_flight_limit = 1
        where org_id = $1::uuid and id = $2::uuid and (retry_at is null or retry_at <= $6::timestamptz)
        returning failing_since`,
      [d.org_id, d.endpoint_id, now, FIRST_RETRY_MS, MAX_RETRY_MS, o.startedAt ?? now],
    );
    if (next.getTime() <= new Date(d.created_at).getTime() + RETRY_WINDOW_MS) {
      await db.system.query(
        `with changed as (
           update webhook_deliveries set next_attempt_at = $3::timestamptz, in_flight_until = null, last_response_status = $4::int, last_error = $5::text
            where org_id = $1::uuid and id = $2::uuid
            returning org_id, id
         ), ${logAttempt(4, 5, 6)}
         select count(*) from changed`,
        [d.org_id, d.id, next, o.status, error, ...logged],
      );
      if (endpoint && now.getTime() - new Date(endpoint.failing_since).getTime() >= RETRY_WINDOW_MS) await disableFailing(d, error ?? 'failed', now);
      return 'retrying';
    }
    await giveUp(d, o.status, error ?? 'failed', now, logged);
    return 'failed';
  }

  // The endpoint has failed every attempt for 3 days (whatever its deliveries' ages): disabled, owners told.
  async function disableFailing(d: Claimed, error: string, now: Date): Promise<void> {
    await db.system.transaction(async (tx) => {
      const disabled = await tx.query<{ url: string }>(
        `update webhook_endpoints e set enabled = false, disabled_at = $3::timestamptz, updated_at = $3::timestamptz,
                disabled_reason = 'Deliveries failed for 3 days'
          where e.org_id = $1::uuid and e.id = $2::uuid and e.enabled and e.failing_since <= $3::timestamptz - $4::bigint * interval '1 millisecond'
          returning e.url`,
        [d.org_id, d.endpoint_id, now, RETRY_WINDOW_MS],
      );
      if (disabled.length > 0) await tellOwners(tx, d, disabled[0]!.url, error, now);
    });
  }

  // The delivery fails; the endpoint is disabled (and its owners emailed) when it has delivered nothing
  // since this delivery's event: 3 days of failures. One transaction, so the email goes with the change.
  async function giveUp(d: Claimed, status: number | null, error: string, now: Date, logged: unknown[]): Promise<void> {
    await db.system.transaction(async (tx) => {
      await tx.query(
        `with changed as (
           update webhook_deliveries set status = 'failed', in_flight_until = null, last_response_status = $3::int, last_error = $4::text
            where org_id = $1::uuid and id = $2::uuid
            returning org_id, id
         ), ${logAttempt(3, 4, 5)}
         select count(*) from changed`,
        [d.org_id, d.id, status, error, ...logged],
      );
      const disabled = await tx.query<{ url: string }>(
        `update webhook_endpoints e set enabled = false, disabled_at = $3::timestamptz, updated_at = $3::timestamptz,
                disabled_reason = 'Deliveries failed for 3 days'
          where e.org_id = $1::uuid and e.id = $2::uuid and e.enabled
            and not exists (select 1 from webhook_deliveries x where x.org_id = e.org_id and x.endpoint_id = e.id
                             and x.status = 'delivered' and x.delivered_at >= $4::timestamptz)
          returning e.url`,
        [d.org_id, d.endpoint_id, now, d.created_at],
      );
      if (disabled.length > 0) await tellOwners(tx, d, disabled[0]!.url, error, now);
    });
  }

  async function tellOwners(tx: { query: Database['system']['query'] }, d: Claimed, url: string, error: string, now: Date): Promise<void> {
    log.warn({ endpoint_id: d.endpoint_id, org_id: d.org_id }, 'webhook endpoint disabled after 3 days of failed deliveries');
    const text =
      `Assent disabled the webhook endpoint ${url} of organization ${d.slug}: its deliveries failed for 3 days ` +
      `(last error: ${error}). Events are no longer sent to it. Fix the receiver, then enable it again in Settings → Webhooks ` +
      `or with PATCH /api/v1/webhooks/${d.endpoint_id} {"enabled": true}.`;
    const owners = await tx.query<{ email: string }>(
      `select u.email from memberships m join users u on u.id = m.user_id where m.org_id = $1::uuid and m.role = 'owner' order by u.email`,
      [d.org_id],
    );
    for (const owner of owners) {
      await tx.query(
        `insert into outbound_messages (org_id, id, channel, recipient, body, status, next_attempt_at, created_at)
         values ($1::uuid, $2::uuid, 'email', $3::text, $4::text, 'queued', $5::timestamptz, $5::timestamptz)`,
        [d.org_id, uuidv7(), owner.email, text, now],
      );
    }
  }

  function track<T>(p: Promise<T>): Promise<T> {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  async function runOnce(): Promise<WebhookRun> {
    const claimed = await claim(clock.now(), maxInFlight - inFlight.size);
    const outcomes = await Promise.all(claimed.map((d) => track(attempt(d))));
    return {
      delivered: outcomes.filter((o) => o === 'delivered').length,
      retrying: outcomes.filter((o) => o === 'retrying').length,
      failed: outcomes.filter((o) => o === 'failed').length,
    };
  }

  let running = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let polling: Promise<unknown> | null = null;
  let soon = false;

  function schedule(delay: number) {
    if (!running) return;
    if (polling) {
      if (delay === 0) soon = true;
      return;
    }
    if (timer) {
      if (delay > 0) return;
      clearTimeout(timer);
    }
    timer = setTimeout(poll, delay);
  }

  function poll() {
    timer = null;
    const limit = maxInFlight - inFlight.size;
    polling = claim(clock.now(), limit)
      .then(
        (claimed) => {
          if (claimed.length > 0 && claimed.length === limit) soon = true;
          for (const d of claimed) {
            // When an attempt ends its endpoint may have more due: look again at once.
            void track(attempt(d)).then(
              () => schedule(0),
              (err: unknown) => log.error({ err, delivery_id: d.id }, 'webhook worker: recording an attempt failed'),
            );
          }
        },
        (err: unknown) => log.error({ err }, 'webhook worker: claim failed'),
      )
      .finally(() => {
        polling = null;
        const again = soon;
        soon = false;
        schedule(again ? 0 : intervalMs);
      });
  }

  return {
    runOnce,
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await polling;
      for (const a of aborts) a.abort();
      await Promise.allSettled([...inFlight]);
      // Idle kept-alive connections are closed (a started worker opens them again as needed).
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
