// Grievance reminders (contract §10): once a day per organization, its owners and admins get an email
// (through the outbox) listing the unfinished tickets, not on hold, due within the next 3 days.
// Several processes may run the job at once: each organization's day is claimed by inserting its row
// in grievance_reminder_runs (primary key org_id, day) in the transaction that queues the emails; a
// second process waits on that key, then finds it taken and sends nothing. No timer decides alone.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import { uuidv7 } from '../../platform/ids.js';
import { createIntervalJob, type IntervalJob } from '../../platform/jobs.js';

export const REMINDER_WINDOW_DAYS = 3;

export interface ReminderRun {
  /** Organizations whose day this run claimed. */
  organizations: number;
  /** Emails queued. */
  emails: number;
}

export async function runGrievanceReminders({ db, clock }: { db: Database; clock: Clock }): Promise<ReminderRun> {
  const now = clock.now();
  const day = now.toISOString().slice(0, 10);
  const orgs = await db.system.query<{ id: string; slug: string }>('select id, slug from organizations order by id');
  let organizations = 0;
  let emails = 0;
  for (const org of orgs) {
    const queued = await withTenant(db, org.id, async (tx) => {
      const due = await tx.query<{ ticket_id: string; due_at: Date }>(
        `select ticket_id, due_at from grievances
          where org_id = $1::uuid and status not in ('resolved', 'rejected', 'closed') and paused_at is null
            and due_at >= $2::timestamptz and due_at < $2::timestamptz + $3::integer * interval '1 day'
          order by due_at, id`,
        [org.id, now, REMINDER_WINDOW_DAYS],
      );
      if (due.length === 0) return null;
      const claimed = await tx.query(
        `insert into grievance_reminder_runs (org_id, day, ran_at, tickets) values ($1::uuid, $2::date, $3::timestamptz, $4::integer)
         on conflict (org_id, day) do nothing returning day`,
        [org.id, day, now, due.length],
      );
      if (claimed.length === 0) return null;
      const recipients = await tx.query<{ email: string }>(
        `select u.email from memberships m join users u on u.id = m.user_id
          where m.org_id = $1::uuid and m.role in ('owner', 'admin') order by u.email`,
        [org.id],
      );
      const body =
        `${due.length} grievance ticket(s) of ${org.slug} are due within ${REMINDER_WINDOW_DAYS} days:\n` +
        due.map((g) => `${g.ticket_id} due ${new Date(g.due_at).toISOString()}`).join('\n');
      for (const r of recipients) {
        await tx.query(
          `insert into outbound_messages (org_id, id, channel, recipient, body, status, next_attempt_at, created_at)
           values ($1::uuid, $2::uuid, 'email', $3::text, $4::text, 'queued', $5::timestamptz, $5::timestamptz)`,
          [org.id, uuidv7(), r.email, body, now],
        );
      }
      return recipients.length;
    });
    if (queued !== null) {
      organizations += 1;
      emails += queued;
    }
  }
  return { organizations, emails };
}

/** Runs the job every intervalMs (default hourly) in this process; each organization is still reminded once a day. */
export function createReminderScheduler(deps: { db: Database; clock: Clock; log: { error(o: object, m: string): void } }, intervalMs = 3_600_000): IntervalJob {
  return createIntervalJob({ name: 'grievance reminders', run: () => runGrievanceReminders(deps), intervalMs, log: deps.log, runAtStart: true });
}
