// The audit log's hash chain (contract §10): each entry stores SHA-256(prev_hash || canonical content)
// and the previous entry's hash, set by the sequencer when it seals the entry after its commit
// (features/transparency); parallel writers never fork the chain; a row changed or removed through SQL
// is named by the verifier (in the database and offline, from exported entries).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recordAudit, verifyAuditChain, verifyChainEntries, GENESIS_HASH, type ExportedAuditEntry } from '../../src/features/audit/index.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import type { TenantContext } from '../../src/platform/auth/access.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function ctxFor(org: TestOrg): TenantContext {
  return { orgId: org.id, actor: { type: 'api_key', id: '0190a0a0-0000-7000-8000-000000000001' }, requestId: 'req-chain' } as unknown as TenantContext;
}

interface Row {
  seq: string;
  id: string;
  prev_hash: string;
  hash: string;
  canonical: string;
}

/** The organization's entries in chain order, with the canonical text the store hashed (sealed first). */
async function rows(org: TestOrg): Promise<Row[]> {
  await t.app.sequencer.sealNow(org.id);
  return t.db.tenantTransaction(org.id, (tx) =>
    tx.query<Row>('select seq::text, id, prev_hash, hash, assent_audit_canonical(a) as canonical from audit_log a order by a.seq'),
  );
}

/**
 * Runs SQL as the database owner (a superuser in tests: row-level security does not apply, so the SQL
 * names the organization), with triggers off as an attacker with that access would have them (the
 * trigger that refuses to change a sealed entry included).
 */
async function tamper(org: TestOrg, sql: string, params: unknown[] = []) {
  await t.app.sequencer.sealNow(org.id);
  return t.db.system.transaction(async (tx) => {
    await tx.query(`select set_config('app.org_id', $1, true)`, [org.id]);
    await tx.query(`set local session_replication_role = replica`);
    return tx.query(sql, params);
  });
}

async function someEntries(org: TestOrg, n: number) {
  for (let i = 0; i < n; i++) {
    await withTenant(t.db, org.id, (tx) => recordAudit(tx, ctxFor(org), t.clock.now(), { action: 'test.written', targetType: 'test', targetId: `n${i}`, details: { i, note: 'ü "q" \\ \n' } }));
  }
}

describe('each entry carries its hash and the previous one', () => {
  test('through the API: seq 1, 2, ...; prev_hash links; hash = SHA-256(prev_hash || canonical); genesis is 64 zeros', async () => {
    const org = await t.tenant();
    for (let i = 0; i < 3; i++) {
      const res = await t.call({ method: 'POST', url: '/grievance', org, key: org.key, body: { client_user_id: `u${i}`, subject: 's', description: 'd', category: 'other' } });
      expect(res.statusCode, res.body).toBe(201);
    }
    const stored = await rows(org);
    expect(stored.map((r) => Number(r.seq))).toEqual([1, 2, 3]);
    expect(stored[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 0; i < stored.length; i++) {
      const r = stored[i]!;
      if (i > 0) expect(r.prev_hash).toBe(stored[i - 1]!.hash);
      expect(r.hash).toBe(sha(r.prev_hash + r.canonical));
      const parsed = JSON.parse(r.canonical);
      expect(parsed.slice(0, 4)).toEqual([1, i + 1, org.id, r.id]);
      expect(parsed[7]).toBe('grievance.created');
    }
    const log = (await t.call({ method: 'GET', url: '/api/v1/audit-log', org, key: org.key })).json();
    expect(log.data[0]).toMatchObject({ seq: 3, hash: stored[2]!.hash, prev_hash: stored[1]!.hash });
    expect(await verifyAuditChain(t.db, org.id)).toEqual({ ok: true, entries: 3, head: { seq: 3, hash: stored[2]!.hash }, broken: null });
  });

  test('each organization has its own chain', async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    await someEntries(a, 2);
    await someEntries(b, 1);
    expect((await rows(a)).map((r) => r.seq)).toEqual(['1', '2']);
    expect((await rows(b)).map((r) => [r.seq, r.prev_hash])).toEqual([['1', GENESIS_HASH]]);
  });

  test('an organization with no entries verifies as an empty chain', async () => {
    const org = await t.tenant();
    await t.app.sequencer.sealNow(org.id);
    expect(await verifyAuditChain(t.db, org.id)).toEqual({ ok: true, entries: 0, head: null, broken: null });
  });
});

describe('parallel writers', () => {
  test('40 transactions writing at once (each holding its transaction open after its entry): no fork, no gap', async () => {
    const org = await t.tenant();
    await someEntries(org, 1);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        withTenant(t.db, org.id, async (tx) => {
          await recordAudit(tx, ctxFor(org), t.clock.now(), { action: 'test.parallel', targetType: 'test', targetId: `p${i}` });
          await tx.query('select pg_sleep(0.005)');
        }),
      ),
    );
    const stored = await rows(org);
    expect(stored.map((r) => Number(r.seq))).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect(new Set(stored.map((r) => r.prev_hash)).size).toBe(41);
    expect((await verifyAuditChain(t.db, org.id)).ok).toBe(true);
  });

  test('parallel API writes from many requests: one chain', async () => {
    const org = await t.tenant();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.call({ method: 'POST', url: '/grievance', org, key: org.key, body: { client_user_id: `u${i}`, subject: 's', description: 'd', category: 'other' } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    await t.app.sequencer.sealNow(org.id);
    const report = await verifyAuditChain(t.db, org.id);
    expect(report).toMatchObject({ ok: true, entries: 20, head: { seq: 20 } });
  });

  // PGlite is one connection: a tick cannot run while a transaction is open there.
  test.skipIf(process.env.ASSENT_TEST_STORE !== 'postgres')('a tick that ran while an entry was not yet committed is not the last: the next one seals it', async () => {
    const org = await t.tenant();
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let written!: () => void;
    const entryWritten = new Promise<void>((resolve) => (written = resolve));
    const writing = withTenant(t.db, org.id, async (tx) => {
      await recordAudit(tx, ctxFor(org), t.clock.now(), { action: 'test.late_commit', targetType: 'test', targetId: null });
      written();
      await committing;
    });
    await entryWritten;
    expect(await t.app.sequencer.runOnce({ sweep: false })).toMatchObject({ sealed: 0 });
    commit();
    await writing;
    expect(await t.app.sequencer.runOnce({ sweep: false })).toMatchObject({ sealed: 1 });
    const [left] = await t.db.tenantTransaction(org.id, (tx) => tx.query<{ n: number }>('select count(*)::int as n from audit_log where seq is null'));
    expect(left!.n).toBe(0);
  });

  test('a rolled-back transaction leaves no entry and no gap', async () => {
    const org = await t.tenant();
    await someEntries(org, 1);
    await expect(
      withTenant(t.db, org.id, async (tx) => {
        await recordAudit(tx, ctxFor(org), t.clock.now(), { action: 'test.rolled_back', targetType: 'test', targetId: null });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await someEntries(org, 1);
    expect((await rows(org)).map((r) => r.seq)).toEqual(['1', '2']);
    expect((await verifyAuditChain(t.db, org.id)).ok).toBe(true);
  });
});

describe('tampering is named', () => {
  test('details changed through SQL: that entry is named (hash does not match)', async () => {
    const org = await t.tenant();
    await someEntries(org, 5);
    const before = await rows(org);
    const updated = await tamper(org, `update audit_log set details = '{"i": 99}' where org_id = $1 and seq = 3 returning id`, [org.id]);
    expect(updated).toHaveLength(1);
    const report = await verifyAuditChain(t.db, org.id);
    expect(report).toMatchObject({ ok: false, entries: 2, broken: { id: before[2]!.id, seq: 3, reason: 'hash does not match the entry content' } });
  });

  test('a row recomputed to hide the change: the next entry is named (its prev_hash no longer links)', async () => {
    const org = await t.tenant();
    await someEntries(org, 4);
    const before = await rows(org);
    await tamper(org, `update audit_log a set action = 'test.hidden' where org_id = $1 and seq = 2`, [org.id]);
    await tamper(org, `update audit_log a set hash = assent_audit_hash(a.prev_hash, a) where org_id = $1 and seq = 2`, [org.id]);
    const report = await verifyAuditChain(t.db, org.id);
    expect(report.broken).toEqual({ id: before[2]!.id, seq: 3, reason: 'prev_hash is not the hash of the entry before it' });
  });

  test('an entry deleted: the one after the gap is named; the last deleted: the head says so', async () => {
    const org = await t.tenant();
    await someEntries(org, 4);
    const before = await rows(org);
    await tamper(org, 'delete from audit_log where org_id = $1 and seq = 2', [org.id]);
    expect((await verifyAuditChain(t.db, org.id)).broken).toMatchObject({ id: before[2]!.id, seq: 3 });

    const other = await t.tenant();
    await someEntries(other, 2);
    await tamper(other, 'delete from audit_log where org_id = $1 and seq = 2', [other.id]);
    expect((await verifyAuditChain(t.db, other.id)).broken).toMatchObject({ id: null, seq: 2 });
  });

  test('offline, from exported entries: the same checks, plus fields that differ from the hashed content', async () => {
    const org = await t.tenant();
    await someEntries(org, 3);
    const stored = await rows(org);
    const entries: ExportedAuditEntry[] = stored.map((r) => {
      const c = JSON.parse(r.canonical);
      return { seq: c[1], org_id: c[2], id: c[3], at: c[4], actor: { type: c[5], id: c[6] }, action: c[7], target: { type: c[8], id: c[9] }, request_id: c[10], details: c[11], prev_hash: r.prev_hash, hash: r.hash, canonical: r.canonical };
    });
    const head = { seq: 3, hash: stored[2]!.hash };
    expect(verifyChainEntries(entries, head)).toMatchObject({ ok: true, entries: 3 });
    const edited = entries.map((e, i) => (i === 1 ? { ...e, details: { ...e.details, i: 7 } } : e));
    expect(verifyChainEntries(edited, head).broken).toMatchObject({ seq: 2, reason: 'the entry fields differ from the content its hash covers' });
    expect(verifyChainEntries(entries.slice(0, 2), head).broken).toMatchObject({ id: null, seq: 3 });
  });
});
