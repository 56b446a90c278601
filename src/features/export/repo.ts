// The export's reads: each table of one organization in key order, a batch at a time (keyset paging,
// each batch from the primary key's index), so a table of millions of rows is never read whole.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import type { TableName } from './archive.js';

export const BATCH = 2000;

interface TableQuery {
  /** Columns, as exported (the organization id is left out: it is the archive's). */
  select: string;
  from: string;
  /** The keyset: columns of a unique key, in order. */
  key: string[];
  /** Extra condition (the audit log stops at the chain head read first). */
  where?: string;
}

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export const TABLE_QUERIES: Record<TableName, TableQuery> = {
  assets: { select: 'id, name, kind, status, created_at, updated_at', from: 'assets t', key: ['id'] },
  'collection-points': {
    select: 'id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at',
    from: 'collection_points t',
    key: ['id'],
  },
  'notice-versions': {
    select: 'collection_point_id, version, notice, purposes, created_at',
    from: 'notice_versions t',
    key: ['collection_point_id', 'version'],
  },
  'consent-records': {
    select: 'id, collection_point_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, channel, created_at, receipt',
    from: 'consent_records t',
    key: ['id'],
  },
  'consent-links': {
    select: 'id, asset_id, collection_point_id, dp_id, phone, created_at, expires_at, completed_at, consent_action, regeneration_count',
    from: 'consent_requests t',
    key: ['id'],
  },
  grievances: {
    select:
      'id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at, due_at, paused_at, paused, resolved_at',
    from: 'grievances t',
    key: ['id'],
  },
  'grievance-history': {
    select: 'id, grievance_id, status, previous_status, changed_at, actor_type, actor_id, note',
    from: 'grievance_status_changes t',
    key: ['id'],
  },
  'grievance-messages': {
    select: 'id, grievance_id, sender, message, attachment_url, actor_type, actor_id, created_at',
    from: 'grievance_messages t',
    key: ['id'],
  },
  nominees: {
    select: 'id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status, verified_at, created_at, updated_at',
    from: 'nominees t',
    key: ['id'],
  },
  'data-categories': { select: 'id, key, name, description, purposes, retention_days, retention_basis, created_at, updated_at', from: 'data_categories t', key: ['id'] },
  systems: {
    select: 'id, name, owner, description, category_ids, processors, can_access, can_correct, can_erase, status, created_at, updated_at',
    from: 'fulfilment_systems t',
    key: ['id'],
  },
  'fulfilment-tasks': {
    select: 'id, ticket_id, system_id, kind, dp_id, mode, status, attempts, lease_expires_at, result, failure_reason, created_at, updated_at, completed_at',
    from: 'fulfilment_tasks t',
    key: ['id'],
  },
  // What each system did for each request, and when: one row per task transition.
  'fulfilment-transitions': {
    select: 'id, task_id, ticket_id, system_id, action, status, actor_type, actor_id, detail, at, recorded_at',
    from: 'fulfilment_task_transitions t',
    key: ['id'],
  },
  'audit-checkpoints': {
    // Before the audit log, so a verifier knows every checkpoint's size and root while it streams the entries.
    select: 'tree_size, root_hash, at as timestamp, kid, jws, tsa_token',
    from: 'audit_checkpoints t',
    key: ['tree_size'],
    where: 't.tree_size <= $2::bigint',
  },
  'audit-log': {
    // `at` as the chain's canonical text has it; `canonical` is the text the entry's hash covers.
    select: `seq, id, org_id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, actor_type, actor_id, action, target_type, target_id,
             request_id, details, prev_hash, hash, assent_audit_canonical(t) as canonical`,
    from: 'audit_log t',
    key: ['seq'],
    where: 't.seq <= $2::bigint',
  },
};

const KEY_TYPES: Record<string, string> = { id: 'uuid', collection_point_id: 'uuid', version: 'int', seq: 'bigint', tree_size: 'bigint' };

/** Every row of the table, in key order, BATCH rows per statement. */
export async function* rowsOf(tx: TenantTx, table: TableName, extra: unknown[] = []): AsyncGenerator<Record<string, unknown>> {
  const q = TABLE_QUERIES[table];
  const first = 2 + extra.length;
  const keyParams = q.key.map((k, i) => `$${first + i}::${KEY_TYPES[k]}`);
  const after = `(${q.key.map((k) => `t.${k}`).join(', ')}) > (${keyParams.join(', ')})`;
  const text =
    `select ${q.select} from ${q.from} where t.org_id = $1::uuid${q.where ? ` and ${q.where}` : ''} and ${after} ` +
    `order by ${q.key.map((k) => `t.${k}`).join(', ')} limit ${BATCH}`;
  let cursor: unknown[] = q.key.map((k) => (KEY_TYPES[k] === 'uuid' ? ZERO_UUID : 0));
  for (;;) {
    const rows = await tx.query<Record<string, unknown>>(text, [tx.orgId, ...extra, ...cursor]);
    for (const row of rows) yield row;
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1]!;
    cursor = q.key.map((k) => last[k]);
  }
}

export async function organizationOf(tx: TenantTx): Promise<{ grievance_period_days: number } | undefined> {
  const [row] = await tx.query<{ grievance_period_days: number }>('select grievance_period_days from organizations where id = $1::uuid', [tx.orgId]);
  return row;
}

export interface AuditHead {
  chain: { seq: number; hash: string } | null;
  tree: { size: number; root_hash: string };
  /** Entries written but not sealed yet (committed after the export sealed): not in this archive. */
  unsealed: number;
}

/** The sealed audit log's end: the chain head, the tree's size and root, and how many entries wait to be sealed. */
export async function auditHeadOf(tx: TenantTx): Promise<AuditHead> {
  const [r] = await tx.query<{ seq: string | number | null; hash: string | null; root_hash: string; unsealed: string | number }>(
    `select h.seq, h.hash, assent_merkle_root(coalesce(h.frontier, '{}')) as root_hash,
            (select count(*) from audit_log a where a.org_id = $1::uuid and a.seq is null) as unsealed
       from (select 1) one left join audit_chain_heads h on h.org_id = $1::uuid`,
    [tx.orgId],
  );
  const seq = Number(r?.seq ?? 0);
  return {
    chain: seq > 0 ? { seq, hash: r!.hash! } : null,
    tree: { size: seq, root_hash: r!.root_hash },
    unsealed: Number(r?.unsealed ?? 0),
  };
}
