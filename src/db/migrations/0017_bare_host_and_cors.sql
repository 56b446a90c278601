-- Addressing without subdomains (contract §9): on the bare base host a credential selects its own
-- organization, so the service must find the organization from the credential alone.

-- An API key is found by its hash alone (the hash of 190 random bits: unique in practice; a second row
-- with the same hash would be refused rather than guessed between).
create index api_keys_by_hash on api_keys (key_hash);

-- A data principal's token: dp_tokens is forced under row-level security, so not even the owner can
-- read it before the organization is known. This directory maps a token's hash to its organization and
-- nothing else; the tenant role may only add to it (in the statement that stores the token), the owner
-- reads it, and the token itself is then checked in the organization's own dp_tokens (revocation,
-- expiry). Rows are purged an hour after they expire. Tokens stored before this migration (at most an
-- hour old) have no entry: they work on their organization's host only.
create table dp_token_orgs (
  token_hash text primary key,
  org_id uuid not null references organizations (id),
  expires_at timestamptz not null
);
create index dp_token_orgs_expiry on dp_token_orgs (expires_at);
grant insert on dp_token_orgs to assent_app;

-- CORS (contract §9): the browser origins whose pages may call the data-principal surfaces (/api/v1/me,
-- the SDK surface, the code sign-in) of this organization. Empty: none. Set with PATCH /api/v1/organization.
alter table organizations add column allowed_origins text[] not null default '{}'
  check (cardinality(allowed_origins) <= 20);
