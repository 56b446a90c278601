// Assets and the collection points under them: where consent is collected, with the notice and the
// purposes a data principal is asked about. notice_version increases whenever either changes.
import type { Database } from '../../platform/db/types.js';
import { withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { alongsideAudit, recordAudit } from '../audit/index.js';
import { assetRepo, collectionPointRepo, type AssetRow, type CollectionPointRow, type PurposeRow } from './repo.js';
import type {
  CreateAssetInput,
  CreateCollectionPointInput,
  PurposeInputValue,
  UpdateAssetInput,
  UpdateCollectionPointInput,
} from './schemas.js';

const assetNotFound = () => new AppError('not_found', 'Asset not found');
const pointNotFound = () => new AppError('not_found', 'Collection point not found');

export interface CollectionPointServiceDeps {
  db: Database;
  clock: Clock;
}

/** Keeps the ids of purposes that name one; gives new ones an id. Unknown ids are refused. */
function assignPurposeIds(input: PurposeInputValue[], existing: PurposeRow[]): PurposeRow[] {
  const known = new Set(existing.map((p) => p.id));
  const seen = new Set<string>();
  const problems: { field: string; message: string }[] = [];
  const purposes = input.map((p, i) => {
    if (p.id !== undefined) {
      if (!known.has(p.id)) problems.push({ field: `purposes.${i}.id`, message: 'is not a purpose of this collection point' });
      else if (seen.has(p.id)) problems.push({ field: `purposes.${i}.id`, message: 'is listed twice' });
      seen.add(p.id);
    }
    return { id: p.id ?? uuidv7(), name: p.name, description: (p.description ?? '').trim(), required: p.required ?? false };
  });
  if (problems.length > 0) throw new AppError('validation_failed', `Invalid purposes: ${problems.map((d) => `${d.field} ${d.message}`).join('; ')}`, problems);
  return purposes;
}

// Field by field: purposes read back from jsonb come with their keys reordered, so comparing
// serialisations would see every resubmitted list as a change and bump notice_version for nothing.
function samePurposes(a: PurposeRow[], b: PurposeRow[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => {
      const q = b[i]!;
      return p.id === q.id && p.name === q.name && p.description === q.description && p.required === q.required;
    })
  );
}

/** Checks the asset, assigns purpose ids and a display_id (CP001, ... unless chosen), inserts. */
async function insertCollectionPoint(tx: TenantTx, id: string, at: Date, input: CreateCollectionPointInput): Promise<CollectionPointRow> {
  const asset = await assetRepo(tx).get(input.asset_id);
  if (!asset) throw new AppError('validation_failed', 'asset_id names no asset of this organization', [{ field: 'asset_id', message: 'no such asset' }]);
  if (asset.status !== 'active') {
    throw new AppError('validation_failed', 'The asset is inactive: reactivate it first', [{ field: 'asset_id', message: 'asset is inactive' }]);
  }
  const points = collectionPointRepo(tx);
  const fields = { id, asset_id: asset.id, name: input.name, notice: input.notice, purposes: assignPurposeIds(input.purposes, []), at };
  if (input.display_id !== undefined) {
    const row = await points.insert({ ...fields, display_id: input.display_id });
    if (!row) throw new AppError('conflict', `display_id ${input.display_id} is already used by another collection point`);
    return row;
  }
  // CP001, CP002, ...: skip numbers someone chose by hand.
  for (let attempt = 0; attempt < 100; attempt++) {
    const n = await points.nextDisplayNumber();
    const displayId = `CP${String(n).padStart(3, '0')}`;
    if (await points.displayIdTaken(displayId)) continue;
    const row = await points.insert({ ...fields, display_id: displayId });
    if (row) return row;
  }
  throw new AppError('conflict', 'Could not assign a display_id: choose one');
}

export function createCollectionPointService({ db, clock }: CollectionPointServiceDeps) {
  return {
    createAsset(ctx: TenantContext, input: CreateAssetInput) {
      const id = uuidv7();
      const at = clock.now();
      const event = { action: 'asset.created', targetType: 'asset', targetId: id, details: { kind: input.kind, status: 'active' } };
      return withTenant(db, ctx.orgId, (tx) => alongsideAudit(tx, ctx, at, event, assetRepo(tx).insert({ id, name: input.name, kind: input.kind, at })));
    },

    listAssets(ctx: TenantContext, q: { status?: string; limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return withTenant(db, ctx.orgId, async (tx) => ({ ...(await assetRepo(tx).list({ status: q.status, limit, offset })), limit, offset }));
    },

    getAsset(ctx: TenantContext, id: string) {
      return withTenant(db, ctx.orgId, async (tx) => (await assetRepo(tx).get(id)) ?? Promise.reject(assetNotFound()));
    },

    updateAsset(ctx: TenantContext, id: string, input: UpdateAssetInput): Promise<AssetRow> {
      const at = clock.now();
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await assetRepo(tx).update(id, input, at);
        if (!row) throw assetNotFound();
        const { previous_status: previousStatus, changed_fields: fields, ...asset } = row;
        // The entry names what really changed, which only the update knows: one more statement after it.
        await recordAudit(tx, ctx, at, {
          action: 'asset.updated',
          targetType: 'asset',
          targetId: asset.id,
          details: { fields, ...(asset.status !== previousStatus ? { status: asset.status, previous_status: previousStatus } : {}) },
        });
        return asset;
      });
    },

    createCollectionPoint(ctx: TenantContext, input: CreateCollectionPointInput): Promise<CollectionPointRow> {
      const id = uuidv7();
      const at = clock.now();
      const event = {
        action: 'collection_point.created',
        targetType: 'collection_point',
        targetId: id,
        details: { asset_id: input.asset_id.toLowerCase(), notice_version: 1 },
      };
      // The entry goes out with the first statement; any refusal rolls both back.
      return withTenant(db, ctx.orgId, (tx) => alongsideAudit(tx, ctx, at, event, insertCollectionPoint(tx, id, at, input)));
    },

    listCollectionPoints(ctx: TenantContext, q: { asset_id?: string; status?: string; limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return withTenant(db, ctx.orgId, async (tx) => ({
        ...(await collectionPointRepo(tx).list({ assetId: q.asset_id, status: q.status, limit, offset })),
        limit,
        offset,
      }));
    },

    getCollectionPoint(ctx: TenantContext, idOrDisplayId: string) {
      return withTenant(db, ctx.orgId, async (tx) => (await collectionPointRepo(tx).find(idOrDisplayId)) ?? Promise.reject(pointNotFound()));
    },

    updateCollectionPoint(ctx: TenantContext, idOrDisplayId: string, input: UpdateCollectionPointInput): Promise<CollectionPointRow> {
      return withTenant(db, ctx.orgId, async (tx) => {
        const points = collectionPointRepo(tx);
        const current = await points.find(idOrDisplayId, { forUpdate: true });
        if (!current) throw pointNotFound();
        const purposes = input.purposes ? assignPurposeIds(input.purposes, current.purposes) : undefined;
        const changed = {
          name: input.name !== undefined && input.name !== current.name,
          notice: input.notice !== undefined && input.notice !== current.notice,
          purposes: purposes !== undefined && !samePurposes(purposes, current.purposes),
          status: input.status !== undefined && input.status !== current.status,
        };
        const bumpVersion = changed.notice || changed.purposes;
        const at = clock.now();
        const event = {
          action: 'collection_point.updated',
          targetType: 'collection_point',
          targetId: current.id,
          details: {
            fields: Object.keys(changed).filter((k) => changed[k as keyof typeof changed]),
            notice_version: current.notice_version + (bumpVersion ? 1 : 0),
            ...(changed.status ? { status: input.status, previous_status: current.status } : {}),
          },
        };
        return alongsideAudit(tx, ctx, at, event, points.update(current.id, { ...input, purposes, bumpVersion }, at));
      });
    },
  };
}

export type CollectionPointService = ReturnType<typeof createCollectionPointService>;

/** For other features, inside their own tenant transaction: a collection point by UUID or display_id. */
export function findCollectionPoint(tx: TenantTx, idOrDisplayId: string) {
  return collectionPointRepo(tx).findWithAsset(idOrDisplayId);
}
