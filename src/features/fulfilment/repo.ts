// Fulfilment SQL: the data map (categories, systems, system keys) and tasks with their transitions.
// Built from a tenant transaction; org_id is stamped here from it, never taken from input.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { isUniqueViolation } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import { AppError } from '../../platform/http/errors.js';
import type { TaskKind, TaskStatus } from './schemas.js';

export interface CategoryRow {
  id: string;
  key: string;
  name: string;
  description: string | null;
  purposes: string[];
  retention_days: number | null;
  retention_basis: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SystemRow {
  id: string;
  name: string;
  owner: string;
  description: string | null;
  category_ids: string[];
  processors: string[];
  can_access: boolean;
  can_correct: boolean;
  can_erase: boolean;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
}

export interface TaskRow {
  id: string;
  ticket_id: string;
  system_id: string;
  system_name: string;
  kind: TaskKind;
  dp_id: string;
  category_keys: string[];
  mode: 'automatic' | 'manual';
  status: TaskStatus;
  attempts: number;
  lease_expires_at: Date | null;
  result: Record<string, unknown> | null;
  failure_reason: string | null;
  holds: RetentionHold[];
  not_before: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface RetentionHold {
  category_key: string;
  category_name: string;
  until: string;
  basis: string;
}

export interface TransitionRow {
  task_id: string;
  system_id: string;
  action: string;
  status: string;
  actor: { type: string; id: string };
  detail: string | null;
  at: Date;
}

const CATEGORY_COLUMNS = 'id, key, name, description, purposes, retention_days, retention_basis, created_at, updated_at';
const SYSTEM_COLUMNS = 'id, name, owner, description, category_ids, processors, can_access, can_correct, can_erase, status, created_at, updated_at';

/** A task as shown: a lease that ended reads as queued (claimable again), never swept by a job. `$2` is now. */
const TASK_SELECT = `
  select t.id, t.ticket_id, t.system_id, s.name as system_name, t.kind, t.dp_id,
         coalesce((select array_agg(c.key order by c.key) from data_categories c where c.org_id = t.org_id and c.id = any (coalesce(t.category_scope, s.category_ids))), '{}') as category_keys,
         t.mode,
         case when t.status = 'leased' and t.lease_expires_at <= $2::timestamptz then 'queued' else t.status end as status,
         t.attempts,
         case when t.status = 'leased' and t.lease_expires_at > $2::timestamptz then t.lease_expires_at end as lease_expires_at,
         t.result, t.failure_reason, t.holds,
         case when t.not_before > $2::timestamptz then t.not_before end as not_before, t.created_at, t.updated_at, t.completed_at
    from fulfilment_tasks t join fulfilment_systems s on s.org_id = t.org_id and s.id = t.system_id`;

function conflictOnUnique<T>(message: string): (e: unknown) => T {
  return (e) => {
    if (isUniqueViolation(e)) throw new AppError('conflict', message);
    throw e;
  };
}

/** The organization's fulfilment choices (both off by default). */
export interface FulfilmentSettings {
  erase_on_withdrawal: boolean;
  nominees_may_act: boolean;
}

export function dataMapRepo(tx: TenantTx) {
  return {
    // ---- categories
    insertCategory(c: Omit<CategoryRow, 'created_at' | 'updated_at'>, at: Date): Promise<CategoryRow> {
      return tx
        .query<CategoryRow>(
          `insert into data_categories (org_id, id, key, name, description, purposes, retention_days, retention_basis, created_at, updated_at)
           values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text[], $7::int, $8::text, $9::timestamptz, $9::timestamptz)
           returning ${CATEGORY_COLUMNS}`,
          [tx.orgId, c.id, c.key, c.name, c.description, c.purposes, c.retention_days, c.retention_basis, at],
        )
        .then((r) => r[0]!, conflictOnUnique(`A data category with key "${c.key}" already exists`));
    },
    async getCategory(id: string): Promise<CategoryRow | null> {
      const rows = await tx.query<CategoryRow>(`select ${CATEGORY_COLUMNS} from data_categories where org_id = $1::uuid and id = $2::uuid`, [tx.orgId, id]);
      return rows[0] ?? null;
    },
    listCategories(limit: number, offset: number) {
      return selectPage<CategoryRow>(tx, { columns: CATEGORY_COLUMNS, from: 'data_categories', where: 'org_id = $1::uuid', params: [tx.orgId], orderBy: 'key, id', limit, offset });
    },
    allCategories(): Promise<CategoryRow[]> {
      return tx.query<CategoryRow>(`select ${CATEGORY_COLUMNS} from data_categories where org_id = $1::uuid order by key, id`, [tx.orgId]);
    },
    async updateCategory(id: string, c: CategoryRow, at: Date): Promise<CategoryRow> {
      const rows = await tx.query<CategoryRow>(
        `update data_categories set name = $3::text, description = $4::text, purposes = $5::text[], retention_days = $6::int, retention_basis = $7::text, updated_at = $8::timestamptz
          where org_id = $1::uuid and id = $2::uuid returning ${CATEGORY_COLUMNS}`,
        [tx.orgId, id, c.name, c.description, c.purposes, c.retention_days, c.retention_basis, at],
      );
      return rows[0]!;
    },
    /** Removes a category no system holds; false when none was removed (absent, or held: `held` says which). */
    async removeCategory(id: string): Promise<{ removed: boolean; held: boolean }> {
      const rows = await tx.query<{ removed: boolean; held: boolean }>(
        `with held as (select exists (select 1 from fulfilment_systems where org_id = $1::uuid and $2::uuid = any (category_ids)) as held),
              gone as (delete from data_categories where org_id = $1::uuid and id = $2::uuid and not (select held from held) returning id)
         select exists (select 1 from gone) as removed, (select held from held) as held`,
        [tx.orgId, id],
      );
      return rows[0]!;
    },
    /** The ids of `ids` that are not categories of the organization. */
    async unknownCategories(ids: string[]): Promise<string[]> {
      if (ids.length === 0) return [];
      const rows = await tx.query<{ id: string }>(
        `select u.id from unnest($2::uuid[]) as u(id) where not exists (select 1 from data_categories c where c.org_id = $1::uuid and c.id = u.id)`,
        [tx.orgId, ids],
      );
      return rows.map((r) => r.id);
    },

    async eraseOnWithdrawal(): Promise<boolean> {
      return (await this.settings()).erase_on_withdrawal;
    },
    async settings(): Promise<FulfilmentSettings> {
      const rows = await tx.query<FulfilmentSettings>('select erase_on_withdrawal, nominees_may_act from fulfilment_settings where org_id = $1::uuid', [tx.orgId]);
      return rows[0] ?? { erase_on_withdrawal: false, nominees_may_act: false };
    },
    /** Changes the settings given (the others are kept, or take their default); answers them all. */
    async changeSettings(c: Partial<FulfilmentSettings>, at: Date): Promise<FulfilmentSettings> {
      const rows = await tx.query<FulfilmentSettings>(
        `insert into fulfilment_settings as s (org_id, erase_on_withdrawal, nominees_may_act, updated_at)
         values ($1::uuid, coalesce($2::boolean, false), coalesce($3::boolean, false), $4::timestamptz)
         on conflict (org_id) do update set erase_on_withdrawal = coalesce($2::boolean, s.erase_on_withdrawal),
                                             nominees_may_act = coalesce($3::boolean, s.nominees_may_act), updated_at = excluded.updated_at
         returning erase_on_withdrawal, nominees_may_act`,
        [tx.orgId, c.erase_on_withdrawal ?? null, c.nominees_may_act ?? null, at],
      );
      return rows[0]!;
    },

    // ---- systems
    insertSystem(s: Omit<SystemRow, 'created_at' | 'updated_at' | 'status'>, at: Date): Promise<SystemRow> {
      return tx
        .query<SystemRow>(
          `insert into fulfilment_systems (org_id, id, name, owner, description, category_ids, processors, can_access, can_correct, can_erase, status, created_at, updated_at)
           values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::uuid[], $7::text[], $8::boolean, $9::boolean, $10::boolean, 'active', $11::timestamptz, $11::timestamptz)
           returning ${SYSTEM_COLUMNS}`,
          [tx.orgId, s.id, s.name, s.owner, s.description, s.category_ids, s.processors, s.can_access, s.can_correct, s.can_erase, at],
        )
        .then((r) => r[0]!, conflictOnUnique(`A system named "${s.name}" already exists`));
    },
    async getSystem(id: string, lock = false): Promise<SystemRow | null> {
      const rows = await tx.query<SystemRow>(`select ${SYSTEM_COLUMNS} from fulfilment_systems where org_id = $1::uuid and id = $2::uuid${lock ? ' for update' : ''}`, [tx.orgId, id]);
      return rows[0] ?? null;
    },
    listSystems(limit: number, offset: number) {
      return selectPage<SystemRow>(tx, { columns: SYSTEM_COLUMNS, from: 'fulfilment_systems', where: 'org_id = $1::uuid', params: [tx.orgId], orderBy: 'name, id', limit, offset });
    },
    activeSystems(): Promise<SystemRow[]> {
      return tx.query<SystemRow>(`select ${SYSTEM_COLUMNS} from fulfilment_systems where org_id = $1::uuid and status = 'active' order by name, id`, [tx.orgId]);
    },
    updateSystem(id: string, s: SystemRow, at: Date): Promise<SystemRow> {
      return tx
        .query<SystemRow>(
          `update fulfilment_systems set name = $3::text, owner = $4::text, description = $5::text, category_ids = $6::uuid[], processors = $7::text[],
                  can_access = $8::boolean, can_correct = $9::boolean, can_erase = $10::boolean, status = $11::text, updated_at = $12::timestamptz
            where org_id = $1::uuid and id = $2::uuid returning ${SYSTEM_COLUMNS}`,
          [tx.orgId, id, s.name, s.owner, s.description, s.category_ids, s.processors, s.can_access, s.can_correct, s.can_erase, s.status, at],
        )
        .then((r) => r[0]!, conflictOnUnique(`A system named "${s.name}" already exists`));
    },
    /** An API key with the `fulfilment` scope bound to the system, in one statement. */
    async insertSystemKey(k: { id: string; systemId: string; name: string; prefix: string; hash: string }, at: Date) {
      const rows = await tx.query<{ id: string; prefix: string; name: string; scopes: string[]; created_at: Date }>(
        `with k as (
           insert into api_keys (org_id, id, name, prefix, key_hash, scopes, created_at)
           values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, '{fulfilment}', $6::timestamptz)
           returning id, prefix, name, scopes, created_at
         ), bound as (
           insert into fulfilment_system_keys (org_id, key_id, system_id) select $1::uuid, k.id, $7::uuid from k
         )
         select id, prefix, name, scopes, created_at from k`,
        [tx.orgId, k.id, k.name, k.prefix, k.hash, at, k.systemId],
      );
      return rows[0]!;
    },
    /** The system a key is bound to (a system key), or null. */
    async systemOfKey(keyId: string): Promise<string | null> {
      const rows = await tx.query<{ system_id: string }>('select system_id from fulfilment_system_keys where org_id = $1::uuid and key_id = $2::uuid', [tx.orgId, keyId]);
      return rows[0]?.system_id ?? null;
    },
  };
}

export interface RawTask {
  id: string;
  ticket_id: string;
  system_id: string;
  mode: string;
  status: TaskStatus;
  lease_id: string | null;
  lease_expires_at: Date | null;
  not_before: Date | null;
}

export interface TransitionInput {
  action: string;
  actorType: string;
  actorId: string;
  detail: string | null;
}

export function taskRepo(tx: TenantTx) {
  return {
    /** One task per system: inserted with their `created` transitions in one statement. */
    async insertTasks(
      t: {
        ticketId: string;
        kind: TaskKind;
        dpId: string;
        systems: { id: string; taskId: string; mode: 'automatic' | 'manual'; holds: RetentionHold[]; scope: string[] | null }[];
        notBefore: Date | null;
        actorType: string;
        actorId: string;
      },
      at: Date,
    ): Promise<string[]> {
      if (t.systems.length === 0) return [];
      const rows = await tx.query<{ id: string }>(
        `with s as (select * from jsonb_to_recordset($5::text::jsonb) as s(id uuid, task_id uuid, mode text, holds jsonb, scope uuid[])),
              ins as (
                insert into fulfilment_tasks (org_id, id, ticket_id, system_id, kind, dp_id, mode, status, holds, category_scope, not_before, created_at, updated_at)
                select $1::uuid, s.task_id, $2::text, s.id, $3::text, $4::text, s.mode, 'queued', s.holds, s.scope, $9::timestamptz, $6::timestamptz, $6::timestamptz from s
                on conflict (org_id, ticket_id, system_id) do nothing
                returning id, system_id
              ),
              tr as (
                insert into fulfilment_task_transitions (org_id, id, task_id, ticket_id, system_id, action, status, actor_type, actor_id, at)
                select $1::uuid, gen_random_uuid(), ins.id, $2::text, ins.system_id, 'created', 'queued', $7::text, $8::text, $6::timestamptz from ins
              )
         select id from ins`,
        [tx.orgId, t.ticketId, t.kind, t.dpId, JSON.stringify(t.systems.map((s) => ({ id: s.id, task_id: s.taskId, mode: s.mode, holds: s.holds, scope: s.scope }))), at, t.actorType, t.actorId, t.notBefore],
      );
      return rows.map((r) => r.id);
    },

    /** Whether an enabled webhook endpoint of the organization takes fulfilment.task_created. */
    async taskEventsSubscribed(): Promise<boolean> {
      const rows = await tx.query<{ yes: boolean }>(
        "select exists (select 1 from webhook_endpoints where org_id = $1::uuid and enabled and 'fulfilment.task_created' = any (events)) as yes",
        [tx.orgId],
      );
      return rows[0]!.yes;
    },

    async get(id: string, now: Date): Promise<TaskRow | null> {
      const rows = await tx.query<TaskRow>(`${TASK_SELECT} where t.org_id = $1::uuid and t.id = $3::uuid`, [tx.orgId, now, id]);
      return rows[0] ?? null;
    },

    forTicket(ticketId: string, now: Date): Promise<TaskRow[]> {
      return tx.query<TaskRow>(`${TASK_SELECT} where t.org_id = $1::uuid and t.ticket_id = $3::text order by s.name, t.id`, [tx.orgId, now, ticketId]);
    },

    async list(f: { status?: TaskStatus; systemId?: string; ticketId?: string; limit: number; offset: number }, now: Date): Promise<{ data: TaskRow[]; count: number }> {
      const params: unknown[] = [tx.orgId, now];
      const where = ['t.org_id = $1::uuid'];
      // The status as shown: an ended lease is queued.
      if (f.status === 'queued') where.push(`(t.status = 'queued' or (t.status = 'leased' and t.lease_expires_at <= $2::timestamptz))`);
      else if (f.status === 'leased') where.push(`(t.status = 'leased' and t.lease_expires_at > $2::timestamptz)`);
      else if (f.status) where.push(`t.status = $${params.push(f.status)}::text`);
      if (f.systemId) where.push(`t.system_id = $${params.push(f.systemId)}::uuid`);
      if (f.ticketId) where.push(`t.ticket_id = $${params.push(f.ticketId)}::text`);
      const rows = await tx.query<TaskRow & { total: number }>(
        `${TASK_SELECT.replace('select t.id,', 'select count(*) over ()::int as total, t.id,')} where ${where.join(' and ')}
          order by t.created_at desc, t.id desc limit $${params.push(f.limit)}::int offset $${params.push(f.offset)}::int`,
        params,
      );
      let count = rows[0]?.total ?? 0;
      if (rows.length === 0 && f.offset > 0) {
        count = (await tx.query<{ n: number }>(`select count(*)::int as n from fulfilment_tasks t where ${where.join(' and ')}`, params.slice(0, params.length - 2)))[0]!.n;
      }
      return { data: rows.map(({ total: _t, ...r }) => r as TaskRow), count };
    },

    /**
     * Leases up to `limit` claimable tasks of one system (queued, or leased with the lease over), oldest
     * first, skipping rows another claim holds; records `lease_expired` (when it was) and `claimed`.
     */
    async claim(c: { systemId: string; limit: number; leaseSeconds: number; actorType: string; actorId: string }, now: Date): Promise<{ id: string; lease_id: string; was_expired: boolean }[]> {
      return tx.query(
        `with picked as (
           select t.id, t.status = 'leased' as was_expired, t.lease_expires_at as ended_at from fulfilment_tasks t
            where t.org_id = $1::uuid and t.system_id = $2::uuid and t.mode = 'automatic'
              and (t.status = 'queued' or (t.status = 'leased' and t.lease_expires_at <= $3::timestamptz))
              and (t.not_before is null or t.not_before <= $3::timestamptz)
            order by t.created_at, t.id
            limit $4::int
            for update skip locked
         ), leased as (
           update fulfilment_tasks t
              set status = 'leased', attempts = t.attempts + 1, lease_id = 'lse_' || replace(gen_random_uuid()::text, '-', ''),
                  lease_expires_at = $3::timestamptz + make_interval(secs => $5::int), updated_at = $3::timestamptz
             from picked where t.org_id = $1::uuid and t.id = picked.id
           returning t.id, t.ticket_id, t.lease_id, picked.was_expired, picked.ended_at
         ), tr as (
           insert into fulfilment_task_transitions (org_id, id, task_id, ticket_id, system_id, action, status, actor_type, actor_id, detail, at)
           select $1::uuid, gen_random_uuid(), l.id, l.ticket_id, $2::uuid, a.action, a.status, $6::text, $7::text, null, a.at
             from leased l cross join lateral (values ('lease_expired', 'queued', l.ended_at, l.was_expired), ('claimed', 'leased', $3::timestamptz, true)) as a(action, status, at, keep)
            where a.keep
         )
         select id, lease_id, was_expired from leased`,
        [tx.orgId, c.systemId, now, c.limit, c.leaseSeconds, c.actorType, c.actorId],
      );
    },

    /** The row as stored, locked (the lease checks read the real lease, not the shown status). */
    async lockRaw(id: string): Promise<RawTask | null> {
      const rows = await tx.query<RawTask>(
        'select id, ticket_id, system_id, mode, status, lease_id, lease_expires_at, not_before from fulfilment_tasks where org_id = $1::uuid and id = $2::uuid for update',
        [tx.orgId, id],
      );
      return rows[0] ?? null;
    },

    /** Sets the task's state and appends its transition, in one statement. */
    async transition(
      id: string,
      set: { status: TaskStatus; leaseExpiresAt?: Date | null; clearLease?: boolean; result?: unknown; failureReason?: string | null; completed?: boolean },
      tr: TransitionInput,
      at: Date,
    ): Promise<void> {
      await tx.query(
        `with u as (
           update fulfilment_tasks set status = $3::text,
                  lease_expires_at = case when $4::boolean then null when $5::timestamptz is not null then $5::timestamptz else lease_expires_at end,
                  lease_id = case when $4::boolean then null else lease_id end,
                  result = case when $6::text is null then result else $6::text::jsonb end,
                  failure_reason = $7::text,
                  completed_at = case when $8::boolean then $9::timestamptz else completed_at end,
                  updated_at = $9::timestamptz
            where org_id = $1::uuid and id = $2::uuid
           returning id, ticket_id, system_id
         )
         insert into fulfilment_task_transitions (org_id, id, task_id, ticket_id, system_id, action, status, actor_type, actor_id, detail, at)
         select $1::uuid, gen_random_uuid(), u.id, u.ticket_id, u.system_id, $10::text, $3::text, $11::text, $12::text, $13::text, $9::timestamptz from u`,
        [
          tx.orgId,
          id,
          set.status,
          set.clearLease ?? false,
          set.leaseExpiresAt ?? null,
          set.result === undefined ? null : JSON.stringify(set.result),
          set.failureReason ?? null,
          set.completed ?? false,
          at,
          tr.action,
          tr.actorType,
          tr.actorId,
          tr.detail,
        ],
      );
    },

    transitions(ticketId: string): Promise<TransitionRow[]> {
      return tx.query<TransitionRow>(
        `select task_id, system_id, action, status, json_build_object('type', actor_type, 'id', actor_id) as actor, detail, at
           from fulfilment_task_transitions where org_id = $1::uuid and ticket_id = $2::text
          -- A lease that ended at the very instant of the next claim is told before that claim.
          order by at, action <> 'lease_expired', recorded_at, id`,
        [tx.orgId, ticketId],
      );
    },

    /** How the ticket's tasks stand, as stored (an ended lease still counts as work in progress). */
    async ticketCounts(ticketId: string): Promise<{ total: number; done: number; failed: number; manual_open: number }> {
      const rows = await tx.query<{ total: number; done: number; failed: number; manual_open: number }>(
        `select count(*)::int as total, count(*) filter (where status = 'done')::int as done, count(*) filter (where status = 'failed')::int as failed,
                count(*) filter (where mode = 'manual' and status = 'queued')::int as manual_open
           from fulfilment_tasks where org_id = $1::uuid and ticket_id = $2::text`,
        [tx.orgId, ticketId],
      );
      return rows[0]!;
    },
  };
}
