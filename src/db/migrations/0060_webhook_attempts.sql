-- Issue 30 item 6: the delivery log keeps every attempt, not only the last. One row per attempt of a
-- delivery, written by the webhook worker in the same statement that records the attempt on the
-- delivery; append-only (assent_app may not change or delete a row); deleted with its delivery (an
-- endpoint's deletion removes its deliveries).
create table webhook_attempts (
  org_id uuid not null,
  delivery_id uuid not null,
  -- The delivery's attempt number (1, 2, ...): webhook_deliveries.attempts when it was made.
  attempt integer not null,
  endpoint_id uuid not null,
  attempted_at timestamptz not null,
  duration_ms integer not null,
  -- The receiver's HTTP status; null when there was no answer (refused, timed out, not allowed).
  response_status integer,
  error text,
  primary key (org_id, delivery_id, attempt),
  foreign key (org_id, delivery_id) references webhook_deliveries (org_id, id) on delete cascade
);

alter table webhook_attempts enable row level security;
create policy webhook_attempts_all on webhook_attempts as permissive using (true) with check (true);
create policy webhook_attempts_tenant on webhook_attempts as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

grant select, insert on webhook_attempts to assent_app;
