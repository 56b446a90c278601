-- Ready for a distributed PostgreSQL (issue 19 item 6): every tenant table's key leads with org_id.
-- dp_token_orgs (0017) was keyed by the token's hash alone; it is keyed by (org_id, token_hash) like
-- dp_tokens, and found by its hash through a plain index (the hash of 190 random bits: unique in
-- practice, as api_keys_by_hash). On Citus that lookup, like a key's on the bare host, asks every shard.
alter table dp_token_orgs drop constraint dp_token_orgs_pkey;
alter table dp_token_orgs add primary key (org_id, token_hash);
create index dp_token_orgs_by_hash on dp_token_orgs (token_hash);
