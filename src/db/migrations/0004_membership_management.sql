-- Organization management through the API: a membership change and its audit entry commit in one
-- tenant transaction, so the service role may now write memberships. Row-level security (enabled on
-- memberships since 0003) keeps those writes to the organization of the transaction.
grant insert, update, delete on memberships to assent_app;
