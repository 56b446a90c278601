-- Issue 34, item 6: a backlog of deliveries to dead receivers starved the embedded store (116,541
-- pending: /health p50 588 ms). Each delivery backed off on its own, so a dead endpoint was tried once
-- per pending delivery, a failure came back at once (connection refused), the worker claimed again at
-- once, and each claim read the endpoint's backlog without an index that fits: PGlite's one connection
-- was busy with the worker. The back-off is now the endpoint's as well: after a failure the endpoint is
-- not tried again before retry_at (30 s, 1 min, 2 min ... 12 h, by its consecutive failures), one
-- attempt per period whatever its backlog; a success clears it, and the endpoint is disabled once it has
-- failed for 3 days (failing_since), as the contract says.
alter table webhook_endpoints
  add column failures integer not null default 0,
  add column failing_since timestamptz,
  add column retry_at timestamptz;

-- The claim's per-endpoint look-up: the oldest due pending delivery of one endpoint, read from the index
-- in order (it used the global due index and filtered every other endpoint's rows, or sorted the backlog).
create index webhook_deliveries_endpoint_due on webhook_deliveries (org_id, endpoint_id, next_attempt_at, id) where status = 'pending';
