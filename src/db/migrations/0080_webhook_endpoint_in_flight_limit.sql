-- Issue 31 item 4: the webhook worker kept one attempt in flight per endpoint, so an endpoint received at
-- most one delivery per (its answer time + the worker's two statements): 105 deliveries/s to three
-- endpoints, fewer than the writes made (bench/webhook-drain.ts). An endpoint may now have up to 16
-- attempts in flight; how many is its own in_flight_limit, which starts at 1, doubles with each
-- delivered attempt up to 16 and falls back to 1 with a failure (a new, slow or failing receiver is not
-- sent a burst: a dead receiver still costs one attempt per back-off period, as issue 34 wants).
alter table webhook_endpoints add column in_flight_limit integer not null default 1 check (in_flight_limit between 1 and 1000);
