// The outbox worker: delivers the queued rows of outbound_messages (written in the same transaction as
// the link or code they carry) through a MessageProvider, with retries and exponential backoff. One
// implementation for both stores: rows are claimed with FOR UPDATE SKIP LOCKED (several processes may
// poll one PostgreSQL database; on PGlite it is an in-process loop over the same table).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Database } from '../db/types.js';
import type { MessageProvider } from './provider.js';

/** Attempts before a message is marked failed. */
export const MAX_ATTEMPTS = 5;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 3_600_000;
/** A claimed message is offered again after this long if its worker died while sending. */
const LEASE_MS = 120_000;

/** Wait after the nth failed attempt: 30 s, 1 min, 2 min, 4 min ... capped at an hour. */
export function retryDelayMs(attempt: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
}

export interface OutboxWorkerDeps {
  db: Database;
  clock: Clock;
  provider: MessageProvider;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  batchSize?: number;
  intervalMs?: number;
}

export interface OutboxRun {
  sent: number;
  retrying: number;
  failed: number;
}

export interface OutboxWorker {
  /** Delivers one batch of due messages; what tests call instead of waiting for the loop. */
  runOnce(): Promise<OutboxRun>;
  /** Polls every intervalMs (at once again while batches come back full). */
  start(): void;
  /** Stops polling and waits for the batch in flight. */
  stop(): Promise<void>;
}

interface Claimed {
  org_id: string;
  id: string;
  channel: 'sms' | 'email';
  recipient: string | null;
  body: string | null;
  attempts: number;
}

export function createOutboxWorker({ db, clock, provider, log, batchSize = 20, intervalMs = 1000 }: OutboxWorkerDeps): OutboxWorker {
  async function claim(now: Date): Promise<Claimed[]> {
    return db.system.query<Claimed>(
      `with due as (
         select org_id, id from outbound_messages
          where status = 'queued' and next_attempt_at <= $1::timestamptz
          order by next_attempt_at
          limit $2::int
          for update skip locked
       )
       update outbound_messages m set attempts = m.attempts + 1, next_attempt_at = $3::timestamptz
         from due where m.org_id = due.org_id and m.id = due.id
       returning m.org_id, m.id, m.channel, m.recipient, m.body, m.attempts`,
      [now, batchSize, new Date(now.getTime() + LEASE_MS)],
    );
  }

  // Once delivered the body (it carries a link token or a code) and an email address are erased.
  async function markSent(m: Claimed): Promise<void> {
    await db.system.query(
      `update outbound_messages set status = 'sent', sent_at = $3::timestamptz, last_error = null, body = null,
              recipient = case when channel = 'email' then null else recipient end
        where org_id = $1::uuid and id = $2::uuid`,
      [m.org_id, m.id, clock.now()],
    );
  }

  async function markFailure(m: Claimed, error: string): Promise<'retrying' | 'failed'> {
    const final = m.attempts >= MAX_ATTEMPTS;
    const now = clock.now();
    await db.system.query(
      final
        ? `update outbound_messages set status = 'failed', last_error = $3::text, body = null,
                  recipient = case when channel = 'email' then null else recipient end
            where org_id = $1::uuid and id = $2::uuid`
        : `update outbound_messages set next_attempt_at = $4::timestamptz, last_error = $3::text where org_id = $1::uuid and id = $2::uuid`,
      final ? [m.org_id, m.id, error] : [m.org_id, m.id, error, new Date(now.getTime() + retryDelayMs(m.attempts))],
    );
    return final ? 'failed' : 'retrying';
  }

  async function deliver(m: Claimed): Promise<'sent' | 'retrying' | 'failed'> {
    if (m.recipient === null || m.body === null) return markFailure({ ...m, attempts: MAX_ATTEMPTS }, 'message has no recipient or body');
    try {
      await provider.send({ id: m.id, channel: m.channel, recipient: m.recipient, body: m.body });
    } catch (err) {
      const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      log.warn({ message_id: m.id, channel: m.channel, attempt: m.attempts, error }, 'message delivery failed');
      return markFailure(m, error);
    }
    await markSent(m);
    return 'sent';
  }

  async function runOnce(): Promise<OutboxRun> {
    const claimed = await claim(clock.now());
    const outcomes = await Promise.all(claimed.map(deliver));
    return {
      sent: outcomes.filter((o) => o === 'sent').length,
      retrying: outcomes.filter((o) => o === 'retrying').length,
      failed: outcomes.filter((o) => o === 'failed').length,
    };
  }

  let timer: ReturnType<typeof setTimeout> | null = null;
  let inFlight: Promise<unknown> | null = null;
  let running = false;

  function schedule(delay: number) {
    if (!running) return;
    timer = setTimeout(() => {
      timer = null;
      const run = runOnce().then(
        (r) => {
          const handled = r.sent + r.retrying + r.failed;
          if (handled > 0) log.info({ ...r }, 'outbox batch delivered');
          return handled >= batchSize;
        },
        (err) => {
          log.error({ err }, 'outbox worker: batch failed');
          return false;
        },
      );
      inFlight = run;
      void run.then((full) => {
        inFlight = null;
        schedule(full ? 0 : intervalMs);
      });
    }, delay);
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
      await inFlight;
    },
  };
}
