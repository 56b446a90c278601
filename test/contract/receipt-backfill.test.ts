// Late receipts (issue 18): consent records and withdrawals written before receipts existed (simulated
// here with SQL: rows with receipt null, as migration 0018 left them) get a receipt from the backfill,
// through the one signer. On both stores: the receipt verifies with nothing but the JWKS (jose), keeps
// the record's own time and says it was issued late; a second run signs nothing; two runs at once sign
// each record once; another organization's records are untouched; the receipt endpoint answers 200;
// the export carries the receipts and verifies; the database lets the service set a missing receipt and
// nothing else.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { uuidv7 } from '../../src/platform/ids.js';
import { createExportService, verifyExport } from '../../src/features/export/index.js';
import { BACKFILL_BATCH, createReceiptBackfillJob, receiptMismatch, verifyReceipt } from '../../src/features/receipts/index.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await buildTestApp();
  dir = mkdtempSync(join(tmpdir(), 'assent-backfill-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

interface Point {
  id: string;
  displayId: string;
  purposes: { id: string; name: string; required: boolean }[];
}

async function api(a: Tenant, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, status = method === 'POST' ? 201 : 200) {
  const res = await t.call({ method, url, org: a, key: a.key, body });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
  return res.json();
}

async function point(a: Tenant, notice = 'Sign-up notice'): Promise<Point> {
  const asset = await api(a, 'POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' });
  const p = await api(a, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice, purposes: [{ name: 'Account', required: true }, { name: 'Offers' }] });
  return { id: p.id, displayId: p.display_id, purposes: p.purposes.map(({ id, name, required }: Point['purposes'][number]) => ({ id, name, required })) };
}

/**
 * A record as written before migration 0018: the same row the service writes, without a receipt
 * (the owner connection with the tenant set, so row-level security admits it). Returns its id.
 */
async function oldRecord(a: TestOrg, p: Point, dpId: string, o: { action: string; granted: boolean[]; at: Date; noticeVersion?: number; channel?: string }): Promise<string> {
  const id = uuidv7();
  await t.db.system.transaction(async (tx) => {
    await tx.query("select set_config('app.org_id', $1, true)", [a.id]);
    await tx.query('insert into data_principals (org_id, id, dp_id, created_at) values ($1, gen_random_uuid(), $2, $3) on conflict (org_id, dp_id) do nothing', [a.id, dpId, o.at]);
    await tx.query(
      `insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, request_id, event_id, channel, created_at, receipt)
       select $1, $2, $3, d.id, $4, $5, $6::text::jsonb, $7, null, null, $8, $9, null from data_principals d where d.org_id = $1 and d.dp_id = $4`,
      [a.id, id, p.id, dpId, o.action, JSON.stringify(p.purposes.map((x, i) => ({ id: x.id, granted: o.granted[i]! }))), o.noticeVersion ?? 1, o.channel ?? 'api', o.at],
    );
  });
  return id;
}

async function jwksOf(a: TestOrg): Promise<JSONWebKeySet> {
  const res = await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: a });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Offline: jose and the JWKS, nothing else. */
async function verifyOffline(jws: string, jwks: JSONWebKeySet) {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  return { document: JSON.parse(new TextDecoder().decode(payload)), header: protectedHeader };
}

const receiptsOf = (a: TestOrg) =>
  t.db.system.query<{ id: string; receipt: string | null }>('select id, receipt from consent_records where org_id = $1 order by id', [a.id]);

describe('the backfill signs records written before receipts existed', () => {
  test('a consent and its withdrawal get late receipts that verify with the JWKS alone, keep the record time and say they were issued late; the endpoint answers 200', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const givenAt = new Date(t.clock.now().getTime() - 40 * 86_400_000);
    const withdrawnAt = new Date(givenAt.getTime() + 86_400_000);
    const given = await oldRecord(a, p, 'dp-old', { action: 'partial_consent', granted: [true, false], at: givenAt });
    const withdrawn = await oldRecord(a, p, 'dp-old', { action: 'revoked', granted: [false, false], at: withdrawnAt });

    const before = await t.call({ method: 'GET', url: `/api/v1/consents/${given}/receipt`, org: a, key: a.key });
    expect(before.statusCode).toBe(404);
    expect(before.json()).toEqual({
      error: 'This consent record has no receipt yet: it was recorded before receipts were signed, and the backfill has not reached it',
      code: 'not_found',
    });

    t.clock.advance(5_000);
    const signedAt = t.clock.now().toISOString();
    const report = await t.app.services.receipts.backfill({ org: { id: a.id, slug: a.slug }, wait: true });
    expect(report).toEqual({ signed: 2, organizations: [{ id: a.id, slug: a.slug, signed: 2 }], busy: [] });

    const jwks = await jwksOf(a);
    const kid = jwks.keys[0]!.kid;
    const first = await api(a, 'GET', `/api/v1/consents/${given}/receipt`);
    const v1 = await verifyOffline(first.receipt, jwks);
    expect(v1.header).toEqual({ alg: 'EdDSA', kid, typ: 'consent-receipt+jws' });
    expect(v1.document).toEqual({
      version: 'assent-consent-receipt/1',
      schema: 'ISO/IEC TS 27560:2023',
      record_id: given,
      previous_record_id: null,
      controller: { id: a.id, slug: a.slug, name: a.slug, url: `http://${a.slug}.localhost:3000`, jwks_uri: `http://${a.slug}.localhost:3000/.well-known/jwks.json` },
      principal: { dp_id: 'dp-old' },
      collection_point: { id: p.id, display_id: p.displayId, name: 'Sign-up' },
      notice: { version: 1, sha256: sha256('Sign-up notice') },
      purposes: [
        { ...p.purposes[0], granted: true, state: 'given' },
        { ...p.purposes[1], granted: false, state: 'refused' },
      ],
      action: 'partial_consent',
      time: givenAt.toISOString(),
      channel: 'api',
      request_id: null,
      event_id: null,
      issued_late: true,
      issued_at: signedAt,
    });
    expect(first.document).toEqual(v1.document);

    const second = await api(a, 'GET', `/api/v1/consents/${withdrawn}/receipt`);
    const v2 = await verifyOffline(second.receipt, jwks);
    expect(v2.document).toMatchObject({
      record_id: withdrawn,
      previous_record_id: given,
      action: 'revoked',
      time: withdrawnAt.toISOString(),
      purposes: [
        { id: p.purposes[0]!.id, granted: false, state: 'withdrawn' },
        { id: p.purposes[1]!.id, granted: false, state: 'withdrawn' },
      ],
      issued_late: true,
      issued_at: signedAt,
    });
    // What the export's verifier checks: the receipt says what the stored record says.
    const { receipt } = await verifyReceipt(second.receipt, jwks);
    const [row] = await t.db.system.query<{ dp_id: string; collection_point_id: string; consent_action: string; notice_version: number; purposes: { id: string; granted: boolean }[]; created_at: Date; channel: string }>(
      'select dp_id, collection_point_id, consent_action, notice_version, purposes, created_at, channel from consent_records where org_id = $1 and id = $2',
      [a.id, withdrawn],
    );
    expect(receiptMismatch(receipt, { ...row!, consent_id: withdrawn })).toBeNull();
  });

  test('a second backfill signs nothing new and changes no receipt', async () => {
    const a = await t.tenant();
    const p = await point(a);
    await oldRecord(a, p, 'dp-1', { action: 'approved', granted: [true, true], at: new Date('2026-01-01T00:00:00Z') });
    expect((await t.app.services.receipts.backfill({ org: { id: a.id, slug: a.slug }, wait: true })).signed).toBe(1);
    const signed = await receiptsOf(a);
    t.clock.advance(60_000);
    expect(await t.app.services.receipts.backfill({ org: { id: a.id, slug: a.slug }, wait: true })).toEqual({ signed: 0, organizations: [{ id: a.id, slug: a.slug, signed: 0 }], busy: [] });
    expect(await receiptsOf(a)).toEqual(signed);
    // A record signed when it was written is left alone too.
    const live = await api(a, 'POST', `/consent/${p.id}/consent`, { dp_id: 'dp-2', purposes: p.purposes.map((x) => ({ id: x.id, granted: true })) });
    const liveReceipt = (await api(a, 'GET', `/api/v1/consents/${live.consent_id}/receipt`)).receipt;
    expect((await t.app.services.receipts.backfill({ org: { id: a.id, slug: a.slug }, wait: true })).signed).toBe(0);
    expect((await api(a, 'GET', `/api/v1/consents/${live.consent_id}/receipt`)).receipt).toBe(liveReceipt);
  });

  test('two backfills at once sign each record once, in batches; a third that does not wait skips or shares the work', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const n = 2 * BACKFILL_BATCH + 100;
    await t.db.system.transaction(async (tx) => {
      await tx.query("select set_config('app.org_id', $1, true)", [a.id]);
      // Written before receipts existed: a day before the backfill signs them.
      const before = new Date(t.clock.now().getTime() - 24 * 3_600_000);
      await tx.query("insert into data_principals (org_id, id, dp_id, created_at) select $1, gen_random_uuid(), 'dp-many-' || i, $3 from generate_series(1, $2::int) i", [a.id, n, before]);
      await tx.query(
        `insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, channel, created_at)
         select d.org_id, gen_random_uuid(), $2, d.id, d.dp_id, 'approved', $3::text::jsonb, 1, 'link', d.created_at from data_principals d where d.org_id = $1`,
        [a.id, p.id, JSON.stringify(p.purposes.map((x) => ({ id: x.id, granted: true })))],
      );
    });
    const org = { id: a.id, slug: a.slug };
    const runs = await Promise.all([
      t.app.services.receipts.backfill({ org, wait: true }),
      t.app.services.receipts.backfill({ org, wait: true }),
      t.app.services.receipts.backfill({ org, wait: false }),
    ]);
    const signed = runs.reduce((sum, r) => sum + r.signed, 0);
    expect(signed).toBe(n);
    const rows = await receiptsOf(a);
    expect(rows).toHaveLength(n);
    expect(rows.every((r) => r.receipt !== null)).toBe(true);
    // Every receipt names its own record, and verifies.
    const jwks = await jwksOf(a);
    for (const r of rows.filter((_, i) => i % 97 === 0)) expect((await verifyReceipt(r.receipt!, jwks)).receipt.record_id).toBe(r.id);
  });

  test("another organization's records are untouched by a backfill of one, and signed with their own key by a backfill of all", async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const pa = await point(a);
    const pb = await point(b);
    const ra = await oldRecord(a, pa, 'dp-a', { action: 'approved', granted: [true, true], at: new Date('2026-02-01T00:00:00Z') });
    const rb = await oldRecord(b, pb, 'dp-b', { action: 'approved', granted: [true, true], at: new Date('2026-02-01T00:00:00Z') });
    await t.app.services.receipts.backfill({ org: { id: a.id, slug: a.slug }, wait: true });
    expect((await receiptsOf(a))[0]!.receipt).not.toBeNull();
    expect(await receiptsOf(b)).toEqual([{ id: rb, receipt: null }]);

    const all = await t.app.services.receipts.backfill({ wait: true });
    expect(all.organizations).toContainEqual({ id: b.id, slug: b.slug, signed: 1 });
    expect(all.organizations.find((o) => o.id === a.id)).toBeUndefined();
    const receiptB = (await receiptsOf(b))[0]!.receipt!;
    expect((await verifyOffline(receiptB, await jwksOf(b))).document.controller.slug).toBe(b.slug);
    await expect(verifyOffline(receiptB, await jwksOf(a))).rejects.toThrow();
    expect((await verifyOffline((await receiptsOf(a))[0]!.receipt!, await jwksOf(a))).document.record_id).toBe(ra);
  });

  test('the job does the same at start; a record whose notice version was never kept gets a null notice SHA-256; the export carries every late receipt and verifies', async () => {
    const a = await t.tenant();
    const p = await point(a, 'Notice, first version');
    await api(a, 'PATCH', `/api/v1/collection-points/${p.id}`, { notice: 'Notice, second version' });
    // Version 1 as if replaced before migration 0019 (which kept only the versions current then).
    await t.db.system.query('delete from notice_versions where org_id = $1 and collection_point_id = $2 and version = 1', [a.id, p.id]);
    const v1 = await oldRecord(a, p, 'dp-x', { action: 'approved', granted: [true, true], at: new Date('2025-12-01T00:00:00Z'), noticeVersion: 1 });
    const v2 = await oldRecord(a, p, 'dp-y', { action: 'declined', granted: [false, false], at: new Date('2026-03-01T00:00:00Z'), noticeVersion: 2, channel: 'link' });
    const live = await api(a, 'POST', `/consent/${p.id}/consent`, { dp_id: 'dp-z', purposes: p.purposes.map((x) => ({ id: x.id, granted: true })) });

    const logged: object[] = [];
    const job = createReceiptBackfillJob(t.app.services.receipts, { info: (o) => logged.push(o), error: (o) => logged.push({ error: o }) }, 3_600_000);
    job.start();
    await job.stop(); // waits for the run at start
    expect(logged).toContainEqual({ signed: 2, organizations: expect.arrayContaining([{ slug: a.slug, signed: 2 }]) });

    const r1 = await api(a, 'GET', `/api/v1/consents/${v1}/receipt`);
    expect(r1.document.notice).toEqual({ version: 1, sha256: null });
    const r2 = await api(a, 'GET', `/api/v1/consents/${v2}/receipt`);
    expect(r2.document).toMatchObject({ notice: { version: 2, sha256: sha256('Notice, second version') }, channel: 'link', action: 'declined' });

    const file = join(dir, `${a.slug}.tar.gz`);
    const started = createExportService({ db: t.db, clock: t.clock, signer: t.app.services.receipts.signer, sequencer: t.app.sequencer }).exportOrganization({ id: a.id, slug: a.slug, name: a.slug });
    await Promise.all([pipeline(started.stream, createWriteStream(file)), started.done]);
    const report = await verifyExport(file);
    expect(report.problem).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.receipts).toEqual({ verified: 3, issued_late: 2, without_receipt: 0, keys: 1 });
    expect(live.consent_id).toBeDefined();
  });
});

describe('the database keeps receipts once set', () => {
  test('the service role may set a missing receipt, never change one set, nor any other column of a record', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const old = await oldRecord(a, p, 'dp-1', { action: 'approved', granted: [true, true], at: new Date('2026-01-01T00:00:00Z') });
    const live = await api(a, 'POST', `/consent/${p.id}/consent`, { dp_id: 'dp-2', purposes: p.purposes.map((x) => ({ id: x.id, granted: true })) });
    await expect(t.db.tenantTransaction(a.id, (tx) => tx.query("update consent_records set receipt = 'x.y.z' where org_id = $1 and id = $2", [a.id, live.consent_id]))).rejects.toThrow(
      /already has its receipt/,
    );
    await expect(t.db.tenantTransaction(a.id, (tx) => tx.query("update consent_records set dp_id = 'someone-else' where org_id = $1 and id = $2", [a.id, old]))).rejects.toThrow(
      /permission denied/,
    );
    // Not even the owner connection removes one.
    await expect(t.db.system.query('update consent_records set receipt = null where org_id = $1 and id = $2', [a.id, live.consent_id])).rejects.toThrow(/already has its receipt/);
    const set = await t.db.tenantTransaction(a.id, (tx) => tx.query("update consent_records set receipt = 'x.y.z' where org_id = $1 and id = $2 and receipt is null returning id", [a.id, old]));
    expect(set).toEqual([{ id: old }]);
  });
});
