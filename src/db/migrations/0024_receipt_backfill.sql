-- Receipts for consent records written before receipts existed (migration 0018 added the column;
-- those records have receipt null). Signing needs the organization's private key, which only the
-- service can open (it is sealed with ASSENT_SECRET_KEY), so the backfill is the service's work, not
-- this migration's: `assent receipts backfill` and a job of every server
-- (src/features/receipts/backfill.ts). What it needs from the database:
--
-- - The service role may set a record's receipt, and nothing else of the record: a column grant. The
--   records stay append-only in every other respect.
-- - A receipt, once set, is never changed or removed by anyone (a trigger; the backfill's UPDATE is
--   also guarded by `receipt is null`), so a signed record cannot be re-signed.
-- - The records still without a receipt, found without reading the table: a partial index, empty once
--   the backfill is done (it keeps the hourly check of every organization cheap).
grant update (receipt) on consent_records to assent_app;

create function assent_receipt_once() returns trigger language plpgsql as $$
begin
  if old.receipt is not null and new.receipt is distinct from old.receipt then
    raise exception 'consent record % already has its receipt: a receipt is never changed', old.id
      using errcode = 'check_violation';
  end if;
  return new;
end $$;

create trigger consent_records_receipt_once before update of receipt on consent_records
  for each row execute function assent_receipt_once();

create index consent_records_unsigned on consent_records (org_id, id) where receipt is null;
