-- A tamper-evident audit log (contract §10): every entry of an organization carries its place in the
-- organization's chain (`seq`, 1, 2, ...), the hash of the entry before it (`prev_hash`; 64 zeros for
-- the first) and its own `hash` = SHA-256(prev_hash || canonical content), hex. A trigger computes them
-- in the inserting transaction, so every writer (the API, the CLI, a script) is chained.
--
-- Concurrency: the trigger locks the organization's row in audit_chain_heads (UPDATE takes the row
-- lock) before it reads the head, so two transactions writing entries for one organization take turns
-- from that point to their commit; the second sees the first's head once it commits (READ COMMITTED
-- re-reads the updated row). unique (org_id, seq) makes a fork impossible even if that were broken.
--
-- Canonical content: the JSON text of jsonb_build_array(1, seq, org_id, id, at, actor_type, actor_id,
-- action, target_type, target_id, request_id, details), with `at` as ISO 8601 UTC milliseconds (the
-- trigger truncates `at` to milliseconds, so what is hashed is what is stored). Verifiers outside the
-- database get that text in the export and compare its parsed value with the entry's fields.

alter table audit_log add column seq bigint;
alter table audit_log add column prev_hash text;
alter table audit_log add column hash text;

create table audit_chain_heads (
  org_id uuid not null references organizations (id),
  seq bigint not null,
  hash text not null,
  primary key (org_id)
);

create function assent_audit_canonical(e audit_log) returns text language sql stable as $$
  select jsonb_build_array(1, e.seq, e.org_id::text, e.id::text,
           to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           e.actor_type, e.actor_id::text, e.action, e.target_type, e.target_id, e.request_id, e.details)::text
$$;

create function assent_audit_hash(prev text, e audit_log) returns text language sql stable as $$
  select encode(sha256(convert_to(prev || assent_audit_canonical(e), 'UTF8')), 'hex')
$$;

-- Backfill: each organization's existing entries in (at, id) order.
do $$
declare
  r record;
  cur uuid := null;
  n bigint := 0;
  prev text;
  e audit_log;
begin
  for r in select org_id, id from audit_log order by org_id, at, id loop
    if cur is distinct from r.org_id then
      if cur is not null then
        insert into audit_chain_heads (org_id, seq, hash) values (cur, n, prev);
      end if;
      cur := r.org_id; n := 0; prev := repeat('0', 64);
    end if;
    n := n + 1;
    update audit_log set at = date_trunc('milliseconds', at), seq = n, prev_hash = prev
      where org_id = r.org_id and id = r.id returning * into e;
    prev := assent_audit_hash(e.prev_hash, e);
    update audit_log set hash = prev where org_id = r.org_id and id = r.id;
  end loop;
  if cur is not null then
    insert into audit_chain_heads (org_id, seq, hash) values (cur, n, prev);
  end if;
end $$;

alter table audit_log alter column seq set not null;
alter table audit_log alter column prev_hash set not null;
alter table audit_log alter column hash set not null;
alter table audit_log add constraint audit_log_chain unique (org_id, seq);

create function assent_audit_chain() returns trigger language plpgsql as $$
declare
  head_seq bigint;
  head_hash text;
begin
  new.at := date_trunc('milliseconds', new.at);
  update audit_chain_heads set seq = seq + 1 where org_id = new.org_id returning seq, hash into head_seq, head_hash;
  if not found then
    -- The organization's first entry. Two first entries at once: one insert waits on the other's key
    -- and then fails with a unique violation, so retry through the update (rare: only the very first).
    begin
      insert into audit_chain_heads (org_id, seq, hash) values (new.org_id, 1, repeat('0', 64));
      head_seq := 1;
      head_hash := repeat('0', 64);
    exception when unique_violation then
      update audit_chain_heads set seq = seq + 1 where org_id = new.org_id returning seq, hash into head_seq, head_hash;
    end;
  end if;
  new.seq := head_seq;
  new.prev_hash := head_hash;
  new.hash := assent_audit_hash(head_hash, new);
  update audit_chain_heads set hash = new.hash where org_id = new.org_id;
  return new;
end $$;

create trigger audit_log_chain before insert on audit_log for each row execute function assent_audit_chain();

alter table audit_chain_heads enable row level security;
alter table audit_chain_heads force row level security;
create policy audit_chain_heads_all on audit_chain_heads as permissive using (true) with check (true);
create policy audit_chain_heads_tenant on audit_chain_heads as restrictive
  using (org_id = nullif(current_setting('app.org_id', true), '')::uuid)
  with check (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
grant select, insert, update on audit_chain_heads to assent_app;
