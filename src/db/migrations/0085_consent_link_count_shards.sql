-- Issue 31: a consent link's creation (and its completion) added 1 to ONE row per collection point and
-- day, so every link of a busy collection point waited for the previous one's commit (row lock held
-- through the WAL flush): seen as `transactionid` waits under load. The counts are now kept in up to 16
-- rows per point and day, chosen by the writing connection (pg_backend_pid() % 16), so concurrent
-- transactions on different connections rarely touch the same row. Every read already sums the rows.
alter table consent_link_daily_counts add column shard smallint not null default 0;
alter table consent_link_daily_counts drop constraint consent_link_daily_counts_pkey;
alter table consent_link_daily_counts add primary key (org_id, asset_id, day, collection_point_id, shard);
