-- Foundation: organizations, API keys, data principals, grievance tickets with their status history, nominees.
-- Every tenant table leads with org_id (primary keys and indexes), so a Citus cluster needs only
-- create_distributed_table(..., 'org_id').

-- The unprivileged role every tenant transaction switches to. Roles are cluster-wide, so create it once.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'assent_app') then
    create role assent_app nologin;
  end if;
exception when duplicate_object or unique_violation then null;
end $$;

do $$
begin
  execute format('grant assent_app to %I', current_user);
exception when others then null; -- already granted, or we are a superuser (PGlite)
end $$;

do $$
begin
  execute format('grant usage on schema %I to assent_app', current_schema());
end $$;

create table organizations (
  id uuid primary key,
  slug text not null unique check (slug ~ '^[a-z][a-z0-9-]{1,61}[a-z0-9]$'),
  name text not null check (char_length(name) between 1 and 255),
  created_at timestamptz not null
);

create table api_keys (
  org_id uuid not null references organizations (id),
  id uuid not null,
  name text not null check (char_length(name) between 1 and 255),
  prefix text not null,
  key_hash text not null,
  scopes text[] not null check (scopes <@ array['admin', 'grievances', 'nominees', 'consent'] and cardinality(scopes) > 0),
  created_at timestamptz not null,
  last_used_at timestamptz,
  revoked_at timestamptz,
  primary key (org_id, id),
  unique (org_id, key_hash)
);

-- A data principal is recorded when a consent carrying a dp_id is recorded; grievances map to it.
create table data_principals (
  org_id uuid not null references organizations (id),
  id uuid not null,
  dp_id text not null,
  created_at timestamptz not null,
  primary key (org_id, id),
  unique (org_id, dp_id)
);

create table grievances (
  org_id uuid not null references organizations (id),
  id uuid not null,
  ticket_id text not null check (ticket_id ~ '^GRV-[A-Z0-9]{8}$'),
  client_user_id text not null,
  user_id uuid,
  subject text not null,
  description text not null,
  category text not null check (category in ('data_access', 'rectification', 'erasure', 'consent_withdrawal',
    'nomination', 'data_portability', 'objection', 'complaint', 'other')),
  status text not null check (status in ('open', 'in_progress', 'on_hold', 'resolved', 'rejected', 'closed')),
  attachment_url text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id),
  unique (org_id, ticket_id)
);
create index grievances_by_client_user on grievances (org_id, client_user_id, created_at desc, id desc);

-- Append-only: the service role may insert and read, never update or delete.
create table grievance_status_changes (
  org_id uuid not null,
  id uuid not null,
  grievance_id uuid not null,
  status text not null,
  previous_status text,
  changed_at timestamptz not null,
  actor_type text not null check (actor_type in ('api_key', 'user')),
  actor_id uuid not null,
  note text,
  primary key (org_id, id),
  foreign key (org_id, grievance_id) references grievances (org_id, id)
);
create index grievance_status_changes_by_ticket on grievance_status_changes (org_id, grievance_id, changed_at, id);

create table nominees (
  org_id uuid not null references organizations (id),
  id uuid not null,
  client_user_id text not null,
  nominee_name text not null,
  nominee_email text not null,
  nominee_mobile text not null,
  relationship text not null check (relationship in ('spouse', 'parent', 'child', 'sibling', 'legal_guardian',
    'power_of_attorney', 'other')),
  purpose_of_appointment text,
  status text not null check (status in ('pending', 'verified', 'rejected')),
  verified_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, id),
  check ((status = 'verified') = (verified_at is not null))
);
create index nominees_by_client_user on nominees (org_id, client_user_id, created_at desc, id desc);

-- Row-level security: a permissive policy beside a restrictive one on org_id. nullif: on a pooled
-- connection the setting reads '' after any transaction-local set, and a query without a tenant must
-- see nothing rather than fail.
do $$
declare t text;
begin
  foreach t in array array['api_keys', 'data_principals', 'grievances', 'grievance_status_changes', 'nominees'] loop
    execute format('alter table %I enable row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
  -- api_keys and organizations are also read by the owner connection before a tenant is known
  -- (key lookup); the other tenant tables are forced, so even the owner obeys the policy.
  foreach t in array array['data_principals', 'grievances', 'grievance_status_changes', 'nominees'] loop
    execute format('alter table %I force row level security', t);
  end loop;
end $$;

grant select on organizations to assent_app;
grant select, insert, update on api_keys to assent_app;
grant select, insert on data_principals to assent_app;
grant select, insert, update on grievances to assent_app;
grant select, insert on grievance_status_changes to assent_app;
grant select, insert, update, delete on nominees to assent_app;
