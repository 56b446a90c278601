-- The audit log's sequencer (issues 31 and 32): entries are written unsealed, with no lock on a row
-- another writer needs, and a sequencer seals them in batches shortly after their commit. Sealing gives
-- an entry its place (`seq`), links it into the hash chain of migration 0013 (`prev_hash`, `hash`:
-- unchanged rules) and appends it to the organization's Merkle tree (RFC 9162: `leaf_hash` =
-- SHA-256(0x00 || canonical text); inner nodes SHA-256(0x01 || left || right)). Before, a trigger
-- did all of that in the writing transaction under the organization's row in audit_chain_heads, so an
-- organization's writes took turns from their audit entry to their commit.
--
-- Guarantees kept: no fork (one sealer per organization at a time, holding its head row; unique
-- (org_id, seq)); no gap (seq is the head's plus one, in the sealer's transaction); tamper evident
-- (the chain, now also the tree and signed checkpoints). Only assent_audit_seal writes the sealing
-- columns, the head and the tree: it runs as the tables' owner (security definer), and the service role
-- has no update on audit_log, no write on the tree, and no longer any write on audit_chain_heads. A
-- trigger refuses to change a sealed entry, whoever asks.

alter table audit_log add column pos bigint generated always as identity;
alter table audit_log add column leaf_hash bytea;
alter table audit_log alter column seq drop not null;
alter table audit_log alter column prev_hash drop not null;
alter table audit_log alter column hash drop not null;
create index audit_log_unsealed on audit_log (org_id, pos) where seq is null;

-- The right edge of the tree (its complete subtrees' roots, largest first): enough to append.
alter table audit_chain_heads add column frontier bytea[] not null default '{}';

-- The tree's complete inner nodes: level >= 1, index i covers leaves [i * 2^level, (i + 1) * 2^level).
-- Level 0 is audit_log.leaf_hash. A proof reads O(log n) of them.
create table audit_tree_nodes (
  org_id uuid not null references organizations (id),
  level smallint not null check (level >= 1),
  idx bigint not null,
  hash bytea not null,
  primary key (org_id, level, idx)
);

-- Signed checkpoints: the tree's size and root at a time, signed with the organization's key
-- (compact JWS, typ assent-checkpoint+jws), and optionally an RFC 3161 timestamp token over the JWS.
create table audit_checkpoints (
  org_id uuid not null references organizations (id),
  tree_size bigint not null check (tree_size >= 1),
  root_hash text not null,
  at timestamptz not null,
  kid text not null,
  jws text not null,
  tsa_token bytea,
  primary key (org_id, tree_size)
);
create index audit_checkpoints_by_time on audit_checkpoints (org_id, at desc);

do $$
declare t text;
begin
  foreach t in array array['audit_tree_nodes', 'audit_checkpoints'] loop
    execute format('alter table %I enable row level security', t);
    execute format('alter table %I force row level security', t);
    execute format('create policy %I on %I as permissive using (true) with check (true)', t || '_all', t);
    execute format('create policy %I on %I as restrictive using (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid) with check (org_id = nullif(current_setting(''app.org_id'', true), '''')::uuid)', t || '_tenant', t);
  end loop;
end $$;
grant select on audit_tree_nodes to assent_app;
grant select, insert on audit_checkpoints to assent_app;
grant update (tsa_token) on audit_checkpoints to assent_app;
revoke insert, update on audit_chain_heads from assent_app;

create function assent_merkle_node(l bytea, r bytea) returns bytea language sql immutable as $$
  select sha256('\x01'::bytea || l || r)
$$;

-- MTH of the tree whose right edge is fr (folded from the right); SHA-256('') when empty. Hex.
create function assent_merkle_root(fr bytea[]) returns text language plpgsql immutable as $$
declare
  n integer := coalesce(array_length(fr, 1), 0);
  h bytea;
begin
  if n = 0 then return encode(sha256(''::bytea), 'hex'); end if;
  h := fr[n];
  for i in reverse n - 1 .. 1 loop
    h := assent_merkle_node(fr[i], h);
  end loop;
  return encode(h, 'hex');
end $$;

-- Existing entries: their leaves and the tree, per organization in seq order.
do $$
declare
  r record;
  cur uuid := null;
  fr bytea[];
  node bytea;
  i bigint;
  lvl integer;
begin
  for r in select a.org_id, a.id, a.seq, sha256('\x00'::bytea || convert_to(assent_audit_canonical(a), 'UTF8')) as leaf
             from audit_log a order by a.org_id, a.seq loop
    if cur is distinct from r.org_id then
      if cur is not null then update audit_chain_heads set frontier = fr where org_id = cur; end if;
      cur := r.org_id; fr := '{}';
    end if;
    update audit_log set leaf_hash = r.leaf where org_id = r.org_id and id = r.id;
    node := r.leaf; i := r.seq - 1; lvl := 0;
    while i % 2 = 1 loop
      node := assent_merkle_node(fr[array_length(fr, 1)], node);
      fr := fr[1:array_length(fr, 1) - 1];
      lvl := lvl + 1; i := i / 2;
      insert into audit_tree_nodes (org_id, level, idx, hash) values (r.org_id, lvl, i, node);
    end loop;
    fr := fr || node;
  end loop;
  if cur is not null then update audit_chain_heads set frontier = fr where org_id = cur; end if;
end $$;

-- Writers: an entry is born unsealed, whatever the insert says (no writer can place or chain it).
drop trigger audit_log_chain on audit_log;
drop function assent_audit_chain();
create function assent_audit_unsealed() returns trigger language plpgsql as $$
begin
  new.at := date_trunc('milliseconds', new.at);
  new.seq := null;
  new.prev_hash := null;
  new.hash := null;
  new.leaf_hash := null;
  return new;
end $$;
create trigger audit_log_unsealed before insert on audit_log for each row execute function assent_audit_unsealed();

-- Sealing is the only update, once: a sealed entry is never changed, even by the owner.
create function assent_audit_sealed_once() returns trigger language plpgsql as $$
begin
  if old.seq is not null then
    raise exception 'audit log entry % is sealed (seq %): entries are never changed', old.id, old.seq using errcode = '42501';
  end if;
  return new;
end $$;
create trigger audit_log_sealed_once before update on audit_log for each row execute function assent_audit_sealed_once();

-- Seals up to p_limit of the organization's unsealed entries, in the order they were written (pos),
-- and returns how many, the tree's size and root after. Another sealer of the organization at work
-- (its head row locked): returns sealed = -1 at once rather than wait.
create function assent_audit_seal(p_org uuid, p_limit integer)
returns table (sealed integer, tree_size bigint, root_hash text, chain_hash text)
language plpgsql security definer set search_path from current as $$
declare
  h audit_chain_heads;
  e audit_log;
  n integer := 0;
  s bigint;
  prev text;
  fr bytea[];
  leaf bytea;
  node bytea;
  i bigint;
  lvl integer;
begin
  select * into h from audit_chain_heads where org_id = p_org for update skip locked;
  if not found then
    if exists (select 1 from audit_chain_heads x where x.org_id = p_org) then
      return query select -1, 0::bigint, null::text, null::text; -- another sealer holds it
      return;
    end if;
    if not exists (select 1 from audit_log a where a.org_id = p_org and a.seq is null) then
      return query select 0, 0::bigint, assent_merkle_root('{}'), null::text; -- nothing ever written
      return;
    end if;
    insert into audit_chain_heads (org_id, seq, hash, frontier) values (p_org, 0, repeat('0', 64), '{}') on conflict do nothing;
    select * into h from audit_chain_heads where org_id = p_org for update skip locked;
    if not found then
      return query select -1, 0::bigint, null::text, null::text;
      return;
    end if;
  end if;
  s := h.seq; prev := h.hash; fr := h.frontier;
  for e in select * from audit_log a where a.org_id = p_org and a.seq is null order by a.pos limit p_limit loop
    s := s + 1;
    e.seq := s;
    e.prev_hash := prev;
    prev := assent_audit_hash(e.prev_hash, e);
    leaf := sha256('\x00'::bytea || convert_to(assent_audit_canonical(e), 'UTF8'));
    update audit_log set seq = s, prev_hash = e.prev_hash, hash = prev, leaf_hash = leaf where org_id = p_org and id = e.id;
    node := leaf; i := s - 1; lvl := 0;
    while i % 2 = 1 loop
      node := assent_merkle_node(fr[array_length(fr, 1)], node);
      fr := fr[1:array_length(fr, 1) - 1];
      lvl := lvl + 1; i := i / 2;
      insert into audit_tree_nodes (org_id, level, idx, hash) values (p_org, lvl, i, node);
    end loop;
    fr := fr || node;
    n := n + 1;
  end loop;
  if n > 0 then
    update audit_chain_heads set seq = s, hash = prev, frontier = fr where org_id = p_org;
  end if;
  return query select n, s, assent_merkle_root(fr), prev;
end $$;
revoke all on function assent_audit_seal(uuid, integer) from public;
grant execute on function assent_audit_seal(uuid, integer) to assent_app;
