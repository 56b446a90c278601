-- Consent links: assets, collection points, consent requests and their link instances, append-only
-- consent records, daily rollups for the history summaries, and the outbox of messages to send.

create table assets (
  org_id uuid not null references organizations (id),
  id uuid not null,
  name text not null,
  kind text not null check (kind in ('website', 'mobile_app', 'call_center', 'offline', 'other')),
  status text not null check (status in ('active', 'inactive')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id)
);
create index assets_by_created on assets (org_id, created_at desc, id desc);

-- Per-organization counters (collection point display ids CP001, CP002, ...).
create table org_sequences (
  org_id uuid not null references organizations (id),
  name text not null,
  value bigint not null,
  primary key (org_id, name)
);

create table collection_points (
  org_id uuid not null,
  id uuid not null,
  display_id text not null check (display_id ~ '^[A-Z0-9_-]{2,32}$'),
  asset_id uuid not null,
  name text not null,
  notice text not null,
  notice_version integer not null check (notice_version >= 1),
  purposes jsonb not null,
  status text not null check (status in ('active', 'inactive')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id),
  unique (org_id, display_id),
  foreign key (org_id, asset_id) references assets (org_id, id)
);
create index collection_points_by_asset on collection_points (org_id, asset_id, created_at, id);

-- One row per consent request; its current link instance is current_event_id. Status is derived:
-- complete when completed_at is set, else expired when expires_at <= now, else active.
create table consent_requests (
  org_id uuid not null,
  id uuid not null,
  asset_id uuid not null,
  collection_point_id uuid not null,
  dp_id text,
  phone text not null,
  current_event_id uuid not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  completed_at timestamptz,
  consent_action text check (consent_action in ('approved', 'partial_consent', 'declined', 'revoked')),
  regeneration_count integer not null default 0 check (regeneration_count between 0 and 5),
  primary key (org_id, id),
  foreign key (org_id, collection_point_id) references collection_points (org_id, id),
  foreign key (org_id, asset_id) references assets (org_id, id)
);
-- The history page (newest first), with what the summaries need, for index-only scans.
create index consent_requests_history on consent_requests (org_id, asset_id, created_at desc, id desc)
  include (collection_point_id, completed_at, expires_at);
create index consent_requests_history_by_point on consent_requests (org_id, asset_id, collection_point_id, created_at desc, id desc)
  include (completed_at, expires_at);
-- Active links: only those not completed, read by expires_at > now (at most a day of links).
create index consent_requests_open on consent_requests (org_id, asset_id, expires_at)
  include (collection_point_id, created_at) where completed_at is null;
create index consent_requests_by_dp on consent_requests (org_id, dp_id, created_at desc, id desc) where dp_id is not null;

-- Every link instance ever issued for a request (the first, and one per regeneration).
create table consent_link_events (
  org_id uuid not null,
  id uuid not null,
  request_id uuid not null,
  token_hash text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  superseded_at timestamptz,
  primary key (org_id, id),
  unique (org_id, token_hash),
  foreign key (org_id, request_id) references consent_requests (org_id, id)
);
create index consent_link_events_by_request on consent_link_events (org_id, request_id);

-- Append-only: the service role may insert and read, never update or delete.
create table consent_records (
  org_id uuid not null,
  id uuid not null,
  collection_point_id uuid not null,
  data_principal_id uuid not null,
  dp_id text not null,
  consent_action text not null check (consent_action in ('approved', 'partial_consent', 'declined', 'revoked')),
  purposes jsonb not null,
  notice_version integer not null,
  request_id uuid,
  event_id uuid,
  channel text not null check (channel in ('api', 'link')),
  created_at timestamptz not null,
  primary key (org_id, id),
  foreign key (org_id, collection_point_id) references collection_points (org_id, id),
  foreign key (org_id, data_principal_id) references data_principals (org_id, id)
);
create index consent_records_by_dp on consent_records (org_id, dp_id, collection_point_id, created_at desc, id desc);

-- Links created, and of those completed, per creation day (UTC) and collection point, kept in the
-- same transaction as each write: the history summaries read whole days here and count exactly only
-- the partial days at the edges of the window.
create table consent_link_daily_counts (
  org_id uuid not null,
  asset_id uuid not null,
  day date not null,
  collection_point_id uuid not null,
  created integer not null default 0,
  completed integer not null default 0,
  primary key (org_id, asset_id, day, collection_point_id)
);

-- Messages to send (SMS, email), written in the same transaction as the link they carry.
create table outbound_messages (
  org_id uuid not null,
  id uuid not null,
  channel text not null check (channel in ('sms', 'email')),
  recipient text,
  body text,
  request_id uuid,
  event_id uuid,
  status text not null check (status in ('queued', 'sent', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  last_error text,
  created_at timestamptz not null,
  sent_at timestamptz,
  primary key (org_id, id)
);
create index outbound_messages_by_event on outbound_messages (org_id, event_id);
create index outbound_messages_due on outbound_messages (next_attempt_at) where status = 'queued';

do $$
declare t text;
begin
  foreach t in array array['assets', 'org_sequences', 'collection_points', 'consent_requests', 'consent_link_events',
                           'consent_records', 'consent_link_daily_counts', 'outbound_messages'] loop
    execute format('alter table %I enable row level security', t);
    -- The outbox is also read across organizations by the delivery worker on the owner connection.
    if t <> 'outbound_messages' then
      execute format('alter table %I force row level security', t);
    end if;
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;

grant select, insert, update on assets to assent_app;
grant select, insert, update on org_sequences to assent_app;
grant select, insert, update on collection_points to assent_app;
grant select, insert, update on consent_requests to assent_app;
grant select, insert, update on consent_link_events to assent_app;
grant select, insert on consent_records to assent_app;
grant select, insert, update on consent_link_daily_counts to assent_app;
grant select, insert, update on outbound_messages to assent_app;
