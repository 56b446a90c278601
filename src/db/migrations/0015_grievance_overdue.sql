-- The grievance.overdue webhook event (contract §9, §10): one event when a ticket goes late. A ticket
-- goes late at most once: a pause only stops its clock (leaving on_hold pushes due_at by the pause, so a
-- ticket late when paused is late again the moment it resumes, and one paused in time goes late later,
-- once), and due_at never moves otherwise. The job claims the ticket by inserting its row here in the
-- transaction that writes the event: a second process running at the same time finds the key taken and
-- writes nothing. due_at: the due date it went late against.
create table grievance_overdue_events (
  org_id uuid not null references organizations (id),
  grievance_id uuid not null,
  due_at timestamptz not null,
  noticed_at timestamptz not null,
  primary key (org_id, grievance_id)
);
alter table grievance_overdue_events enable row level security;
alter table grievance_overdue_events force row level security;
create policy grievance_overdue_events_all on grievance_overdue_events as permissive using (true) with check (true);
create policy grievance_overdue_events_tenant on grievance_overdue_events as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert on grievance_overdue_events to assent_app;
