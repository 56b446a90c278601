-- Issue 31: sealing, set-based. The sequencer's cost per entry was mostly the per-row work of the loop in
-- 0040: an UPDATE of the entry and an INSERT per tree node, each its own executor run (and the entry's
-- canonical text built twice, once for the chain hash and once for the leaf). The loop now only
-- computes: the canonical text once per entry, the chain and leaf hashes, the tree's new nodes; then one
-- UPDATE … FROM unnest(…) seals every entry of the batch and one INSERT adds every node. What is
-- written is the same, byte for byte (the tests of the chain, the tree and the attacks are unchanged).
create or replace function assent_audit_seal(p_org uuid, p_limit integer)
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
  c text;
  e_ids uuid[] := '{}';
  e_seqs bigint[] := '{}';
  e_prevs text[] := '{}';
  e_hashes text[] := '{}';
  e_leaves bytea[] := '{}';
  t_levels smallint[] := '{}';
  t_idxs bigint[] := '{}';
  t_hashes bytea[] := '{}';
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
    c := assent_audit_canonical(e);
    e_ids := e_ids || e.id;
    e_seqs := e_seqs || s;
    e_prevs := e_prevs || prev;
    -- assent_audit_hash(prev, e), with the canonical text already built.
    prev := encode(sha256(convert_to(prev || c, 'UTF8')), 'hex');
    e_hashes := e_hashes || prev;
    leaf := sha256('\x00'::bytea || convert_to(c, 'UTF8'));
    e_leaves := e_leaves || leaf;
    node := leaf; i := s - 1; lvl := 0;
    while i % 2 = 1 loop
      node := assent_merkle_node(fr[array_length(fr, 1)], node);
      fr := fr[1:array_length(fr, 1) - 1];
      lvl := lvl + 1; i := i / 2;
      t_levels := t_levels || lvl::smallint;
      t_idxs := t_idxs || i;
      t_hashes := t_hashes || node;
    end loop;
    fr := fr || node;
    n := n + 1;
  end loop;
  if n > 0 then
    update audit_log a set seq = u.u_seq, prev_hash = u.u_prev, hash = u.u_hash, leaf_hash = u.u_leaf
      from unnest(e_ids, e_seqs, e_prevs, e_hashes, e_leaves) as u(u_id, u_seq, u_prev, u_hash, u_leaf)
     where a.org_id = p_org and a.id = u.u_id;
    insert into audit_tree_nodes (org_id, level, idx, hash)
    select p_org, t.t_level, t.t_idx, t.t_hash from unnest(t_levels, t_idxs, t_hashes) as t(t_level, t_idx, t_hash);
    update audit_chain_heads set seq = s, hash = prev, frontier = fr where org_id = p_org;
  end if;
  return query select n, s, assent_merkle_root(fr), prev;
end $$;
