// Seeds the data principals whose own API (`/api/v1/me/consents`, issue 15 item 9) the bench measures:
// `principals` people (dp-me-0 ..), each with a consent on record at `perPerson` of the consent asset's
// collection points, recorded through the consent service (the same path as every other record). Their
// tokens are minted per server start by bench/run.ts (a token lives an hour at most).
import type { Database } from '../src/platform/db/types.js';
import { systemClock } from '../src/platform/clock.js';
import { createConsentService } from '../src/features/consents/service.js';
import { createReceiptService } from '../src/features/receipts/index.js';
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { BENCH_SECRET_KEY } from './secret.js';

export interface BenchPrincipals {
  /** dp_id values, each with consents at `perPerson` points. */
  dpIds: string[];
  /** Every collection point of the asset with its purpose ids, for the bodies of POST /api/v1/me/consents/{id}. */
  points: { id: string; purposes: string[] }[];
  perPerson: number;
}

export async function seedPrincipals(
  db: Database,
  o: { orgId: string; slug: string; pointIds: string[]; principals: number; perPerson?: number },
): Promise<BenchPrincipals> {
  const perPerson = Math.min(o.perPerson ?? 4, o.pointIds.length);
  const publicUrl = new URL('http://localhost:3000');
  const receipts = createReceiptService({ db, clock: systemClock, keyring: createSigningKeyring(BENCH_SECRET_KEY), publicUrl }).signer;
  const consents = createConsentService({ db, clock: systemClock, receipts, publicUrl });
  const ctx = {
    orgId: o.orgId,
    slug: o.slug,
    orgName: o.slug,
    actor: { type: 'api_key' as const, id: '00000000-0000-4000-8000-000000000002', scopes: ['admin' as const] },
    requestId: 'bench-seed',
  };
  const rows = await db.system.transaction(async (tx) => {
    await tx.query("select set_config('app.org_id', $1, true)", [o.orgId]);
    return tx.query<{ id: string; purposes: { id: string }[] }>('select id, purposes from collection_points where org_id = $1 and id = any($2::uuid[])', [
      o.orgId,
      o.pointIds,
    ]);
  });
  const byId = new Map(rows.map((r) => [r.id, r.purposes.map((p) => p.id)]));
  const points = o.pointIds.map((id) => ({ id, purposes: byId.get(id) ?? [] }));
  const dpIds: string[] = [];
  for (let i = 0; i < o.principals; i++) {
    const dpId = `dp-me-${i}`;
    dpIds.push(dpId);
    for (let k = 0; k < perPerson; k++) {
      const point = points[(i + k) % points.length]!;
      await consents.record(ctx, point.id, { dp_id: dpId, purposes: point.purposes.map((id, j) => ({ id, granted: j !== 2 || i % 2 === 0 })) });
    }
  }
  return { dpIds, points, perPerson };
}
