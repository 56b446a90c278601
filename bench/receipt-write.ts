// The cost of signed receipts on the consent write path (issue 18 item 2): N consent recordings through
// the consents service (record, data principal, audit entry, webhook event), one after another and then
// 8 at a time, with the real signer (one more statement sent beside the collection point's lookup: the
// current key and the previous record; an EdDSA signature; the JWS stored with the record) and with a
// signer that does nothing (no statement, no signature: the write path as it was before receipts).
// Also the signature alone (jose, Ed25519, the key cached), and opening a sealed key (once per key per process).
// Usage: [DATABASE_URL=postgres://...] npx tsx bench/receipt-write.ts [N]   (a scratch database: it creates an organization)
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createConsentService } from '../src/features/consents/service.js';
import { createCollectionPointService } from '../src/features/collection-points/service.js';
import { buildReceipt, createReceiptService, signReceipt, type ReceiptSigner } from '../src/features/receipts/index.js';
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { systemClock } from '../src/platform/clock.js';
import type { TenantContext } from '../src/platform/auth/access.js';

const n = Number(process.argv[2] ?? 2000);
const publicUrl = new URL('http://localhost:3000');
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.DATA_DIR ?? 'memory://' });
await migrate(db);
const keyring = createSigningKeyring('bench-secret-key-not-for-production-0123456789');
const orgId = randomUUID();
await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'bench', now())`, [orgId, `bench-${orgId.slice(0, 8)}`]);
const ctx = { orgId, slug: 'bench', orgName: 'bench', actor: { type: 'api_key', id: randomUUID(), scopes: ['admin'] }, requestId: 'bench' } as unknown as TenantContext;
const points = createCollectionPointService({ db, clock: systemClock });
const asset = await points.createAsset(ctx, { name: 'App', kind: 'mobile_app' });
const point = await points.createCollectionPoint(ctx, {
  asset_id: asset.id,
  name: 'Sign-up',
  notice: 'We use your data to run your account and, if you agree, to send you offers. '.repeat(10),
  purposes: [{ name: 'Account', required: true }, { name: 'Offers' }, { name: 'Research' }],
});
const choices = point.purposes.map((p, i) => ({ id: p.id, granted: i !== 1 }));

const real = createReceiptService({ db, clock: systemClock, keyring, publicUrl }).signer;
const none: ReceiptSigner = {
  prepare: async (tx) => ({ controller: { id: tx.orgId, slug: 'bench', name: 'bench', url: '' }, previousRecordId: null, key: new Promise(() => {}) }),
  sign: async () => '',
};

async function run(label: string, receipts: ReceiptSigner) {
  const consents = createConsentService({ db, clock: systemClock, receipts, publicUrl });
  const write = (i: number) => consents.record(ctx, point.id, { dp_id: `dp-${i % 1000}`, purposes: choices });
  const out: string[] = [];
  for (const parallel of [1, 8]) {
    for (let i = 0; i < 100; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
    const start = performance.now();
    for (let i = 0; i < n; i += parallel) await Promise.all(Array.from({ length: parallel }, (_, j) => write(i + j)));
    const ms = performance.now() - start;
    out.push(`parallel=${parallel}: ${((ms / n) * 1000).toFixed(0)} µs/write (${(n / (ms / 1000)).toFixed(0)} writes/s)`);
  }
  console.log(`${db.kind} ${label}: ${out.join('; ')}`);
}

// Alternating, twice, so neither goes first every time.
await run('no receipts   ', none);
await run('signed receipt', real);
await run('no receipts   ', none);
await run('signed receipt', real);

// The signature alone, with the key cached.
const generated = keyring.generate();
const key = { kid: generated.kid, privateKey: await keyring.open(generated.kid, generated.private_key_enc) };
const doc = buildReceipt({
  recordId: randomUUID(),
  previousRecordId: randomUUID(),
  controller: { id: orgId, slug: 'bench', name: 'bench', url: 'http://bench.localhost:3000' },
  dpId: 'dp-1',
  collectionPoint: point,
  choices,
  action: 'partial_consent',
  at: new Date(),
  channel: 'api',
  requestId: null,
  eventId: null,
});
for (let i = 0; i < 500; i++) await signReceipt(doc, key);
let start = performance.now();
for (let i = 0; i < 5000; i++) await signReceipt(doc, key);
console.log(`sign only (jose CompactSign, EdDSA, cached CryptoKey): ${(((performance.now() - start) / 5000) * 1000).toFixed(0)} µs/receipt, ${(await signReceipt(doc, key)).length} bytes`);
start = performance.now();
for (let i = 0; i < 200; i++) {
  const k = createSigningKeyring('bench-secret-key-not-for-production-0123456789');
  await k.open(generated.kid, generated.private_key_enc);
}
console.log(`open a sealed key (HKDF + AES-256-GCM + importKey, once per key per process): ${(((performance.now() - start) / 200) * 1000).toFixed(0)} µs`);
const [stored] = await db.system.query<{ n: number; without: number }>('select count(*)::int as n, count(*) filter (where receipt is null or receipt = \'\')::int as without from consent_records where org_id = $1', [orgId]);
console.log(`${db.kind}: ${stored!.n} records, ${stored!.without} without a receipt (the no-receipt runs)`);
await db.close();
