-- Issue 33 item 5: a nominee whose appointment is verified acts for the person who appointed them, where
-- the organization allows it (off by default), and every act records the nominee as the actor.

-- The organization's choice, beside its other fulfilment settings.
alter table fulfilment_settings add column nominees_may_act boolean not null default false;

-- A nominee's token (earned with a one-time code to their own contact, or minted by the organization): it
-- acts for the appointing person (dp_id, data_principal_id) under that appointment (nominee_id), which is
-- checked on every request.
alter table dp_tokens add column nominee_id uuid;
alter table dp_tokens drop constraint dp_tokens_source_check;
alter table dp_tokens add constraint dp_tokens_source_check check (source in ('minted', 'code', 'nominee_minted', 'nominee_code'));
alter table dp_tokens add constraint dp_tokens_nominee_source check ((nominee_id is null) = (source not in ('nominee_minted', 'nominee_code')));

-- Who acted may now be a nominee: in the audit log, a ticket's history and its conversation.
alter table audit_log drop constraint audit_log_actor_type_check;
alter table audit_log add constraint audit_log_actor_type_check check (actor_type in ('api_key', 'user', 'data_principal', 'nominee'));
alter table grievance_status_changes drop constraint grievance_status_changes_actor_type_check;
alter table grievance_status_changes add constraint grievance_status_changes_actor_type_check check (actor_type in ('api_key', 'user', 'data_principal', 'nominee'));
alter table grievance_messages drop constraint grievance_messages_actor_type_check;
alter table grievance_messages add constraint grievance_messages_actor_type_check check (actor_type in ('api_key', 'user', 'data_principal', 'nominee'));

-- A nominee signs in with their own email or mobile: their appointments are found by it.
create index nominees_by_email on nominees (org_id, nominee_email);
create index nominees_by_mobile on nominees (org_id, nominee_mobile);
