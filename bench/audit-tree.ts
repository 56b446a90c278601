// The audit tree at scale (issue 32 item 6): N audit entries of one organization written (one
// statement per 10,000, as unsealed entries), then sealed by the sequencer into the chain and the
// Merkle tree, a checkpoint signed, and proofs asked for through the service: how long, how big.
// Usage: DATABASE_URL=postgres://.../scratch npx tsx bench/audit-tree.ts [N]   (default 1,000,000;
// without DATABASE_URL an in-memory embedded store)
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { createSequencer } from '../src/features/transparency/index.js';
import { createReceiptService } from '../src/features/receipts/index.js';
import { createSigningKeyring } from '../src/platform/crypto/signing-keys.js';
import { systemClock } from '../src/platform/clock.js';
import { tenantReads, withTenant } from '../src/platform/db/tenant-tx.js';
import { consistencyRanges, fromHex, inclusionRanges, leafHash, nodesFor, proofFrom, verifyConsistency, verifyInclusion } from '../src/features/audit/merkle.js';
import { transparencyRepo } from '../src/features/transparency/repo.js';

const n = Number(process.argv[2] ?? 1_000_000);
const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.DATA_DIR ?? 'memory://' });
await migrate(db);
const orgId = randomUUID();
await db.system.query(`insert into organizations (id, slug, name, created_at) values ($1, $2, 'bench', now())`, [orgId, `bench-${orgId.slice(0, 8)}`]);
const keyring = createSigningKeyring('bench-secret-of-at-least-32-characters-long');
const receipts = createReceiptService({ db, clock: systemClock, keyring, publicUrl: new URL('http://localhost:3000') });
const sequencer = createSequencer({ db, clock: systemClock, signer: receipts.signer, log: console });
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;

let t = performance.now();
const BATCH = 10_000;
for (let i = 0; i < n; i += BATCH) {
  await withTenant(db, orgId, (tx) =>
    tx.query(
      `insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, target_id, details)
       select $1::uuid, gen_random_uuid(), now(), 'api_key', $1::uuid, 'bench.write', 'bench', g::text, jsonb_build_object('i', g)
         from generate_series($2::int, $3::int) g`,
      [orgId, i, Math.min(i + BATCH, n) - 1],
    ),
  );
}
console.log(`${db.kind}: ${n} entries written in ${ms(t)}`);

t = performance.now();
const sealed = await sequencer.sealNow(orgId);
const sealMs = performance.now() - t;
console.log(`${db.kind}: sealed ${sealed.sealed} entries (chain + tree) and signed checkpoint ${sealed.checkpoint?.tree_size} in ${sealMs.toFixed(0)} ms, ${((sealMs / sealed.sealed) * 1000).toFixed(0)} µs/entry`);
console.log(`${db.kind}: checkpoint JWS ${sealed.checkpoint?.jws.length} characters`);

// One more entry, and the cost of sealing it and signing a checkpoint at 1M (the per-minute work).
await withTenant(db, orgId, (tx) => tx.query(`insert into audit_log (org_id, id, at, actor_type, actor_id, action, target_type, details) values ($1, gen_random_uuid(), now(), 'api_key', $1, 'bench.one', 'bench', '{}')`, [orgId]));
t = performance.now();
const one = await sequencer.sealNow(orgId);
console.log(`${db.kind}: one more entry sealed and checkpoint ${one.checkpoint?.tree_size} signed in ${ms(t)}`);

const repo = transparencyRepo(tenantReads(db, orgId));
const size = one.tree_size;
const root = fromHex(one.root_hash);
let proofBytes = 0;
let hashes = 0;
t = performance.now();
const samples = 200;
for (let s = 0; s < samples; s++) {
  const m = Math.floor(Math.random() * size);
  const ranges = inclusionRanges(m, size);
  const nodes = await repo.nodes(nodesFor(ranges));
  const proof = proofFrom(ranges, nodes);
  const [leaf] = await tenantReads(db, orgId).query<{ leaf_hash: Uint8Array }>('select leaf_hash from audit_log where org_id = $1 and seq = $2', [orgId, m + 1]);
  if (!verifyInclusion(m, size, Buffer.from(leaf!.leaf_hash), proof, root)) throw new Error(`inclusion proof of ${m} does not verify`);
  hashes += proof.length;
  proofBytes += JSON.stringify(proof.map((h) => h.toString('hex'))).length;
}
console.log(`${db.kind}: inclusion proof at size ${size}: ${(hashes / samples).toFixed(1)} hashes, ${(proofBytes / samples).toFixed(0)} bytes as JSON hex, ${((performance.now() - t) / samples).toFixed(2)} ms each (read + build + verify, ${samples} random entries)`);
t = performance.now();
hashes = 0;
for (let s = 0; s < samples; s++) {
  const m = 1 + Math.floor(Math.random() * (size - 1));
  const ranges = consistencyRanges(m, size);
  const proof = proofFrom(ranges, await repo.nodes(nodesFor(ranges)));
  hashes += proof.length;
  const first = await withTenant(db, orgId, async (tx) => {
    const r = transparencyRepo(tx);
    const { rangeHash, completeNodes, nodeKey } = await import('../src/features/audit/merkle.js');
    const nodes = await r.nodes(completeNodes(0, m));
    return rangeHash(0, m, (id) => nodes.get(nodeKey(id))!);
  });
  if (!verifyConsistency(m, size, first, root, proof)) throw new Error(`consistency proof ${m}..${size} does not verify`);
}
console.log(`${db.kind}: consistency proof to size ${size}: ${(hashes / samples).toFixed(1)} hashes, ${((performance.now() - t) / samples).toFixed(2)} ms each (read + build + verify)`);
if (db.kind === 'postgres') {
  const [sz] = await db.system.query<{ nodes: string; log: string }>(
    `select pg_size_pretty(pg_total_relation_size('audit_tree_nodes')) as nodes, pg_size_pretty(pg_total_relation_size('audit_log')) as log`,
  );
  console.log(`postgres: audit_tree_nodes ${sz!.nodes} (with index), audit_log ${sz!.log}`);
}
void leafHash;
await sequencer.stop();
await db.close();
