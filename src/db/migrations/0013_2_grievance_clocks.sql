-- Grievance clocks (contract §10, DPDP Rule 14(3)): the organization's response period, each ticket's
-- due date, its pauses while on hold, and when it was resolved (for the median time to resolve).
alter table organizations add column grievance_period_days integer not null default 30
  check (grievance_period_days between 1 and 90);

-- due_at: created_at + the period at creation, pushed by every pause when it ends.
-- paused_at: when the running pause began (null when the clock runs).
-- paused: [{from, to, reason}] oldest first, `to` null for the running one.
-- resolved_at: when the ticket last entered resolved, rejected or closed (null while unfinished).
alter table grievances add column due_at timestamptz;
alter table grievances add column paused_at timestamptz;
alter table grievances add column paused jsonb not null default '[]';
alter table grievances add column resolved_at timestamptz;

update grievances g set
  due_at = g.created_at + interval '30 days',
  paused_at = case when g.status = 'on_hold' then g.updated_at end,
  paused = case when g.status = 'on_hold'
             then jsonb_build_array(jsonb_build_object('from', to_char(g.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'to', null, 'reason', null))
             else '[]' end,
  resolved_at = case when g.status in ('resolved', 'rejected', 'closed') then g.updated_at end;

alter table grievances alter column due_at set not null;
create index grievances_by_due on grievances (org_id, due_at, id);

-- The reminders job: one run per organization per day, whichever process claims it first.
create table grievance_reminder_runs (
  org_id uuid not null references organizations (id),
  day date not null,
  ran_at timestamptz not null,
  tickets integer not null,
  primary key (org_id, day)
);
alter table grievance_reminder_runs enable row level security;
alter table grievance_reminder_runs force row level security;
create policy grievance_reminder_runs_all on grievance_reminder_runs as permissive using (true) with check (true);
create policy grievance_reminder_runs_tenant on grievance_reminder_runs as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert on grievance_reminder_runs to assent_app;

-- PATCH /api/v1/organization changes the period inside the tenant transaction that audits it; the
-- service role may change that column only, and only of its own organization (the statement names it).
grant update (grievance_period_days) on organizations to assent_app;
