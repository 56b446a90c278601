-- Users (global: one email, one password), their memberships of organizations with a role, login
-- sessions with opaque access and refresh tokens (stored as hashes), and the audit log.

create table users (
  id uuid primary key,
  email text not null unique check (email = lower(email)),
  password_hash text not null,
  created_at timestamptz not null,
  password_changed_at timestamptz not null
);

create table memberships (
  org_id uuid not null references organizations (id),
  user_id uuid not null references users (id),
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null,
  primary key (org_id, user_id)
);
create index memberships_by_user on memberships (user_id);

-- A session lives from login to logout (or a password change, or reuse of a rotated refresh token).
create table auth_sessions (
  id uuid primary key,
  user_id uuid not null references users (id),
  created_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text
);
create index auth_sessions_by_user on auth_sessions (user_id) where revoked_at is null;

create table auth_tokens (
  token_hash text primary key,
  session_id uuid not null references auth_sessions (id),
  kind text not null check (kind in ('access', 'refresh')),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  -- access: revoked when refreshed; refresh: set when rotated (a second use means theft).
  replaced_at timestamptz
);
create index auth_tokens_by_session on auth_tokens (session_id);

-- Append-only: who changed what, when, under which request. No personal data in clear.
create table audit_log (
  org_id uuid not null references organizations (id),
  id uuid not null,
  at timestamptz not null,
  actor_type text not null check (actor_type in ('api_key', 'user')),
  actor_id uuid not null,
  action text not null,
  target_type text not null,
  target_id text,
  request_id text,
  details jsonb not null default '{}',
  primary key (org_id, id)
);
create index audit_log_by_time on audit_log (org_id, at desc, id desc);
create index audit_log_by_action on audit_log (org_id, action, at desc, id desc);

do $$
declare t text;
begin
  foreach t in array array['memberships', 'audit_log'] loop
    execute format('alter table %I enable row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
  -- memberships are also read by the owner connection when a token is checked, before any tenant
  -- transaction; the audit log is only ever touched inside one.
  execute 'alter table audit_log force row level security';
end $$;

-- The service role sees who the members are, never a password hash.
grant select (id, email, created_at) on users to assent_app;
grant select on memberships to assent_app;
grant select, insert on audit_log to assent_app;
