-- Rate limits (contract §9): an organization's own limit per API key per window (RATE_LIMIT_WINDOW_SECONDS,
-- default 60 s); null means the server's default (RATE_LIMIT_PER_KEY, 500). Set with PATCH /api/v1/organization.
alter table organizations add column api_rate_limit integer check (api_rate_limit between 1 and 1000000);
