// The audit log as a transparency log (issues 31 and 32): entries are written unsealed and the
// sequencer seals them into the hash chain and the Merkle tree and signs checkpoints; the public
// checkpoint and consistency routes and the inclusion proof verify with RFC 9162's algorithms; and
// each attack of issue 32 item 6 on the log is named: an entry changed with the whole log recomputed
// (by the store's own sealing, as an insider with the database would), a truncated log, a checkpoint
// signed by a key that is not the organization's, in the database (`audit verify`) and in an export.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recordAudit } from '../../src/features/audit/index.js';
import { fromHex, leafHash, MerkleFrontier, toHex, verifyConsistency, verifyInclusion } from '../../src/features/audit/merkle.js';
import { createExportService, verifyExport } from '../../src/features/export/index.js';
import { CHECKPOINT_FORMAT, signCheckpoint, verifyAuditLog, verifyCheckpointJws, type PublishedCheckpoint } from '../../src/features/transparency/index.js';
import { publishedKeysOf } from '../../src/features/receipts/index.js';
import type { TenantContext } from '../../src/platform/auth/access.js';
import { tenantReads, withTenant } from '../../src/platform/db/tenant-tx.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await buildTestApp();
  dir = mkdtempSync(join(tmpdir(), 'assent-transparency-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ctxFor = (org: TestOrg) => ({ orgId: org.id, actor: { type: 'api_key', id: '0190a0a0-0000-7000-8000-000000000001' }, requestId: 'req-tlog' }) as unknown as TenantContext;

async function entries(org: TestOrg, n: number, from = 0) {
  for (let i = from; i < from + n; i++) {
    await withTenant(t.db, org.id, (tx) => recordAudit(tx, ctxFor(org), t.clock.now(), { action: 'test.written', targetType: 'test', targetId: `n${i}`, details: { i } }));
  }
}

const jwksOf = (org: TestOrg) => publishedKeysOf(tenantReads(t.db, org.id));
const latest = async (org: TestOrg): Promise<PublishedCheckpoint> => {
  const res = await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/latest', org });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

/** The tree recomputed from the stored canonical texts (what an export's verifier does). */
async function rootAt(org: TestOrg, size: number): Promise<string> {
  const rows = await tenantReads(t.db, org.id).query<{ canonical: string }>(
    'select assent_audit_canonical(a) as canonical from audit_log a where a.org_id = $1::uuid and a.seq <= $2 order by a.seq',
    [org.id, size],
  );
  const f = new MerkleFrontier();
  for (const r of rows) f.append(leafHash(r.canonical));
  return toHex(f.root());
}

/**
 * An insider with the database (triggers off, as its owner could): runs `change`, then throws the chain
 * and the tree away and has the store seal every entry again, so the chain and the tree are whole and
 * consistent with the changed content; the stored checkpoints are kept unless `dropCheckpoints`.
 */
async function rewriteHistory(org: TestOrg, change: string, dropCheckpoints: boolean) {
  await t.db.system.transaction(async (tx) => {
    await tx.query(`select set_config('app.org_id', $1, true)`, [org.id]);
    await tx.query('set local session_replication_role = replica');
    await tx.query(change, [org.id]);
    await tx.query('update audit_log set seq = null, prev_hash = null, hash = null, leaf_hash = null where org_id = $1', [org.id]);
    await tx.query('delete from audit_tree_nodes where org_id = $1', [org.id]);
    await tx.query('delete from audit_chain_heads where org_id = $1', [org.id]);
    if (dropCheckpoints) await tx.query('delete from audit_checkpoints where org_id = $1', [org.id]);
  });
  await t.app.sequencer.sealNow(org.id);
}

describe('the sequencer', () => {
  test('entries wait unsealed until it runs; then seq 1..n, and a first checkpoint signed with the organization key', async () => {
    const org = await t.tenant();
    await entries(org, 5);
    const waiting = await tenantReads(t.db, org.id).query<{ n: string }>('select count(*)::text as n from audit_log where org_id = $1 and seq is null', [org.id]);
    expect(waiting[0]!.n).toBe('5');
    expect((await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/latest', org })).json()).toEqual({
      error: "This organization's audit log has no signed checkpoint yet",
      code: 'no_checkpoint',
    });
    const run = await t.app.sequencer.runOnce();
    expect(run.sealed).toBeGreaterThanOrEqual(5);
    const c = await latest(org);
    expect(c).toMatchObject({ tree_size: 5, tsa_token: null });
    expect(c.root_hash).toBe(await rootAt(org, 5));
    const { checkpoint, kid } = await verifyCheckpointJws(c.jws, await jwksOf(org));
    expect(checkpoint).toEqual({ format: CHECKPOINT_FORMAT, organization: { id: org.id, slug: org.slug }, tree_size: 5, root_hash: c.root_hash, timestamp: c.timestamp });
    expect(kid).toBe(c.kid);
  });

  test('a checkpoint at most once a minute while entries come; each consistent with the one before', async () => {
    const org = await t.tenant();
    await entries(org, 3);
    await t.app.sequencer.runOnce();
    const first = await latest(org);
    await entries(org, 4, 3);
    await t.app.sequencer.runOnce();
    expect((await latest(org)).tree_size).toBe(3); // sealed, not yet signed again
    t.clock.advance(61_000);
    await t.app.sequencer.runOnce();
    const second = await latest(org);
    expect(second.tree_size).toBe(7);
    const list = (await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints', org })).json();
    expect(list.data.map((c: PublishedCheckpoint) => c.tree_size)).toEqual([7, 3]);
    const res = await t.call({ method: 'GET', url: `/.well-known/assent/checkpoints/consistency?first=3&second=7`, org });
    expect(res.statusCode, res.body).toBe(200);
    const { proof } = res.json();
    expect(verifyConsistency(3, 7, fromHex(first.root_hash), fromHex(second.root_hash), proof.map(fromHex))).toBe(true);
    expect(verifyConsistency(3, 7, leafHash('another history'), fromHex(second.root_hash), proof.map(fromHex))).toBe(false);
    // Bad sizes: 400 naming the problem.
    expect((await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/consistency?first=7&second=3', org })).json()).toEqual({
      error: 'first (7) must not be larger than second (3)',
      code: 'bad_request',
    });
    expect((await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/consistency?first=3&second=99', org })).json()).toEqual({
      error: 'second (99) is beyond the audit tree, which has 7 entries',
      code: 'bad_request',
    });
    expect((await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/consistency?first=x&second=3', org })).statusCode).toBe(400);
  });

  test('an inclusion proof of an entry verifies against the signed root; owners and admins only', async () => {
    const org = await t.tenant(['admin']);
    await entries(org, 6);
    await t.app.sequencer.runOnce();
    const log = (await t.call({ method: 'GET', url: '/api/v1/audit-log?limit=200', org, key: org.key })).json();
    const entry = log.data.find((e: { details: { i?: number } }) => e.details.i === 2);
    const res = await t.call({ method: 'GET', url: `/api/v1/audit-log/${entry.id}/proof`, org, key: org.key });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json();
    expect(p).toMatchObject({ entry_id: entry.id, seq: entry.seq, leaf_index: entry.seq - 1 });
    expect(p.checkpoint.tree_size).toBe(p.tree_size);
    expect(p.root_hash).toBe(p.checkpoint.root_hash);
    expect(verifyInclusion(p.leaf_index, p.tree_size, fromHex(p.leaf_hash), p.proof.map(fromHex), fromHex(p.checkpoint.root_hash))).toBe(true);
    expect(verifyInclusion(p.leaf_index, p.tree_size, leafHash('forged'), p.proof.map(fromHex), fromHex(p.checkpoint.root_hash))).toBe(false);
    const small = await t.call({ method: 'GET', url: `/api/v1/audit-log/${entry.id}/proof?tree_size=${entry.seq - 1}`, org, key: org.key });
    expect(small.json()).toEqual({ error: `tree_size ${entry.seq - 1} does not contain entry ${entry.seq}: ask for ${entry.seq} or more`, code: 'bad_request' });
    const other = await t.tenant(['admin']);
    expect((await t.call({ method: 'GET', url: `/api/v1/audit-log/${entry.id}/proof`, org: other, key: other.key })).json()).toEqual({ error: 'No audit log entry with this id', code: 'not_found' });
    expect((await t.call({ method: 'GET', url: `/api/v1/audit-log/not-a-uuid/proof`, org, key: org.key })).statusCode).toBe(404);
  });

  test('the service role cannot seal, reorder or rewrite: no update on entries, no write on the tree or the head', async () => {
    const org = await t.tenant();
    await entries(org, 2);
    await t.app.sequencer.runOnce();
    for (const sql of [
      'update audit_log set seq = 9 where org_id = $1',
      "update audit_chain_heads set hash = repeat('1', 64) where org_id = $1",
      "insert into audit_tree_nodes (org_id, level, idx, hash) values ($1, 5, 0, '\\x00')",
    ]) {
      await expect(withTenant(t.db, org.id, (tx) => tx.query(sql, [org.id]))).rejects.toMatchObject({ code: '42501' });
    }
  });
});

describe('attacks are named (issue 32 item 6)', () => {
  test('an entry changed and the whole log recomputed: the stored checkpoint names it; with the checkpoints deleted too, a checkpoint kept outside does', async () => {
    const org = await t.tenant();
    await entries(org, 8);
    await t.app.sequencer.runOnce();
    const kept = await latest(org);
    const jwks = await jwksOf(org);
    expect(await verifyAuditLog(t.db, org.id, { jwks, kept: { jws: kept.jws, source: 'kept.json' } })).toMatchObject({ ok: true, kept: { tree_size: 8, ok: true }, checkpoints: 1 });

    await rewriteHistory(org, `update audit_log set details = '{"i": 99}' where org_id = $1 and seq = 4`, false);
    // The chain alone is whole again: that is the attack.
    const report = await verifyAuditLog(t.db, org.id, { jwks });
    expect(report.chain.ok).toBe(true);
    expect(report.problem).toMatch(/^the first 8 entries do not hash to the root of checkpoint 8 \(signed .+\): entries were changed after it was signed$/);

    await rewriteHistory(org, 'select $1::uuid', true);
    expect(await verifyAuditLog(t.db, org.id, { jwks })).toMatchObject({ ok: true }); // nothing left inside to contradict it
    const outside = await verifyAuditLog(t.db, org.id, { jwks, kept: { jws: kept.jws, source: 'kept.json' } });
    expect(outside.problem).toMatch(/^the first 8 entries do not hash to the root of the checkpoint from kept\.json \(signed .+\): entries were changed after it was signed$/);
  });

  test('a truncated log (its last entries deleted and the rest resealed, checkpoints deleted): a kept checkpoint names the removal', async () => {
    const org = await t.tenant();
    await entries(org, 6);
    await t.app.sequencer.runOnce();
    const kept = await latest(org);
    await rewriteHistory(org, 'delete from audit_log where org_id = $1 and seq > 4', true);
    const jwks = await jwksOf(org);
    expect((await verifyAuditLog(t.db, org.id, { jwks })).ok).toBe(true);
    expect((await verifyAuditLog(t.db, org.id, { jwks, kept: { jws: kept.jws, source: 'kept.json' } })).problem).toMatch(
      /^the checkpoint from kept\.json \(signed .+\) covers 6 entries, the log holds 4: entries were removed$/,
    );
  });

  test("a checkpoint signed by a key that is not the organization's, or of another organization: refused", async () => {
    const org = await t.tenant();
    await entries(org, 2);
    await t.app.sequencer.runOnce();
    const jwks = await jwksOf(org);
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const kid = await calculateJwkThumbprint(await exportJWK(pair.publicKey));
    const forged = await signCheckpoint(
      { format: CHECKPOINT_FORMAT, organization: { id: org.id, slug: org.slug }, tree_size: 2, root_hash: '0'.repeat(64), timestamp: t.clock.now().toISOString() },
      { kid, privateKey: pair.privateKey as never },
    );
    expect((await verifyAuditLog(t.db, org.id, { jwks, kept: { jws: forged, source: 'forged.json' } })).problem).toMatch(
      /^the checkpoint from forged\.json: the checkpoint's signature does not verify with the organization's keys/,
    );
    const other = await t.tenant();
    await entries(other, 1);
    await t.app.sequencer.runOnce();
    const theirs = await latest(other);
    expect((await verifyAuditLog(t.db, org.id, { jwks: { keys: [...jwks.keys, ...(await jwksOf(other)).keys] }, kept: { jws: theirs.jws, source: 'theirs.json' } })).problem).toBe(
      `the checkpoint from theirs.json is of organization ${other.slug} (${other.id}), not this one`,
    );
  });

  test('in an export: a kept checkpoint matches the archive; after a rewrite (checkpoints deleted) or a truncation, export verify --checkpoint names it', async () => {
    const org = await t.tenant();
    await entries(org, 5);
    await t.app.sequencer.runOnce();
    const kept = await latest(org);
    const exportTo = async (name: string) => {
      const file = join(dir, name);
      const started = createExportService({ db: t.db, clock: t.clock, signer: t.app.services.receipts.signer, sequencer: t.app.sequencer }).exportOrganization({ id: org.id, slug: org.slug, name: org.slug });
      await Promise.all([pipeline(started.stream, createWriteStream(file)), started.done]);
      return file;
    };
    const good = await exportTo('good.tar.gz');
    expect(await verifyExport(good, { checkpoint: { jws: kept.jws, source: 'kept.json' } })).toMatchObject({ ok: true, kept: { tree_size: 5 }, tree: { size: 5, checkpoints: 1 } });

    await rewriteHistory(org, `update audit_log set action = 'test.hidden' where org_id = $1 and seq = 2`, true);
    const rewritten = await exportTo('rewritten.tar.gz');
    expect((await verifyExport(rewritten)).ok).toBe(true); // signed by the organization itself: only an outside checkpoint can tell
    expect((await verifyExport(rewritten, { checkpoint: { jws: kept.jws, source: 'kept.json' } })).problem).toMatch(
      /^audit log, audit-log\/000001\.jsonl line 5: the first 5 entries do not hash to the root of the checkpoint from kept\.json \(signed .+\): entries were changed after it was signed$/,
    );

    await rewriteHistory(org, 'delete from audit_log where org_id = $1 and seq > 3', true);
    const truncated = await exportTo('truncated.tar.gz');
    expect((await verifyExport(truncated, { checkpoint: { jws: kept.jws, source: 'kept.json' } })).problem).toMatch(
      /^audit log: the checkpoint from kept\.json \(signed .+\) covers 5 entries, the archive holds 3: entries were removed$/,
    );
  });
});
