-- Rights Center sessions do not pile up (issue 35 item 3, follow-up to 0035): each new sign-in deletes that
-- person's sessions that have expired or were ended, in the statement that records the new one. The
-- table is forced under row-level security, so a sweep without a tenant could not see its rows; this keeps
-- the clean-up inside the tenant's own transaction. Sign-ins stay in the audit log.
grant delete on rights_center_sessions to assent_app;
