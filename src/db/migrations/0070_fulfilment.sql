-- Rights fulfilment (issue 33): the organization's data map (its systems and the data categories they
-- hold) and one task per system for each access, correction or erasure request. Tasks are taken by a
-- system (signed webhook, or the lease API with a system key) or done by hand; every transition is kept
-- in an append-only table for the export. A lease is never swept: a task whose lease ended is simply
-- claimable again (state that follows from time is derived in the query).

-- A system key is an API key with the `fulfilment` scope, bound to one system (fulfilment_system_keys).
alter table api_keys drop constraint api_keys_scopes_check;
alter table api_keys add constraint api_keys_scopes_check
  check (scopes <@ array['admin', 'grievances', 'nominees', 'consent', 'sdk', 'fulfilment'] and cardinality(scopes) > 0);

create table data_categories (
  org_id uuid not null references organizations (id),
  id uuid not null,
  key text not null check (key ~ '^[a-z][a-z0-9_]{1,62}$'),
  name text not null,
  description text,
  -- What it is used for (DPDP s.11(1)(a): the processing and its purposes).
  purposes text[] not null default '{}',
  -- The retention hold (DPDP Rule 8(3), sector law): kept this many days after the request, and why.
  retention_days integer check (retention_days between 1 and 36500),
  retention_basis text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id),
  unique (org_id, key),
  check ((retention_days is null) = (retention_basis is null))
);

create table fulfilment_systems (
  org_id uuid not null references organizations (id),
  id uuid not null,
  name text not null,
  owner text not null,
  description text,
  category_ids uuid[] not null default '{}',
  -- With whom it shares the data (DPDP s.11(1)(b)).
  processors text[] not null default '{}',
  can_access boolean not null default false,
  can_correct boolean not null default false,
  can_erase boolean not null default false,
  status text not null default 'active' check (status in ('active', 'archived')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id),
  unique (org_id, name)
);

create table fulfilment_system_keys (
  org_id uuid not null,
  key_id uuid not null,
  system_id uuid not null,
  primary key (org_id, key_id),
  foreign key (org_id, key_id) references api_keys (org_id, id),
  foreign key (org_id, system_id) references fulfilment_systems (org_id, id)
);

create table fulfilment_tasks (
  org_id uuid not null,
  id uuid not null,
  ticket_id text not null,
  system_id uuid not null,
  kind text not null check (kind in ('access', 'correction', 'erasure')),
  dp_id text not null,
  -- automatic: the system takes it (webhook or lease); manual: a member does the work and reports it.
  mode text not null check (mode in ('automatic', 'manual')),
  status text not null check (status in ('queued', 'leased', 'done', 'failed')),
  attempts integer not null default 0,
  lease_id text,
  lease_expires_at timestamptz,
  result jsonb,
  failure_reason text,
  -- Erasure: the data the system keeps under a retention hold, and until when ([{category_key, category_name, until, basis}]).
  holds jsonb not null default '[]',
  -- The categories the task is about when not all its system holds (an erasure after a consent withdrawal).
  category_scope uuid[],
  -- An erasure the organization scheduled itself: not claimable before this time (the person was told
  -- at least 48 hours ahead, DPDP Rule 8(2)).
  not_before timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  completed_at timestamptz,
  primary key (org_id, id),
  unique (org_id, ticket_id, system_id),
  foreign key (org_id, ticket_id) references grievances (org_id, ticket_id),
  foreign key (org_id, system_id) references fulfilment_systems (org_id, id)
);
-- The claim: a system's oldest claimable task (queued, or leased with its lease over).
create index fulfilment_tasks_claimable on fulfilment_tasks (org_id, system_id, created_at, id)
  where mode = 'automatic' and status in ('queued', 'leased');
create index fulfilment_tasks_by_status on fulfilment_tasks (org_id, status, created_at desc, id desc);

-- Append-only: what happened to each task, by whom, and when (the export's per-request account).
create table fulfilment_task_transitions (
  org_id uuid not null,
  id uuid not null,
  task_id uuid not null,
  ticket_id text not null,
  system_id uuid not null,
  action text not null check (action in ('created', 'claimed', 'heartbeat', 'completed', 'failed', 'retried', 'lease_expired')),
  status text not null,
  actor_type text not null,
  actor_id text not null,
  detail text,
  at timestamptz not null,
  -- Orders transitions recorded at the same clock time (one request's steps) as they were written.
  recorded_at timestamptz not null default clock_timestamp(),
  primary key (org_id, id),
  foreign key (org_id, task_id) references fulfilment_tasks (org_id, id)
);
create index fulfilment_task_transitions_by_ticket on fulfilment_task_transitions (org_id, ticket_id, at, recorded_at, id);

-- The organization's fulfilment choices: a consent withdrawal starts erasure tasks (off unless turned on).
create table fulfilment_settings (
  org_id uuid not null references organizations (id),
  erase_on_withdrawal boolean not null default false,
  updated_at timestamptz not null,
  primary key (org_id)
);

do $$
declare t text;
begin
  foreach t in array array['fulfilment_settings', 'data_categories', 'fulfilment_systems', 'fulfilment_system_keys', 'fulfilment_tasks', 'fulfilment_task_transitions'] loop
    execute format('alter table %I enable row level security', t);
    execute format('alter table %I force row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;

grant select, insert, update on fulfilment_settings to assent_app;
grant select, insert, update, delete on data_categories to assent_app;
grant select, insert, update on fulfilment_systems to assent_app;
grant select, insert on fulfilment_system_keys to assent_app;
grant select, insert, update on fulfilment_tasks to assent_app;
grant select, insert on fulfilment_task_transitions to assent_app;
