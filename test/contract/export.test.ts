// The export for the regulator (contract §10): GET /api/v1/export over real HTTP, owners only, streamed;
// the archive holds the organization's records and nothing of another's; verifyExport (what `assent
// export verify` runs) passes on it and names the first problem of a tampered copy.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signManifest, verifyExport, verifyManifestSignature } from '../../src/features/export/index.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { archiveFiles, jsonLines, rewriteArchive, sha256Line } from '../support/archive.js';

let t: TestApp;
let port: number;
let dir: string;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'assent-export-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface World {
  org: TestOrg;
  key: string;
  owner: string;
  marker: string;
  ticket: string;
  point: string;
}

async function api(org: TestOrg, key: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, body?: unknown) {
  const res = await t.call({ method, url, org, key, body });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

async function member(org: TestOrg, role: 'owner' | 'admin'): Promise<string> {
  const email = `export-${randomBytes(5).toString('hex')}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(org.id, user.id, role);
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } });
  return res.json().access_token as string;
}

/** An organization with one record of each kind (a notice in two versions, a consent and its withdrawal), made through the API. */
async function world(): Promise<World> {
  const org = await t.org();
  const key = await t.key(org, ['admin']);
  const marker = `marker-${randomBytes(4).toString('hex')}`;
  const ticket = await api(org, key, 'POST', '/grievance', { client_user_id: `${marker}-user`, subject: `${marker} subject`, description: 'd', category: 'erasure' });
  await api(org, key, 'PUT', `/grievance/${ticket.ticket_id}`, { status: 'in_progress' });
  await api(org, key, 'POST', `/grievance/${ticket.ticket_id}/messages`, { message: `${marker} reply` });
  await api(org, key, 'POST', '/nominee', {
    user_id: `${marker}-user`,
    nominee_name: `${marker} nominee`,
    nominee_email: 'nominee@example.com',
    nominee_mobile: '+919876543210',
    relationship: 'sibling',
  });
  const asset = await api(org, key, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' });
  const point = await api(org, key, 'POST', '/api/v1/collection-points', {
    asset_id: asset.id,
    name: 'Sign-up',
    notice: `${marker} notice, first version`,
    purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
  });
  await api(org, key, 'PATCH', `/api/v1/collection-points/${point.id}`, { notice: `${marker} notice, second version` });
  const purposes = point.purposes.map((p: { id: string }) => ({ id: p.id, granted: true }));
  await api(org, key, 'POST', `/consent/${point.id}/consent`, { dp_id: `${marker}-dp`, purposes });
  await api(org, key, 'POST', `/consent/${point.id}/withdraw`, { dp_id: `${marker}-dp` });
  return { org, key, owner: await member(org, 'owner'), marker, ticket: ticket.ticket_id, point: point.id };
}

/** GET /api/v1/export over a real connection, the body streamed to a file. */
function download(org: TestOrg, headers: Record<string, string>, file: string): Promise<{ status: number; headers: Record<string, unknown>; body: string; trailers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/export', headers: { host: org.host, ...headers } }, (res) => {
      if (res.statusCode === 200) {
        pipeline(res, createWriteStream(file)).then(() => resolve({ status: 200, headers: res.headers, body: '', trailers: { ...res.trailers } }), reject);
        return;
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, trailers: {} }));
    });
    req.on('error', reject);
    req.end();
  });
}

let w: World;
let other: World;
let file: string;
let trailers: Record<string, unknown>;
beforeAll(async () => {
  w = await world();
  other = await world();
  file = join(dir, 'export.tar.gz');
  const res = await download(w.org, { authorization: `Bearer ${w.owner}` }, file);
  expect(res.status, res.body).toBe(200);
  // Announced before the body (Fastify separates the names with spaces).
  expect(String(res.headers.trailer).split(/[\s,]+/)).toEqual(['assent-manifest-sha256', 'assent-manifest-kid', 'assent-checkpoint-size', 'assent-checkpoint-root']);
  trailers = res.trailers;
  expect(res.headers['content-type']).toBe('application/gzip');
  expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="${w.org.slug}-export-\\d{8}T\\d{6}Z\\.tar\\.gz"$`));
}, 60_000);

describe('GET /api/v1/export', () => {
  test('an owner gets the archive; it verifies; it holds every kind of record of the organization', async () => {
    const report = await verifyExport(file);
    expect(report).toMatchObject({ ok: true, problem: null, organization: { id: w.org.id, slug: w.org.slug } });
    const files = await archiveFiles(file);
    expect(new Set(files.map((f) => f.root)).size).toBe(1);
    expect(files.slice(-2).map((f) => f.name)).toEqual(['MANIFEST.sha256', 'MANIFEST.jws']);
    // The manifest signed with the organization's current key (issue 32 item 5), and its hash and key as trailers.
    const jwksNow = (await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: w.org })).json();
    expect(report.manifest_signed_by).toBe(jwksNow.keys[0].kid);
    expect(report.keys_from).toBe('jwks.json');
    const checkpoints = jsonLines(files, 'audit-checkpoints');
    const latest = checkpoints.at(-1);
    expect(trailers).toEqual({
      'assent-manifest-sha256': report.manifest_sha256,
      'assent-manifest-kid': jwksNow.keys[0].kid,
      'assent-checkpoint-size': String(latest.tree_size),
      'assent-checkpoint-root': latest.root_hash,
    });
    const signed = await verifyManifestSignature(files.at(-1)!.content.toString(), jwksNow);
    expect(signed.manifest).toEqual({
      format: 'assent-export/3',
      organization: { id: w.org.id, slug: w.org.slug },
      exported_at: report.exported_at,
      manifest_sha256: report.manifest_sha256,
      audit_chain_head: report.audit!.head,
      audit_checkpoint: { tree_size: latest.tree_size, root_hash: latest.root_hash, jws: latest.jws },
    });
    // The export sealed every entry and signed a checkpoint of them all: the latest covers the whole log.
    expect(latest.tree_size).toBe(report.audit!.entries);
    expect(report.tree).toEqual({ size: report.audit!.entries, root_hash: latest.root_hash, checkpoints: checkpoints.length, unsealed: 0 });
    expect(files.map((f) => f.name)).toEqual(expect.arrayContaining(['jwks.json', 'export.json', 'grievances/000001.jsonl', 'audit-log/000001.jsonl']));

    expect(jsonLines(files, 'grievances')).toEqual([expect.objectContaining({ ticket_id: w.ticket, status: 'in_progress', due_at: expect.any(String) })]);
    expect(jsonLines(files, 'grievance-history').map((h) => h.status)).toEqual(['open', 'in_progress']);
    expect(jsonLines(files, 'grievance-messages').map((m) => m.message)).toContain(`${w.marker} reply`);
    expect(jsonLines(files, 'nominees')).toEqual([expect.objectContaining({ nominee_name: `${w.marker} nominee` })]);
    const notices = jsonLines(files, 'notice-versions');
    expect(notices.map((n) => [n.collection_point_id, n.version, n.notice])).toEqual([
      [w.point, 1, `${w.marker} notice, first version`],
      [w.point, 2, `${w.marker} notice, second version`],
    ]);
    expect(notices[0].notice_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(jsonLines(files, 'consent-records').map((r) => [r.dp_id, r.consent_action, r.notice_version])).toEqual([
      [`${w.marker}-dp`, 'approved', 2],
      [`${w.marker}-dp`, 'revoked', 2],
    ]);
    // Every record carries its receipt, verified with the organization's keys in jwks.json.
    expect(jsonLines(files, 'consent-records').every((r) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(r.receipt))).toBe(true);
    const jwks = JSON.parse(files.find((f) => f.name === 'jwks.json')!.content.toString());
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' })]);
    expect(jwks.keys[0].d).toBeUndefined();
    expect(report.receipts).toEqual({ verified: 2, issued_late: 0, without_receipt: 0, keys: 1 });
    const audit = jsonLines(files, 'audit-log');
    expect(audit.map((e) => e.seq)).toEqual(audit.map((_, i) => i + 1));
    // The export is recorded before it starts, so the archive holds its own entry, last.
    expect(audit.at(-1)).toMatchObject({ action: 'organization.exported', target: { type: 'organization', id: w.org.id } });
    expect(report.audit).toEqual({ entries: audit.length, head: { seq: audit.length, hash: audit.at(-1).hash } });
    const meta = JSON.parse(files.find((f) => f.name === 'export.json')!.content.toString());
    expect(meta).toMatchObject({ format: 'assent-export/3', organization: { id: w.org.id, slug: w.org.slug }, audit_chain_head: { seq: audit.length } });
    expect(meta.tables['consent-records']).toEqual({ rows: 2, parts: ['consent-records/000001.jsonl'] });
  });

  test("another organization's records never appear", async () => {
    const files = await archiveFiles(file);
    const all = files.map((f) => f.content.toString('utf8')).join('\n');
    expect(all).toContain(w.marker);
    expect(all).not.toContain(other.marker);
    expect(all).not.toContain(other.org.id);
    expect(all).not.toContain(other.ticket);
  });

  test('an admin member is refused (403); an API key, even an admin one, is not a credential here (401); nothing: 401', async () => {
    const admin = await member(w.org, 'admin');
    const asAdmin = await download(w.org, { authorization: `Bearer ${admin}` }, join(dir, 'never-1'));
    expect(asAdmin.status).toBe(403);
    expect(JSON.parse(asAdmin.body)).toMatchObject({ code: expect.any(String) });
    const asKey = await download(w.org, { 'x-api-key': w.key }, join(dir, 'never-2'));
    expect(asKey.status).toBe(401);
    const anonymous = await download(w.org, {}, join(dir, 'never-3'));
    expect(anonymous.status).toBe(401);
    // Another organization's owner: not a member here.
    const stranger = await download(w.org, { authorization: `Bearer ${other.owner}` }, join(dir, 'never-4'));
    expect(stranger.status).toBe(403);
  });
});

describe('verifyExport names the first problem of a tampered archive', () => {
  test('a byte changed in a file: the manifest names that file', async () => {
    const bad = join(dir, 'byte.tar.gz');
    await rewriteArchive(file, bad, (f) => {
      if (f.name !== 'grievances/000001.jsonl') return f.content;
      const copy = Buffer.from(f.content);
      copy[copy.indexOf('"status":"in_progress"') + 11] = 'X'.charCodeAt(0);
      return copy;
    });
    const report = await verifyExport(bad);
    expect(report.ok).toBe(false);
    expect(report.problem).toMatch(/^grievances\/000001\.jsonl: its SHA-256 is [0-9a-f]{64}, MANIFEST\.sha256 says [0-9a-f]{64}: the file was changed$/);
  });

  /**
   * As an insider who holds the organization's signing key would: the archive rewritten with `change`,
   * then its manifest signed again (MANIFEST.jws over the new MANIFEST.sha256), so only what lies
   * under the manifest can give the change away. Without the key, see the next test.
   */
  async function rewriteSigned(from: string, to: string, change: Parameters<typeof rewriteArchive>[2]): Promise<void> {
    const unsigned = `${to}.unsigned.tar.gz`;
    await rewriteArchive(from, unsigned, change);
    const files = await archiveFiles(unsigned);
    const manifest = files.find((f) => f.name === 'MANIFEST.sha256')!.content;
    const before = JSON.parse(Buffer.from(files.find((f) => f.name === 'MANIFEST.jws')!.content.toString().split('.')[1]!, 'base64url').toString());
    const key = await withTenant(t.db, w.org.id, async (tx) => (await t.app.services.receipts.signer.prepare(tx, null)).key);
    const jws = await signManifest({ ...before, manifest_sha256: createHash('sha256').update(manifest).digest('hex') }, key);
    await rewriteArchive(unsigned, to, (f) => (f.name === 'MANIFEST.jws' ? Buffer.from(jws + '\n') : f.content));
  }

  test('a file changed and its sum fixed in the manifest, without the key: the signature gives the rewritten manifest away', async () => {
    const bad = join(dir, 'unsigned.tar.gz');
    let edited: Buffer | null = null;
    await rewriteArchive(file, bad, (f) => {
      if (f.name === 'nominees/000001.jsonl') return (edited = Buffer.from(f.content.toString().replace('nominee@example.com', 'someone@example.com')));
      if (f.name === 'MANIFEST.sha256') return Buffer.from(f.content.toString('utf8').replace(/^[0-9a-f]{64} {2}nominees\/000001\.jsonl$/m, sha256Line(edited!, 'nominees/000001.jsonl')));
      return f.content;
    });
    const report = await verifyExport(bad);
    expect(report.ok).toBe(false);
    expect(report.problem).toMatch(/^MANIFEST\.jws signs a manifest whose SHA-256 is [0-9a-f]{64}, MANIFEST\.sha256 has [0-9a-f]{64}: the manifest was rewritten$/);
    // Its signature removed, or the format put back to 1 to pass as an unsigned archive: still refused.
    const stripped = join(dir, 'stripped.tar.gz');
    await rewriteArchive(bad, stripped, (f) => (f.name === 'MANIFEST.jws' ? null : f.content));
    expect((await verifyExport(stripped)).problem).toBe("MANIFEST.jws is missing: a assent-export/3 archive's manifest is signed by the organization's key");
  });

  test("the archive's keys replaced (and everything re-signed with a key of the forger's): --jwks from outside names the key", async () => {
    const forged = join(dir, 'forged-keys.tar.gz');
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwk = await exportJWK(pair.publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    const published = (await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: w.org })).json();
    const fakeKeys = { keys: [{ ...jwk, kid, alg: 'EdDSA', use: 'sig', not_before: published.keys[0].not_before }] };
    const unsigned = `${forged}.unsigned.tar.gz`;
    let jwksFile: Buffer | null = null;
    await rewriteArchive(file, unsigned, (f) => {
      if (f.name === 'jwks.json') return (jwksFile = Buffer.from(JSON.stringify(fakeKeys)));
      if (f.name === 'MANIFEST.sha256') return Buffer.from(f.content.toString('utf8').replace(/^[0-9a-f]{64} {2}jwks\.json$/m, sha256Line(jwksFile!, 'jwks.json')));
      return f.content;
    });
    const files = await archiveFiles(unsigned);
    const before = JSON.parse(Buffer.from(files.find((f) => f.name === 'MANIFEST.jws')!.content.toString().split('.')[1]!, 'base64url').toString());
    const manifest = files.find((f) => f.name === 'MANIFEST.sha256')!.content;
    const jws = await signManifest({ ...before, manifest_sha256: createHash('sha256').update(manifest).digest('hex') }, { kid, privateKey: pair.privateKey as never });
    await rewriteArchive(unsigned, forged, (f) => (f.name === 'MANIFEST.jws' ? Buffer.from(jws + '\n') : f.content));
    // With the archive's own keys, the manifest verifies (the receipts, signed by the real key, do not).
    expect((await verifyExport(forged)).problem).toMatch(/receipt signature does not verify/);
    // With the organization's published keys from outside, the replaced key set is named at once.
    const outside = { keys: published.keys, source: 'https://acme.example/.well-known/jwks.json' };
    expect((await verifyExport(forged, { jwks: outside })).problem).toBe(
      `jwks.json holds key ${kid}, which is not among the organization's keys at https://acme.example/.well-known/jwks.json: the archive's keys were replaced`,
    );
    // And the genuine archive passes with the published keys.
    expect(await verifyExport(file, { jwks: outside })).toMatchObject({ ok: true, keys_from: 'https://acme.example/.well-known/jwks.json', manifest_signed_by: published.keys[0].kid });
  });

  test('an audit entry edited and its sum fixed in the manifest (re-signed by an insider with the key): the chain names that entry', async () => {
    const bad = join(dir, 'audit.tar.gz');
    const audit = jsonLines(await archiveFiles(file), 'audit-log');
    const victim = audit[1]!;
    let edited: Buffer | null = null;
    await rewriteSigned(file, bad, (f) => {
      if (f.name === 'audit-log/000001.jsonl') {
        const lines = f.content.toString('utf8').split('\n');
        const entry = JSON.parse(lines[1]!);
        entry.target.id = 'forged';
        lines[1] = JSON.stringify(entry);
        edited = Buffer.from(lines.join('\n'));
        return edited;
      }
      if (f.name === 'MANIFEST.sha256') {
        const text = f.content.toString('utf8').replace(/^[0-9a-f]{64} {2}audit-log\/000001\.jsonl$/m, sha256Line(edited!, 'audit-log/000001.jsonl'));
        return Buffer.from(text);
      }
      return f.content;
    });
    const report = await verifyExport(bad);
    expect(report.ok).toBe(false);
    expect(report.problem).toBe(`audit log entry 2 (${victim.id}), audit-log/000001.jsonl line 2: the entry fields differ from the content its hash covers`);
  });

  /** A copy with one consent-records line changed, its sum fixed in the manifest and the manifest re-signed (an insider with the key). */
  async function withRecord(name: string, change: (record: any) => void): Promise<string> {
    const bad = join(dir, name);
    let edited: Buffer | null = null;
    await rewriteSigned(file, bad, (f) => {
      if (f.name === 'consent-records/000001.jsonl') {
        const lines = f.content.toString('utf8').split('\n');
        const record = JSON.parse(lines[0]!);
        change(record);
        lines[0] = JSON.stringify(record);
        edited = Buffer.from(lines.join('\n'));
        return edited;
      }
      if (f.name === 'MANIFEST.sha256') {
        return Buffer.from(f.content.toString('utf8').replace(/^[0-9a-f]{64} {2}consent-records\/000001\.jsonl$/m, sha256Line(edited!, 'consent-records/000001.jsonl')));
      }
      return f.content;
    });
    return bad;
  }

  test('a receipt altered (sums fixed): its signature does not verify, naming the record', async () => {
    const [first] = jsonLines(await archiveFiles(file), 'consent-records');
    const bad = await withRecord('receipt.tar.gz', (r) => {
      const [header, payload, signature] = (r.receipt as string).split('.');
      const doc = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      doc.action = 'declined';
      r.receipt = [header, Buffer.from(JSON.stringify(doc)).toString('base64url'), signature].join('.');
    });
    const report = await verifyExport(bad);
    expect(report.ok).toBe(false);
    expect(report.problem).toMatch(new RegExp(`^consent record ${first.id}, consent-records/000001\\.jsonl line 1: receipt signature does not verify`));
  });

  test('a record altered under its intact receipt (sums fixed): the receipt names the field that differs', async () => {
    const [first] = jsonLines(await archiveFiles(file), 'consent-records');
    const bad = await withRecord('record.tar.gz', (r) => {
      r.consent_action = 'declined';
    });
    expect((await verifyExport(bad)).problem).toBe(`consent record ${first.id}, consent-records/000001.jsonl line 1: the receipt's action differs from the record's`);
  });

  test('an audit entry removed (sums fixed, re-signed): the chain names the gap', async () => {
    const bad = join(dir, 'gap.tar.gz');
    let edited: Buffer | null = null;
    await rewriteSigned(file, bad, (f) => {
      if (f.name === 'audit-log/000001.jsonl') {
        const lines = f.content.toString('utf8').split('\n');
        lines.splice(1, 1);
        edited = Buffer.from(lines.join('\n'));
        return edited;
      }
      if (f.name === 'MANIFEST.sha256') return Buffer.from(f.content.toString('utf8').replace(/^[0-9a-f]{64} {2}audit-log\/000001\.jsonl$/m, sha256Line(edited!, 'audit-log/000001.jsonl')));
      return f.content;
    });
    const report = await verifyExport(bad);
    expect(report.problem).toMatch(/^audit log entry 3 \(.+\), audit-log\/000001\.jsonl line 2: expected entry 2 here: entries 2\.\.2 are missing$/);
  });

  test('the same files repacked verify; a file added, emptied or removed, not an archive at all', async () => {
    const same = join(dir, 'same.tar.gz');
    await rewriteArchive(file, same, (f) => f.content);
    expect((await verifyExport(same)).ok).toBe(true);
    const added = join(dir, 'added.tar.gz');
    await rewriteArchive(file, added, (f) => f.content, [{ name: 'consent-records/000002.jsonl', content: Buffer.from('{}\n') }]);
    expect((await verifyExport(added)).problem).toBe('consent-records/000002.jsonl is not in MANIFEST.sha256: a file was added');
    const emptied = join(dir, 'emptied.tar.gz');
    await rewriteArchive(file, emptied, (f) => (f.name === 'nominees/000001.jsonl' ? Buffer.alloc(0) : f.content));
    expect((await verifyExport(emptied)).problem).toMatch(/^nominees\/000001\.jsonl: its SHA-256 is/);
    const removed = join(dir, 'removed.tar.gz');
    await rewriteArchive(file, removed, (f) => (f.name === 'nominees/000001.jsonl' ? null : f.content));
    expect((await verifyExport(removed)).problem).toBe('nominees/000001.jsonl is listed in MANIFEST.sha256 but missing from the archive');
    const garbage = join(dir, 'garbage.tar.gz');
    await pipeline(async function* () {
      yield Buffer.from('not a gzip file');
    }, createWriteStream(garbage));
    const report = await verifyExport(garbage);
    expect(report.ok).toBe(false);
    expect(report.problem).toMatch(/not a readable \.tar\.gz archive/);
  });

  test("a receipt back-dated before its key existed (signed with today's key): named, with the key's not_before (issue 32 item 3)", async () => {
    const org = await t.org();
    const key = await t.key(org, ['admin']);
    const owner = await member(org, 'owner');
    const asset = await api(org, key, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' });
    const point = await api(org, key, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice: 'n', purposes: [{ name: 'Account', required: true }] });
    const jwks = (await t.call({ method: 'GET', url: '/.well-known/jwks.json', org })).json();
    // The organization's clock put back a year: the record and its receipt say last year, the key is today's.
    const now = t.clock.now();
    t.clock.set(new Date(now.getTime() - 365 * 24 * 3_600_000));
    let record;
    try {
      record = await api(org, key, 'POST', `/consent/${point.id}/consent`, { dp_id: 'dp-backdated', purposes: [{ id: point.purposes[0].id, granted: true }] });
    } finally {
      t.clock.set(now);
    }
    const archive = join(dir, 'backdated.tar.gz');
    expect((await download(org, { authorization: `Bearer ${owner}` }, archive)).status).toBe(200);
    const exported = JSON.parse((await archiveFiles(archive)).find((f) => f.name === 'jwks.json')!.content.toString());
    expect(exported).toEqual(jwks);
    expect(exported.keys[0].not_before).toBe(now.toISOString());
    const report = await verifyExport(archive);
    expect(report.ok).toBe(false);
    expect(report.problem).toBe(
      `consent record ${record.consent_id}, consent-records/000001.jsonl line 1: receipt time ${new Date(now.getTime() - 365 * 24 * 3_600_000).toISOString()} is before its key ${jwks.keys[0].kid} became valid (not_before ${now.toISOString()}): back-dated, or signed with a key that did not exist then`,
    );
  });
});
