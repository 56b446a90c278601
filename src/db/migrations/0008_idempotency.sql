-- Idempotency keys (contract §9): the first answer to a creating POST sent with `Idempotency-Key`,
-- kept per organization and key for 24 hours and replayed for a repeat. Written in the same tenant
-- transaction as the change it answers, so a change that rolled back leaves no key behind.
create table idempotency_keys (
  org_id uuid not null references organizations (id),
  key text not null check (char_length(key) between 1 and 255),
  -- SHA-256 (hex) of the method, path and canonical body: a repeat with another body is refused.
  request_hash text not null,
  status_code integer not null check (status_code between 200 and 299),
  -- The answer exactly as it was sent (JSON text).
  body text not null,
  created_at timestamptz not null,
  primary key (org_id, key)
);
-- The purge deletes what is older than 24 hours, across organizations.
create index idempotency_keys_by_age on idempotency_keys (created_at);

alter table idempotency_keys enable row level security;
-- Not forced: the purge runs as the owner across organizations (like outbound_messages).
create policy idempotency_keys_all on idempotency_keys as permissive using (true) with check (true);
create policy idempotency_keys_tenant on idempotency_keys as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- update: an expired key's row is replaced by the new first answer.
grant select, insert, update on idempotency_keys to assent_app;
