-- Data principals act for themselves (contract §7): the organization's record of how to reach them,
-- their own access tokens and the one-time codes that sign them in, the conversation on a ticket, and
-- the organization's contact person (DPDP Rule 9).

-- How to reach a data principal, kept by the organization (and filled from consent links): one row per
-- dp_id. Separate from data_principals, which records a person once a consent (or a token) names them.
create table data_principal_contacts (
  org_id uuid not null references organizations (id),
  dp_id text not null,
  phone text,
  email text check (email = lower(email)),
  name text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id, dp_id)
);
-- A code sign-in finds the data principal by a contact on file.
create index data_principal_contacts_by_phone on data_principal_contacts (org_id, phone, created_at) where phone is not null;
create index data_principal_contacts_by_email on data_principal_contacts (org_id, email, created_at) where email is not null;

-- DP tokens (dpt_...): stored only as the SHA-256 of the token; one data principal of one organization.
create table dp_tokens (
  org_id uuid not null,
  token_hash text not null,
  data_principal_id uuid not null,
  dp_id text not null,
  source text not null check (source in ('minted', 'code')),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  primary key (org_id, token_hash),
  foreign key (org_id, data_principal_id) references data_principals (org_id, id)
);

-- One-time sign-in codes, one row per contact (its SHA-256, never the contact itself): the current code
-- (hashed), its expiry and wrong tries, and the sends in the current 15-minute window. Rows exist for
-- contacts that belong to nobody too, so the limits answer the same whether or not the contact is on file.
create table dp_sign_in_codes (
  org_id uuid not null,
  contact_hash text not null,
  dp_id text,
  code_hash text not null,
  sent_at timestamptz not null,
  expires_at timestamptz not null,
  attempts integer not null default 0 check (attempts >= 0),
  window_started_at timestamptz not null,
  sends integer not null check (sends >= 1),
  primary key (org_id, contact_hash)
);

-- The conversation on a ticket: append-only, oldest first.
create table grievance_messages (
  org_id uuid not null,
  id uuid not null,
  grievance_id uuid not null,
  sender text not null check (sender in ('user', 'agent', 'system')),
  message text not null check (char_length(message) between 1 and 5000),
  attachment_url text,
  actor_type text check (actor_type in ('api_key', 'user', 'data_principal')),
  actor_id uuid,
  created_at timestamptz not null,
  primary key (org_id, id),
  foreign key (org_id, grievance_id) references grievances (org_id, id)
);
create index grievance_messages_by_ticket on grievance_messages (org_id, grievance_id, created_at, id);

-- The organization's contact person for data principals (a DPO, or whoever answers for it): one per organization.
create table dpo_contacts (
  org_id uuid not null references organizations (id),
  id uuid not null,
  full_name text not null,
  email text not null,
  phone text,
  appointment_date timestamptz,
  qualifications text,
  responsibilities text,
  working_hours text,
  response_time text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (org_id),
  unique (org_id, id)
);

do $$
declare t text;
begin
  foreach t in array array['data_principal_contacts', 'dp_tokens', 'dp_sign_in_codes', 'grievance_messages', 'dpo_contacts'] loop
    execute format('alter table %I enable row level security', t);
    execute format('alter table %I force row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;

grant select, insert, update on data_principal_contacts to assent_app;
grant select, insert, update on dp_tokens to assent_app;
grant select, insert, update on dp_sign_in_codes to assent_app;
grant select, insert on grievance_messages to assent_app;
grant select, insert, update on dpo_contacts to assent_app;

-- A data principal acting for themselves: the actor of ticket history entries, and the Rights Center as a
-- consent channel.
alter table grievance_status_changes drop constraint grievance_status_changes_actor_type_check;
alter table grievance_status_changes add constraint grievance_status_changes_actor_type_check check (actor_type in ('api_key', 'user', 'data_principal'));
alter table consent_records drop constraint consent_records_channel_check;
alter table consent_records add constraint consent_records_channel_check check (channel in ('api', 'link', 'rights_center'));
