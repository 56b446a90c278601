// The grievance.overdue webhook event (contract §9, §10): when a ticket goes late, one event, through the
// webhook outbox (recordEvent), for the organization's endpoints subscribed to it.
//
// A scheduled job, not a timer per ticket: every process runs it every few minutes, and it is safe when
// several run at once. Per organization it takes a transaction-level advisory lock (another process
// holding it: that organization is skipped this round), and each ticket is claimed by inserting its key
// in grievance_overdue_events in the transaction that writes the event, so it is announced exactly once
// even without the lock. A ticket goes late once: a pause only stops the clock (one late when paused is
// late again as it resumes; one paused in time goes late later, then once), and nothing else moves
// due_at; a ticket finished and reopened past its due date is not announced again.
//
// "Late" is the overdue flag's own rule (repo.ts): unfinished and due_at before now, or before the
// pause's start for a ticket put on hold when it was already late. Organizations with no enabled
// endpoint subscribed to grievance.overdue are skipped (nothing is claimed for them), and only tickets
// that went late within the last OVERDUE_LOOKBACK_DAYS are considered: a new subscriber hears of the
// latenesses of that last week, never of a year-old backlog.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import { recordEvent } from '../../platform/webhooks/events.js';
import type { GrievanceRow } from './repo.js';
import { withClock } from './service.js';
import { createIntervalJob, type IntervalJob } from '../../platform/jobs.js';

export const OVERDUE_LOOKBACK_DAYS = 7;
/** Latenesses claimed per organization per transaction; the rest are taken in the next batch. */
const BATCH = 500;
/** The first key of the advisory lock (the second is the organization's). */
const LOCK_CLASS = 0x6f766472; // 'ovdr'

const COLUMNS = 'id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at, due_at, paused, resolved_at';

export interface OverdueRun {
  /** Organizations at least one of whose tickets was announced. */
  organizations: number;
  /** grievance.overdue events written. */
  events: number;
  /** Organizations skipped because another process held their lock. */
  skipped: number;
}

export async function runOverdueEvents({ db, clock }: { db: Database; clock: Clock }): Promise<OverdueRun> {
  const now = clock.now();
  const orgs = await db.system.query<{ id: string }>('select id from organizations order by id');
  const run: OverdueRun = { organizations: 0, events: 0, skipped: 0 };
  for (const org of orgs) {
    let announced = 0;
    for (;;) {
      const batch = await withTenant(db, org.id, async (tx) => {
        const [gate] = await tx.query<{ locked: boolean; subscribed: boolean }>(
          `select pg_try_advisory_xact_lock($2::integer, hashtext($3::text)) as locked,
                  exists (select 1 from webhook_endpoints where org_id = $1::uuid and enabled and 'grievance.overdue' = any(events)) as subscribed`,
          [org.id, LOCK_CLASS, org.id],
        );
        if (!gate!.locked) return 'locked' as const;
        if (!gate!.subscribed) return 0;
        const rows = await tx.query<GrievanceRow>(
          `with late as (
             select g.id, g.due_at from grievances g
              where g.org_id = $1::uuid and g.status not in ('resolved', 'rejected', 'closed')
                and g.due_at >= $2::timestamptz - $3::integer * interval '1 day'
                and g.due_at < coalesce(g.paused_at, $2::timestamptz)
                and not exists (select 1 from grievance_overdue_events o where o.org_id = g.org_id and o.grievance_id = g.id)
              order by g.due_at, g.id
              limit $4::integer
           ), claimed as (
             insert into grievance_overdue_events (org_id, grievance_id, due_at, noticed_at)
             select $1::uuid, id, due_at, $2::timestamptz from late
             on conflict do nothing
             returning grievance_id
           )
           select ${COLUMNS} from grievances where org_id = $1::uuid and id in (select grievance_id from claimed) order by due_at, id`,
          [org.id, now, OVERDUE_LOOKBACK_DAYS, BATCH],
        );
        for (const row of rows) await recordEvent(tx, 'grievance.overdue', { ticket: withClock(row, now) }, now);
        return rows.length;
      });
      if (batch === 'locked') {
        run.skipped += 1;
        break;
      }
      announced += batch;
      if (batch < BATCH) break;
    }
    if (announced > 0) {
      run.organizations += 1;
      run.events += announced;
    }
  }
  return run;
}

/** Runs the job every intervalMs (default 5 minutes) in this process; each lateness is still announced once. */
export function createOverdueScheduler(deps: { db: Database; clock: Clock; log: { error(o: object, m: string): void } }, intervalMs = 300_000): IntervalJob {
  return createIntervalJob({ name: 'grievance.overdue events', run: () => runOverdueEvents(deps), intervalMs, log: deps.log, runAtStart: true });
}
