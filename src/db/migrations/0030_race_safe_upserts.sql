-- Issue 34, item 1: two requests that meet the same new data principal at once. The statement that
-- records a person and uses them (a consent, a token) inserted with `on conflict do nothing` and then
-- read the row back, which the reading statement's snapshot cannot see when the other transaction
-- committed after it began: the consent or token got a null person (23502, a 500). It now takes the
-- row over with a no-op update (`on conflict ... do update set dp_id = p.dp_id returning id`), which
-- waits for the other transaction and returns its row; the service role needs that column's UPDATE.
-- A person's dp_id never changes: the update writes the value it already has.
grant update (dp_id) on data_principals to assent_app;

create function assent_dp_id_fixed() returns trigger language plpgsql as $$
begin
  if new.dp_id is distinct from old.dp_id or new.id is distinct from old.id or new.org_id is distinct from old.org_id then
    raise exception 'data principal %: a dp_id never changes', old.id using errcode = 'check_violation';
  end if;
  return new;
end $$;

create trigger data_principals_fixed before update on data_principals
  for each row execute function assent_dp_id_fixed();
