// Signed consent receipts (issue 18 item 2), on both stores through HTTP: every consent record and
// withdrawal carries a compact JWS (EdDSA, Ed25519) that verifies offline with nothing but the
// organization's /.well-known/jwks.json (jose's createLocalJWKSet, no database); a changed receipt does
// not; rotation keeps old receipts verifiable and signs new ones with the new kid; a data principal
// reads only their own receipts; the private key is stored sealed.
import { createHash, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, uniqueSlug, type TestApp, type TestOrg } from '../support/app.js';
import { createSigningKeyring, unseal, SealedKeyError } from '../../src/platform/crypto/signing-keys.js';
import { receiptMismatch, verifyReceipt, verifyReceiptFile } from '../../src/features/receipts/index.js';

type Tenant = TestOrg & { key: string };
type Response = Awaited<ReturnType<TestApp['call']>>;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

interface Point {
  id: string;
  displayId: string;
  purposes: { id: string; name: string; required: boolean }[];
}

async function point(a: Tenant, notice = 'Sign-up notice'): Promise<Point> {
  const assetId = (await ok(await t.call({ method: 'POST', url: '/api/v1/assets', org: a, key: a.key, body: { name: 'App', kind: 'mobile_app' } }))).id;
  const p = await ok(
    await t.call({
      method: 'POST',
      url: '/api/v1/collection-points',
      org: a,
      key: a.key,
      body: { asset_id: assetId, name: 'Sign-up', notice, purposes: [{ name: 'Account', required: true }, { name: 'Offers' }] },
    }),
  );
  return { id: p.id, displayId: p.display_id, purposes: p.purposes.map(({ id, name, required }: Point['purposes'][number]) => ({ id, name, required })) };
}

const record = (a: Tenant, p: Point, dpId: string, granted = [true, false]) =>
  t.call({ method: 'POST', url: `/consent/${p.id}/consent`, org: a, key: a.key, body: { dp_id: dpId, purposes: p.purposes.map((x, i) => ({ id: x.id, granted: granted[i]! })) } });

const receiptOf = async (a: Tenant, consentId: string) => ok(await t.call({ method: 'GET', url: `/api/v1/consents/${consentId}/receipt`, org: a, key: a.key }), 200);

/** What a verifier fetches once, over HTTP, before going offline. */
async function jwksOf(a: { host: string }): Promise<JSONWebKeySet> {
  const res = await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: a });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Offline verification: jose and the JWKS only. */
async function verifyOffline(jws: string, jwks: JSONWebKeySet) {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  return { document: JSON.parse(new TextDecoder().decode(payload)), header: protectedHeader };
}

async function mint(a: Tenant, dpId: string): Promise<string> {
  return (await ok(await t.call({ method: 'POST', url: `/api/v1/data-principals/${dpId}/tokens`, org: a, key: a.key, body: {} }))).access_token;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('a receipt for every record', () => {
  test('a consent and its withdrawal each carry a receipt that verifies offline with the JWKS alone and says what was recorded', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const given = await ok(await record(a, p, 'dp-1'));
    t.clock.advance(1000);
    const withdrawn = await ok(await t.call({ method: 'POST', url: `/consent/${p.id}/withdraw`, org: a, key: a.key, body: { dp_id: 'dp-1' } }));

    const jwks = await jwksOf(a);
    expect(jwks.keys).toEqual([{ kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: expect.any(String), alg: 'EdDSA', use: 'sig', not_before: expect.any(String) }]);
    const kid = jwks.keys[0]!.kid;

    const first = await receiptOf(a, given.consent_id);
    expect(first).toEqual({
      consent_id: given.consent_id,
      receipt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      kid,
      jwks_uri: `http://${a.slug}.localhost:3000/.well-known/jwks.json`,
      document: expect.any(Object),
    });
    const v1 = await verifyOffline(first.receipt, jwks);
    expect(v1.header).toEqual({ alg: 'EdDSA', kid, typ: 'consent-receipt+jws' });
    expect(v1.document).toEqual({
      version: 'assent-consent-receipt/1',
      schema: 'ISO/IEC TS 27560:2023',
      record_id: given.consent_id,
      previous_record_id: null,
      controller: { id: a.id, slug: a.slug, name: a.slug, url: `http://${a.slug}.localhost:3000`, jwks_uri: `http://${a.slug}.localhost:3000/.well-known/jwks.json` },
      principal: { dp_id: 'dp-1' },
      collection_point: { id: p.id, display_id: p.displayId, name: 'Sign-up' },
      notice: { version: 1, sha256: sha256('Sign-up notice') },
      purposes: [
        { ...p.purposes[0], granted: true, state: 'given' },
        { ...p.purposes[1], granted: false, state: 'refused' },
      ],
      action: 'partial_consent',
      time: given.created_at,
      channel: 'api',
      request_id: null,
      event_id: null,
    });
    expect(first.document).toEqual(v1.document);

    const second = await receiptOf(a, withdrawn.consent_id);
    const v2 = await verifyOffline(second.receipt, jwks);
    expect(v2.document).toMatchObject({
      record_id: withdrawn.consent_id,
      previous_record_id: given.consent_id,
      action: 'revoked',
      time: withdrawn.created_at,
      purposes: [
        { id: p.purposes[0]!.id, granted: false, state: 'withdrawn' },
        { id: p.purposes[1]!.id, granted: false, state: 'withdrawn' },
      ],
    });

    // The verifier the export uses agrees, and the receipt matches the stored row.
    const rows = await t.db.system.query<{ consent_id: string; dp_id: string; collection_point_id: string; consent_action: string; notice_version: number; purposes: { id: string; granted: boolean }[]; created_at: Date; channel: string; receipt: string }>(
      'select id as consent_id, dp_id, collection_point_id, consent_action, notice_version, purposes, created_at, channel, receipt from consent_records where org_id = $1 order by created_at',
      [a.id],
    );
    expect(rows.map((r) => r.receipt)).toEqual([first.receipt, second.receipt]);
    for (const row of rows) {
      const { receipt } = await verifyReceipt(row.receipt, jwks);
      expect(receiptMismatch(receipt, row)).toBeNull();
    }
    expect(receiptMismatch((await verifyReceipt(rows[0]!.receipt, jwks)).receipt, rows[1]!)).toBe('record_id');
  });

  test('every path that appends a record signs it: the API, the data principal under /api/v1/me, the SDK surface; the previous record is chained', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const sdkKey = await t.key(a, ['sdk']);
    await ok(await record(a, p, 'dp-2', [true, true]));
    const token = await mint(a, 'dp-2');
    const bearer = { authorization: `Bearer ${token}` };
    await ok(await t.call({ method: 'POST', url: `/api/v1/me/consents/${p.id}`, org: a, headers: bearer, body: { purposes: p.purposes.map((x) => ({ id: x.id, granted: true })) } }));
    await ok(await t.call({ method: 'POST', url: `/api/v1/me/consents/${p.id}/withdraw`, org: a, headers: bearer }));
    const sdk = await t.call({
      method: 'POST',
      url: `/api/v1/internal/consent/${p.id}`,
      org: a,
      key: sdkKey,
      body: { userId: 'dp-2', purposes: p.purposes.map((x) => ({ purposeId: x.id, consented: 'accepted' })), action: 'approved' },
    });
    expect(sdk.statusCode, sdk.body).toBeLessThan(300);

    const rows = await t.db.system.query<{ id: string; channel: string; receipt: string | null }>(
      'select id, channel, receipt from consent_records where org_id = $1 order by created_at, id',
      [a.id],
    );
    expect(rows.map((r) => r.channel)).toEqual(['api', 'rights_center', 'rights_center', 'sdk']);
    const jwks = await jwksOf(a);
    let previous: string | null = null;
    for (const row of rows) {
      expect(row.receipt).not.toBeNull();
      const { document } = await verifyOffline(row.receipt!, jwks);
      expect(document).toMatchObject({ record_id: row.id, channel: row.channel, previous_record_id: previous });
      previous = row.id;
    }
  });

  test('a changed receipt does not verify: payload, header or signature', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const given = await ok(await record(a, p, 'dp-3'));
    const { receipt } = await receiptOf(a, given.consent_id);
    const jwks = await jwksOf(a);
    const [header, payload, signature] = receipt.split('.') as [string, string, string];

    const doc = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    doc.purposes[1].granted = true;
    doc.purposes[1].state = 'given';
    const forgedPayload = `${header}.${Buffer.from(JSON.stringify(doc)).toString('base64url')}.${signature}`;
    const otherKid = `${Buffer.from(JSON.stringify({ ...decodeProtectedHeader(receipt), kid: 'another' })).toString('base64url')}.${payload}.${signature}`;
    const sig = Buffer.from(signature, 'base64url');
    sig[0] = sig[0]! ^ 1;
    const flipped = `${header}.${payload}.${sig.toString('base64url')}`;
    for (const bad of [forgedPayload, otherKid, flipped]) {
      await expect(verifyOffline(bad, jwks)).rejects.toThrow();
      await expect(verifyReceipt(bad, jwks)).rejects.toThrow('receipt signature does not verify');
    }
    // Another organization's keys do not verify it either.
    const b = await t.tenant();
    await expect(verifyOffline(receipt, await jwksOf(b))).rejects.toThrow();
    await expect(verifyOffline(receipt, jwks)).resolves.toBeTruthy();
  });
});

describe('signing keys', () => {
  test('rotation: new receipts carry the new kid, the old key stays in the JWKS and old receipts still verify; audited', async () => {
    const a = await t.tenant();
    const p = await point(a);
    const before = await ok(await record(a, p, 'dp-4'));
    const [oldKey] = (await jwksOf(a)).keys;

    t.clock.advance(1000);
    const rotated = await ok(await t.call({ method: 'POST', url: '/api/v1/organization/signing-keys/rotate', org: a, key: a.key }));
    expect(rotated).toEqual({
      kid: expect.any(String),
      alg: 'EdDSA',
      current: true,
      created_at: t.clock.now().toISOString(),
      retired_at: null,
      public_jwk: { kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: rotated.kid, alg: 'EdDSA', use: 'sig' },
      retired_kid: oldKey!.kid,
    });
    expect(rotated.kid).not.toBe(oldKey!.kid);

    const after = await ok(await record(a, p, 'dp-4', [true, true]));
    const jwks = await jwksOf(a);
    expect(jwks.keys.map((k) => k.kid)).toEqual([oldKey!.kid, rotated.kid]);
    const oldReceipt = await receiptOf(a, before.consent_id);
    const newReceipt = await receiptOf(a, after.consent_id);
    expect((await verifyOffline(oldReceipt.receipt, jwks)).header.kid).toBe(oldKey!.kid);
    expect((await verifyOffline(newReceipt.receipt, jwks)).header.kid).toBe(rotated.kid);
    expect(newReceipt.kid).toBe(rotated.kid);
    // The JWKS from before the rotation cannot verify what the new key signed.
    await expect(verifyOffline(newReceipt.receipt, { keys: [oldKey!] })).rejects.toThrow();

    const list = await ok(await t.call({ method: 'GET', url: '/api/v1/organization/signing-keys', org: a, key: a.key }), 200);
    expect(list.map((k: { kid: string; current: boolean; retired_at: string | null }) => [k.kid, k.current, k.retired_at])).toEqual([
      [oldKey!.kid, false, rotated.created_at],
      [rotated.kid, true, null],
    ]);
    const audit = await t.db.system.query<{ actor_type: string; target_id: string; details: unknown }>(
      "select actor_type, target_id, details from audit_log where org_id = $1 and action = 'signing_key.rotated'",
      [a.id],
    );
    expect(audit.map((r) => ({ ...r }))).toEqual([{ actor_type: 'api_key', target_id: rotated.kid, details: { kid: rotated.kid, retired_kid: oldKey!.kid } }]);
  });

  test('a new organization has its key at once; the private part is stored sealed, never in plain text', async () => {
    const a = await t.tenant();
    const jwks = await jwksOf(a);
    expect(jwks.keys).toHaveLength(1);
    const [row] = await t.db.system.query<{ kid: string; public_jwk: { x: string }; private_key_enc: string }>(
      'select kid, public_jwk, private_key_enc from signing_keys where org_id = $1',
      [a.id],
    );
    expect(row!.kid).toBe(jwks.keys[0]!.kid);
    expect(row!.private_key_enc).toMatch(/^enc:v1:[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    // Not a key as stored: neither the column nor its decoded parts parse as one, and no part carries
    // the PKCS#8 prefix of an Ed25519 private key.
    const ED25519_PKCS8_PREFIX = '302e020100300506032b657004220420';
    const parts = row!.private_key_enc.slice('enc:v1:'.length).split('.').map((s) => Buffer.from(s, 'base64'));
    for (const part of [Buffer.from(row!.private_key_enc), ...parts]) {
      expect(part.toString('hex')).not.toContain(ED25519_PKCS8_PREFIX);
      expect(() => createPrivateKey({ key: part, format: 'der', type: 'pkcs8' })).toThrow();
    }
    // Another secret cannot open it.
    expect(() => unseal(Buffer.alloc(32, 7), row!.private_key_enc)).toThrow(SealedKeyError);
    expect(() => createSigningKeyring('some-other-secret-key-0123456789abcdef').open(row!.kid, row!.private_key_enc)).not.toThrow();
    await expect(createSigningKeyring('some-other-secret-key-0123456789abcdef').open(row!.kid, row!.private_key_enc)).rejects.toThrow(SealedKeyError);
  });

  test('an organization older than its key (created before migration 0018) gets one on its first consent, or at start-up', async () => {
    const slug = uniqueSlug();
    const [org] = await t.db.system.query<{ id: string }>(
      "insert into organizations (id, slug, name, created_at) values (gen_random_uuid(), $1, 'Old', now()) returning id",
      [slug],
    );
    const a: Tenant = { id: org!.id, slug, host: `${slug}.localhost`, key: '' };
    a.key = await t.key(a);
    expect((await jwksOf(a)).keys).toEqual([]);
    const p = await point(a);
    const given = await ok(await record(a, p, 'dp-5'));
    const jwks = await jwksOf(a);
    expect(jwks.keys).toHaveLength(1);
    expect((await verifyOffline((await receiptOf(a, given.consent_id)).receipt, jwks)).header.kid).toBe(jwks.keys[0]!.kid);

    const slug2 = uniqueSlug();
    const [org2] = await t.db.system.query<{ id: string }>(
      "insert into organizations (id, slug, name, created_at) values (gen_random_uuid(), $1, 'Old too', now()) returning id",
      [slug2],
    );
    expect(await t.app.services.accounts.ensureSigningKeys()).toBeGreaterThanOrEqual(1);
    expect(await t.app.services.accounts.ensureSigningKeys()).toBe(0);
    const keys = await t.db.system.query('select kid from signing_keys where org_id = $1', [org2!.id]);
    expect(keys).toHaveLength(1);
  });

  test('the JWKS on a host that names no organization is a 404', async () => {
    const res = await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: `${uniqueSlug()}.localhost` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No organization at this address', code: 'not_found' });
    expect((await t.call({ method: 'GET', url: '/.well-known/jwks.json' })).statusCode).toBe(404);
  });
});

describe('key validity (issue 32 item 3)', () => {
  test('the JWKS gives each key not_before and, once retired, not_after', async () => {
    const t0 = new Date('2026-03-01T10:00:00.000Z');
    t.clock.set(t0);
    const a = await t.tenant();
    expect((await jwksOf(a)).keys).toEqual([expect.objectContaining({ kty: 'OKP', not_before: t0.toISOString() })]);
    expect((await jwksOf(a)).keys[0]).not.toHaveProperty('not_after');
    t.clock.advance(3_600_000);
    await ok(await t.call({ method: 'POST', url: '/api/v1/organization/signing-keys/rotate', org: a, key: a.key }));
    const [old, current] = (await jwksOf(a)).keys as Array<Record<string, unknown>>;
    expect(old).toMatchObject({ not_before: t0.toISOString(), not_after: t.clock.now().toISOString() });
    expect(current).toMatchObject({ not_before: t.clock.now().toISOString() });
    expect(current).not.toHaveProperty('not_after');
  });

  test("a receipt back-dated before its key existed, or signed after its key's rotation, does not verify; one within it does", async () => {
    const t0 = new Date('2026-04-01T10:00:00.000Z');
    t.clock.set(t0);
    const a = await t.tenant();
    const p = await point(a);
    t.clock.advance(1000);
    const honest = await ok(await record(a, p, 'dp-valid'));
    // The organization's own clock (here, the injected one) put a year back: the service signs a record
    // "of last year" with today's key. The key's not_before gives it away.
    t.clock.set(new Date(t0.getTime() - 365 * 24 * 3_600_000));
    const backdated = await ok(await record(a, p, 'dp-backdated'));
    t.clock.set(new Date(t0.getTime() + 2000));
    const jwks = await jwksOf(a);
    const kid = jwks.keys[0]!.kid;
    expect((await verifyReceipt((await receiptOf(a, honest.consent_id)).receipt, jwks)).kid).toBe(kid);
    await expect(verifyReceipt((await receiptOf(a, backdated.consent_id)).receipt, jwks)).rejects.toThrow(
      `receipt time 2025-04-01T10:00:00.000Z is before its key ${kid} became valid (not_before ${t0.toISOString()}): back-dated, or signed with a key that did not exist then`,
    );
    // The signature itself is good: only the validity check refuses it.
    await expect(verifyOffline((await receiptOf(a, backdated.consent_id)).receipt, jwks)).resolves.toBeDefined();
    // A minute of clock skew between processes is tolerated.
    t.clock.set(new Date(t0.getTime() - 30_000));
    const skewed = await ok(await record(a, p, 'dp-skew'));
    expect((await verifyReceipt((await receiptOf(a, skewed.consent_id)).receipt, jwks)).kid).toBe(kid);

    // Signed with a key after it was retired: a rotation recorded as having happened before the receipt.
    const b = await t.tenant();
    t.clock.set(new Date(t0.getTime() + 10 * 60_000));
    const bp = await point(b);
    const signed = await ok(await record(b, bp, 'dp-late'));
    t.clock.set(new Date(t0.getTime() + 5 * 60_000));
    await ok(await t.call({ method: 'POST', url: '/api/v1/organization/signing-keys/rotate', org: b, key: b.key }));
    const bJwks = await jwksOf(b);
    await expect(verifyReceipt((await receiptOf(b, signed.consent_id)).receipt, bJwks)).rejects.toThrow(
      `receipt time ${new Date(t0.getTime() + 10 * 60_000).toISOString()} is after its key ${bJwks.keys[0]!.kid} was retired (not_after ${new Date(t0.getTime() + 5 * 60_000).toISOString()}): signed with a retired key`,
    );
    t.clock.set(new Date());
  });

  test('assent receipt verify: a receipt file against the keys from a URL or a file; each problem named', async () => {
    t.clock.set(new Date('2026-05-01T10:00:00.000Z'));
    const a = await t.tenant();
    const p = await point(a);
    const good = await receiptOf(a, (await ok(await record(a, p, 'dp-file'))).consent_id);
    t.clock.set(new Date('2026-01-01T10:00:00.000Z'));
    const backdated = await receiptOf(a, (await ok(await record(a, p, 'dp-file-2'))).consent_id);
    t.clock.set(new Date());
    const jwks = await jwksOf(a);
    const dir = mkdtempSync(join(tmpdir(), 'assent-receipt-'));
    // The organization's /.well-known/jwks.json as a verifier fetches it: over real HTTP.
    const server = http.createServer((req, res) => {
      if (req.url === '/.well-known/jwks.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
    try {
      writeFileSync(join(dir, 'good.jws'), good.receipt + '\n');
      writeFileSync(join(dir, 'good.json'), JSON.stringify(good));
      writeFileSync(join(dir, 'backdated.jws'), backdated.receipt);
      writeFileSync(join(dir, 'jwks.json'), JSON.stringify(jwks));
      writeFileSync(join(dir, 'nothing.txt'), 'not a receipt');
      const online = await verifyReceiptFile(join(dir, 'good.jws'), url);
      expect(online).toMatchObject({ ok: true, problem: null, kid: jwks.keys[0]!.kid, receipt: { principal: { dp_id: 'dp-file' } } });
      expect((await verifyReceiptFile(join(dir, 'good.json'), join(dir, 'jwks.json'))).ok).toBe(true);
      expect((await verifyReceiptFile(join(dir, 'backdated.jws'), url)).problem).toMatch(/^receipt time 2026-01-01T10:00:00\.000Z is before its key .+ became valid/);
      expect((await verifyReceiptFile(join(dir, 'nothing.txt'), url)).problem).toBe(`${join(dir, 'nothing.txt')} does not hold a compact JWS (three base64url parts joined by dots)`);
      expect((await verifyReceiptFile(join(dir, 'good.jws'), url.replace('jwks.json', 'nope'))).problem).toMatch(/answered 404: give the organization's \/\.well-known\/jwks\.json$/);
      expect((await verifyReceiptFile(join(dir, 'good.jws'), 'http://127.0.0.1:9/.well-known/jwks.json')).problem).toMatch(/^could not fetch the keys at http:\/\/127\.0\.0\.1:9\/\.well-known\/jwks\.json: /);
      expect((await verifyReceiptFile(join(dir, 'good.jws'), join(dir, 'missing.json'))).problem).toBe(`cannot read the keys file ${join(dir, 'missing.json')}: ENOENT`);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reading receipts', () => {
  test("a data principal reads their own receipts with their token, and another person's is a 404", async () => {
    const a = await t.tenant();
    const p = await point(a);
    const mine = await ok(await record(a, p, 'dp-6'));
    const theirs = await ok(await record(a, p, 'dp-7'));
    const token = await mint(a, 'dp-6');
    const bearer = { authorization: `Bearer ${token}` };

    const res = await t.call({ method: 'GET', url: `/api/v1/me/consents/${mine.consent_id}/receipt`, org: a, headers: bearer });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(await receiptOf(a, mine.consent_id));

    const NOT_FOUND = { error: 'Consent record not found', code: 'not_found' };
    for (const id of [theirs.consent_id, '00000000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const other = await t.call({ method: 'GET', url: `/api/v1/me/consents/${id}/receipt`, org: a, headers: bearer });
      expect(other.statusCode).toBe(404);
      expect(other.json()).toEqual(NOT_FOUND);
    }
    // Another organization's record is no record of this one.
    const b = await t.tenant();
    const res2 = await t.call({ method: 'GET', url: `/api/v1/consents/${mine.consent_id}/receipt`, org: b, key: b.key });
    expect(res2.statusCode).toBe(404);
    expect(res2.json()).toEqual(NOT_FOUND);
  });
  // A record made before receipts existed (404 until the backfill signs it): receipt-backfill.test.ts.
});
