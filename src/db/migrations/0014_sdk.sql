-- The truConsent SDK surface (contract §8): API keys may carry the scope `sdk` (banners, settings,
-- recording what a banner shows and submits, starting a code sign-in; nothing else), and each
-- organization keeps the settings its Rights Center widget reads (colours, sections, grievance mode,
-- access mode). One row per organization; none means the defaults.
alter table api_keys drop constraint api_keys_scopes_check;
alter table api_keys add constraint api_keys_scopes_check
  check (scopes <@ array['admin', 'grievances', 'nominees', 'consent', 'sdk'] and cardinality(scopes) > 0);

create table rights_center_settings (
  org_id uuid not null references organizations (id),
  settings jsonb not null check (jsonb_typeof(settings) = 'object'),
  updated_at timestamptz not null,
  primary key (org_id)
);

alter table rights_center_settings enable row level security;
alter table rights_center_settings force row level security;
create policy rights_center_settings_all on rights_center_settings as permissive using (true) with check (true);
create policy rights_center_settings_tenant on rights_center_settings as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert, update on rights_center_settings to assent_app;

-- A consent recorded from an app's banner through the SDK surface says so.
alter table consent_records drop constraint consent_records_channel_check;
alter table consent_records add constraint consent_records_channel_check check (channel in ('api', 'link', 'rights_center', 'sdk'));
