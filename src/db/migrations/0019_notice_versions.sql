-- Every version of a collection point's notice (contract §10: the export carries every notice
-- version, and a consent record names the version it was given under). collection_points keeps only
-- the current notice; a trigger copies each new version here in the writing transaction, so every
-- writer (the API, the SDK surface, a script) keeps the history. Append-only for the service role.
--
-- Versions before this migration were not kept anywhere: the backfill records each point's current
-- version only, with the point's updated_at as when it took effect.
create table notice_versions (
  org_id uuid not null,
  collection_point_id uuid not null,
  version integer not null check (version >= 1),
  notice text not null,
  purposes jsonb not null,
  created_at timestamptz not null,
  primary key (org_id, collection_point_id, version),
  foreign key (org_id, collection_point_id) references collection_points (org_id, id)
);

insert into notice_versions (org_id, collection_point_id, version, notice, purposes, created_at)
  select org_id, id, notice_version, notice, purposes, updated_at from collection_points;

create function assent_notice_version() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.notice_version is distinct from old.notice_version then
    insert into notice_versions (org_id, collection_point_id, version, notice, purposes, created_at)
      values (new.org_id, new.id, new.notice_version, new.notice, new.purposes, new.updated_at)
      on conflict (org_id, collection_point_id, version) do nothing;
  end if;
  return new;
end $$;

create trigger collection_points_notice_version after insert or update on collection_points
  for each row execute function assent_notice_version();

alter table notice_versions enable row level security;
alter table notice_versions force row level security;
create policy notice_versions_all on notice_versions as permissive using (true) with check (true);
create policy notice_versions_tenant on notice_versions as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert on notice_versions to assent_app;
