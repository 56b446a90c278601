-- The Rights Center's browser sessions (issue 35 item 3). The session cookie used to carry the person's
-- dpt_ token itself, so a leaked cookie was a working API Bearer token for up to an hour. Now it holds a
-- session id of its own (drs_...), known only to the Rights Center's pages and never accepted by the API,
-- stored here only as its SHA-256, and ended at sign-out.
create table rights_center_sessions (
  org_id uuid not null,
  session_hash text not null,
  data_principal_id uuid not null,
  dp_id text not null,
  -- How the person signed in: a one-time code, or a dpt_ token in a ?token= link (minted by the organization's app).
  source text not null check (source in ('code', 'token')),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  ended_at timestamptz,
  primary key (org_id, session_hash),
  foreign key (org_id, data_principal_id) references data_principals (org_id, id)
);

alter table rights_center_sessions enable row level security;
alter table rights_center_sessions force row level security;
create policy rights_center_sessions_all on rights_center_sessions as permissive using (true) with check (true);
create policy rights_center_sessions_tenant on rights_center_sessions as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

grant select, insert, update on rights_center_sessions to assent_app;
