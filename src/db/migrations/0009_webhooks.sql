-- Webhooks (contract §9): an organization's endpoints, the events written in the transaction of their
-- change, and one delivery per (event, subscribed endpoint) that the webhook worker sends, retries with
-- back-off for 3 days, and gives up. The worker reads all three across organizations on the owner
-- connection (as the outbox does), so row-level security binds the tenant role but is not FORCE'd.

create table webhook_endpoints (
  org_id uuid not null references organizations (id),
  id uuid not null,
  url text not null,
  description text,
  events text[] not null,
  -- The signing secret whsec_...; `enc:v1:` + AES-256-GCM of it when ASSENT_SECRET_KEY is set.
  secret text not null,
  enabled boolean not null default true,
  disabled_reason text,
  disabled_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id)
);

create table webhook_events (
  org_id uuid not null references organizations (id),
  id uuid not null,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null,
  primary key (org_id, id)
);

create table webhook_deliveries (
  org_id uuid not null,
  id uuid not null,
  endpoint_id uuid not null,
  event_id uuid not null,
  status text not null check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  -- Set while a worker is sending it: one delivery in flight per endpoint.
  in_flight_until timestamptz,
  last_attempt_at timestamptz,
  last_response_status integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz not null,
  primary key (org_id, id),
  foreign key (org_id, endpoint_id) references webhook_endpoints (org_id, id) on delete cascade,
  foreign key (org_id, event_id) references webhook_events (org_id, id)
);
create index webhook_deliveries_by_endpoint on webhook_deliveries (org_id, endpoint_id, created_at desc, id);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_in_flight on webhook_deliveries (org_id, endpoint_id) where in_flight_until is not null;

do $$
declare t text;
begin
  foreach t in array array['webhook_endpoints', 'webhook_events', 'webhook_deliveries'] loop
    execute format('alter table %I enable row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;

grant select, insert, update, delete on webhook_endpoints to assent_app;
grant select, insert on webhook_events to assent_app;
grant select, insert, update, delete on webhook_deliveries to assent_app;
