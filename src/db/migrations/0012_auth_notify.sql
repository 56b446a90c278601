-- Several processes, one database: a change that must stop credentials at once (an API key revoked or
-- its scopes changed, a session ended, an access token replaced by a refresh, a membership added,
-- changed or removed) sends a notification on channel `assent_auth` in the transaction that makes it,
-- delivered to every listening process when (and only if) it commits. Triggers, so every writer (the
-- API, the CLI, a script) is covered. Payload: {"kind": "api_key" | "session" | "membership", ...}.
create function assent_notify_auth_change() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'api_keys' then
    perform pg_notify('assent_auth', json_build_object('kind', 'api_key', 'id', new.id)::text);
  elsif tg_table_name = 'auth_sessions' then
    perform pg_notify('assent_auth', json_build_object('kind', 'session', 'id', new.id)::text);
  elsif tg_table_name = 'auth_tokens' then
    perform pg_notify('assent_auth', json_build_object('kind', 'session', 'id', new.session_id)::text);
  elsif tg_table_name = 'memberships' then
    if tg_op = 'DELETE' then
      perform pg_notify('assent_auth', json_build_object('kind', 'membership', 'org_id', old.org_id, 'user_id', old.user_id)::text);
    else
      perform pg_notify('assent_auth', json_build_object('kind', 'membership', 'org_id', new.org_id, 'user_id', new.user_id)::text);
    end if;
  end if;
  return null;
end $$;

create trigger api_keys_notify after update on api_keys for each row
  when (old.revoked_at is distinct from new.revoked_at or old.scopes is distinct from new.scopes)
  execute function assent_notify_auth_change();
create trigger auth_sessions_notify after update on auth_sessions for each row
  when (old.revoked_at is distinct from new.revoked_at)
  execute function assent_notify_auth_change();
create trigger auth_tokens_notify after update on auth_tokens for each row
  when (old.replaced_at is null and new.replaced_at is not null and new.kind = 'access')
  execute function assent_notify_auth_change();
create trigger memberships_notify after insert or update or delete on memberships for each row
  execute function assent_notify_auth_change();
