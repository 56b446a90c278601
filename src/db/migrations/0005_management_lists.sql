-- The organization's own lists of grievance tickets and nominees, newest first, optionally by status:
-- each index in the order those queries read it (org_id, then the filter, then created_at desc, id desc).
create index grievances_by_time on grievances (org_id, created_at desc, id desc);
create index grievances_by_status on grievances (org_id, status, created_at desc, id desc);
create index nominees_by_time on nominees (org_id, created_at desc, id desc);
create index nominees_by_status on nominees (org_id, status, created_at desc, id desc);
