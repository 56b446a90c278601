// Asset and collection point SQL. Built from a tenant transaction; org_id is stamped here from it.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import { isUuid } from '../../platform/ids.js';
import type { ActiveStatus, ASSET_KINDS } from './schemas.js';

export interface AssetRow {
  id: string;
  name: string;
  kind: (typeof ASSET_KINDS)[number];
  status: ActiveStatus;
  created_at: Date;
  updated_at: Date;
}

export interface PurposeRow {
  id: string;
  name: string;
  description: string;
  required: boolean;
}

export interface CollectionPointRow {
  id: string;
  display_id: string;
  asset_id: string;
  name: string;
  notice: string;
  notice_version: number;
  purposes: PurposeRow[];
  status: ActiveStatus;
  created_at: Date;
  updated_at: Date;
}

const ASSET_COLUMNS = 'id, name, kind, status, created_at, updated_at';
const POINT_COLUMNS = 'id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at';

export function assetRepo(tx: TenantTx) {
  return {
    async insert(a: { id: string; name: string; kind: string; at: Date }): Promise<AssetRow> {
      const rows = await tx.query<AssetRow>(
        `insert into assets (org_id, id, name, kind, status, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::text, 'active', $5::timestamptz, $5::timestamptz) returning ${ASSET_COLUMNS}`,
        [tx.orgId, a.id, a.name, a.kind, a.at],
      );
      return rows[0]!;
    },

    list(q: { status?: string; limit: number; offset: number }): Promise<{ data: AssetRow[]; count: number }> {
      return selectPage<AssetRow>(tx, {
        columns: ASSET_COLUMNS,
        from: 'assets',
        where: 'org_id = $1::uuid and ($2::text is null or status = $2::text)',
        params: [tx.orgId, q.status ?? null],
        orderBy: 'created_at desc, id desc',
        limit: q.limit,
        offset: q.offset,
      });
    },

    async get(id: string): Promise<AssetRow | null> {
      if (!isUuid(id)) return null;
      const rows = await tx.query<AssetRow>(`select ${ASSET_COLUMNS} from assets where org_id = $1::uuid and id = $2::uuid`, [tx.orgId, id]);
      return rows[0] ?? null;
    },

    /** Applies the given fields; answers the asset with its previous status and the names of the fields whose value changed. */
    async update(
      id: string,
      c: { name?: string; kind?: string; status?: string },
      at: Date,
    ): Promise<(AssetRow & { previous_status: ActiveStatus; changed_fields: string[] }) | null> {
      if (!isUuid(id)) return null;
      const rows = await tx.query<AssetRow & { previous_status: ActiveStatus; changed_fields: string[] }>(
        `with prev as (select id, name, kind, status from assets where org_id = $1::uuid and id = $2::uuid for update)
         update assets a set name = coalesce($3::text, a.name), kind = coalesce($4::text, a.kind),
                status = coalesce($5::text, a.status), updated_at = $6::timestamptz
           from prev
          where a.org_id = $1::uuid and a.id = prev.id
          returning ${ASSET_COLUMNS.split(', ').map((c) => `a.${c}`).join(', ')}, prev.status as previous_status,
                    array_remove(array[
                      case when a.name is distinct from prev.name then 'name' end,
                      case when a.kind is distinct from prev.kind then 'kind' end,
                      case when a.status is distinct from prev.status then 'status' end
                    ], null) as changed_fields`,
        [tx.orgId, id, c.name ?? null, c.kind ?? null, c.status ?? null, at],
      );
      return rows[0] ?? null;
    },
  };
}

export function collectionPointRepo(tx: TenantTx) {
  return {
    /** The next CPnnn number of this organization (a counter row, so concurrent creations never collide). */
    async nextDisplayNumber(): Promise<number> {
      const rows = await tx.query<{ value: string }>(
        `insert into org_sequences (org_id, name, value) values ($1::uuid, 'collection_point', 1)
         on conflict (org_id, name) do update set value = org_sequences.value + 1 returning value`,
        [tx.orgId],
      );
      return Number(rows[0]!.value);
    },

    async displayIdTaken(displayId: string): Promise<boolean> {
      const rows = await tx.query('select 1 from collection_points where org_id = $1::uuid and display_id = $2::text', [tx.orgId, displayId]);
      return rows.length > 0;
    },

    /** null when the display_id is taken. */
    async insert(p: Omit<CollectionPointRow, 'notice_version' | 'status' | 'created_at' | 'updated_at'> & { at: Date }): Promise<CollectionPointRow | null> {
      const rows = await tx.query<CollectionPointRow>(
        `insert into collection_points (org_id, id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at)
         values ($1::uuid, $2::uuid, $3::text, $4::uuid, $5::text, $6::text, 1, $7::text::jsonb, 'active', $8::timestamptz, $8::timestamptz)
         on conflict (org_id, display_id) do nothing
         returning ${POINT_COLUMNS}`,
        [tx.orgId, p.id, p.display_id, p.asset_id, p.name, p.notice, JSON.stringify(p.purposes), p.at],
      );
      return rows[0] ?? null;
    },

    list(q: { assetId?: string; status?: string; limit: number; offset: number }): Promise<{ data: CollectionPointRow[]; count: number }> {
      return selectPage<CollectionPointRow>(tx, {
        columns: POINT_COLUMNS,
        from: 'collection_points',
        where: 'org_id = $1::uuid and ($2::uuid is null or asset_id = $2::uuid) and ($3::text is null or status = $3::text)',
        params: [tx.orgId, q.assetId ?? null, q.status ?? null],
        orderBy: 'created_at, id',
        limit: q.limit,
        offset: q.offset,
      });
    },

    /** By UUID or display_id. */
    async find(idOrDisplayId: string, options: { forUpdate?: boolean } = {}): Promise<CollectionPointRow | null> {
      const byId = isUuid(idOrDisplayId);
      const rows = await tx.query<CollectionPointRow>(
        `select ${POINT_COLUMNS} from collection_points where org_id = $1::uuid and ${byId ? 'id = $2::uuid' : 'display_id = $2::text'}
         ${options.forUpdate ? 'for update' : ''}`,
        [tx.orgId, byId ? idOrDisplayId.toLowerCase() : idOrDisplayId],
      );
      return rows[0] ?? null;
    },

    /** A collection point with its asset's status (creating links needs both active). */
    async findWithAsset(idOrDisplayId: string): Promise<(CollectionPointRow & { asset_status: ActiveStatus }) | null> {
      const byId = isUuid(idOrDisplayId);
      const rows = await tx.query<CollectionPointRow & { asset_status: ActiveStatus }>(
        `select ${POINT_COLUMNS.split(', ').map((c) => `cp.${c}`).join(', ')}, a.status as asset_status
           from collection_points cp join assets a on a.org_id = cp.org_id and a.id = cp.asset_id
          where cp.org_id = $1::uuid and ${byId ? 'cp.id = $2::uuid' : 'cp.display_id = $2::text'}`,
        [tx.orgId, byId ? idOrDisplayId.toLowerCase() : idOrDisplayId],
      );
      return rows[0] ?? null;
    },

    async update(
      id: string,
      c: { name?: string; notice?: string; purposes?: PurposeRow[]; status?: string; bumpVersion: boolean },
      at: Date,
    ): Promise<CollectionPointRow> {
      const rows = await tx.query<CollectionPointRow>(
        `update collection_points set
            name = coalesce($3::text, name),
            notice = coalesce($4::text, notice),
            purposes = coalesce($5::text::jsonb, purposes),
            status = coalesce($6::text, status),
            notice_version = notice_version + case when $7::boolean then 1 else 0 end,
            updated_at = $8::timestamptz
          where org_id = $1::uuid and id = $2::uuid returning ${POINT_COLUMNS}`,
        [tx.orgId, id, c.name ?? null, c.notice ?? null, c.purposes ? JSON.stringify(c.purposes) : null, c.status ?? null, c.bumpVersion, at],
      );
      return rows[0]!;
    },
  };
}
