-- The access package (issue 33 item 3): each system's part of an access request, stored encrypted
-- (envelope encryption: the content in AES-256-GCM chunks under a random data key, the data key sealed
-- with the ASSENT_SECRET_KEY-derived key, so `assent secret rotate` re-seals keys, never content), and
-- the package compiled once every task is done: the s.11 summary, the parts, a manifest signed with the
-- organization's key. Downloadable for 14 days; then the content is erased and the fact kept.
create table fulfilment_parts (
  org_id uuid not null,
  id uuid not null,
  task_id uuid not null,
  ticket_id text not null,
  system_id uuid not null,
  name text not null,
  content_type text not null,
  size bigint not null,
  sha256 text not null,
  -- The part's data key, sealed; null once the content is erased.
  key_enc text,
  created_at timestamptz not null,
  erased_at timestamptz,
  primary key (org_id, id),
  unique (org_id, task_id, name),
  foreign key (org_id, task_id) references fulfilment_tasks (org_id, id)
);
create index fulfilment_parts_by_ticket on fulfilment_parts (org_id, ticket_id, system_id, name);

create table fulfilment_part_chunks (
  org_id uuid not null,
  part_id uuid not null,
  seq integer not null,
  -- iv (12 bytes) || tag (16 bytes) || ciphertext
  data bytea not null,
  primary key (org_id, part_id, seq),
  foreign key (org_id, part_id) references fulfilment_parts (org_id, id)
);

create table access_packages (
  org_id uuid not null,
  id uuid not null,
  ticket_id text not null,
  dp_id text not null,
  -- The exact bytes signed (manifest.json) and their signature (manifest.jws): kept after erasure.
  manifest text not null,
  manifest_jws text not null,
  -- summary.json as packaged; null once erased.
  summary text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  erased_at timestamptz,
  downloads integer not null default 0,
  last_downloaded_at timestamptz,
  primary key (org_id, id),
  unique (org_id, ticket_id),
  foreign key (org_id, ticket_id) references grievances (org_id, ticket_id)
);
create index access_packages_by_person on access_packages (org_id, dp_id, created_at desc);
create index access_packages_to_erase on access_packages (expires_at) where erased_at is null;

do $$
declare t text;
begin
  foreach t in array array['fulfilment_parts', 'fulfilment_part_chunks', 'access_packages'] loop
    execute format('alter table %I enable row level security', t);
    execute format('alter table %I force row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;

grant select, insert, update on fulfilment_parts to assent_app;
grant select, insert, delete on fulfilment_part_chunks to assent_app;
grant select, insert, update on access_packages to assent_app;
