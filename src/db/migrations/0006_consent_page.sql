-- The hosted consent page: the one-time code that proves the data principal holds the link's phone
-- (one row per link instance, replaced on each resend), and the data principal as an audit actor.
create table consent_link_codes (
  org_id uuid not null,
  event_id uuid not null,
  -- sha256 of "<event_id>:<code>": never the code itself.
  code_hash text not null,
  -- When the current code was sent (resend throttle) and how many codes this link has had.
  sent_at timestamptz not null,
  sends integer not null default 1 check (sends >= 1),
  expires_at timestamptz not null,
  -- Wrong tries against the current code.
  attempts integer not null default 0 check (attempts >= 0),
  -- Set by the right code: the browser session (sha256 of its cookie) that may now submit choices.
  verified_at timestamptz,
  session_hash text,
  primary key (org_id, event_id),
  foreign key (org_id, event_id) references consent_link_events (org_id, id)
);

alter table consent_link_codes enable row level security;
alter table consent_link_codes force row level security;
create policy consent_link_codes_all on consent_link_codes as permissive using (true) with check (true);
create policy consent_link_codes_tenant on consent_link_codes as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert, update on consent_link_codes to assent_app;

-- Consents given on the page are recorded with the data principal as the actor (id: the link's event id).
alter table audit_log drop constraint audit_log_actor_type_check;
alter table audit_log add constraint audit_log_actor_type_check check (actor_type in ('api_key', 'user', 'data_principal'));
