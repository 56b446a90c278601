// Receipt signing keys from the real `assent` command and server (issue 18 item 2), on the store of the
// project: `assent secret generate`; an organization created by the CLI has its key; `signing-key
// rotate` keeps the old key public; `receipt verify` checks one receipt against a JWKS; the secret:
// required by a server on PostgreSQL, kept in DATA_DIR/secret.key (0600, with a warning) on the
// embedded store when unset.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { RECEIPT_VERSION, signReceipt, type ConsentReceipt } from '../../src/features/receipts/index.js';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { cliJson, createCliStore, killServers, request, runCli, startServer, uniqueSlug, type CliStore } from './child.js';

vi.setConfig({ testTimeout: 120_000 });

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterAll(async () => {
  await killServers();
  await store?.drop();
});

test('assent secret generate prints a new 32-byte key each time, and opens no store', async () => {
  const a = await runCli(['secret', 'generate'], { DATA_DIR: '/nonexistent/never-opened', DATABASE_URL: '' });
  const b = await runCli(['secret', 'generate', '--json'], { DATA_DIR: '/nonexistent/never-opened', DATABASE_URL: '' });
  expect(a.code, a.stderr).toBe(0);
  expect(a.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
  expect(JSON.parse(b.stdout).secret_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(JSON.parse(b.stdout).secret_key).not.toBe(a.stdout.trim());
  expect(existsSync('/nonexistent/never-opened')).toBe(false);
});

test('a short ASSENT_SECRET_KEY is refused', async () => {
  const r = await runCli(['org', 'create', uniqueSlug()], { ...store.env, ASSENT_SECRET_KEY: 'too-short' });
  expect(r.code).toBe(1);
  expect(r.stderr).toBe('assent: ASSENT_SECRET_KEY must be at least 32 characters: generate one with `assent secret generate`\n');
});

test('an organization created by the CLI has a signing key; rotate keeps the old one, list shows both', async () => {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  const [first] = await cliJson<{ kid: string; current: boolean }[]>(['signing-key', 'list', slug], store.env);
  expect(first).toMatchObject({ kid: expect.any(String), current: true, retired_at: null });
  const rotated = await cliJson<{ kid: string; retired_kid: string }>(['signing-key', 'rotate', slug], store.env);
  expect(rotated.retired_kid).toBe(first!.kid);
  const keys = await cliJson<{ kid: string; current: boolean }[]>(['signing-key', 'list', slug], store.env);
  expect(keys.map((k) => [k.kid, k.current])).toEqual([
    [first!.kid, false],
    [rotated.kid, true],
  ]);
  const human = await runCli(['signing-key', 'list', slug], store.env);
  expect(human.stdout.split('\n')[0]).toMatch(/^KID\s+CREATED\s+RETIRED\s+CURRENT$/);
  const [row] = await store.query<{ private_key_enc: string }>('select private_key_enc from signing_keys where kid = $1', [rotated.kid]);
  expect(row!.private_key_enc).toMatch(/^enc:v1:/);
});

test.runIf(storeKind() === 'postgres')('a server on PostgreSQL without ASSENT_SECRET_KEY refuses to start, saying what to do', async () => {
  const r = await runCli(['serve'], { ...store.env, ASSENT_SECRET_KEY: '', PORT: '0', HOST: '127.0.0.1' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('assent: ASSENT_SECRET_KEY is not set: with DATABASE_URL (PostgreSQL) it is required');
  expect(r.stderr).toContain('assent secret generate');
});

test.runIf(storeKind() === 'pglite')('the embedded store without ASSENT_SECRET_KEY: a development key in DATA_DIR/secret.key (0600), a warning, and the JWKS served', async () => {
  const slug = uniqueSlug();
  const env = { ...store.env, ASSENT_SECRET_KEY: '' };
  const file = join(store.dataDir!, 'secret.key');
  await cliJson(['org', 'create', slug], env);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const secret = readFileSync(file, 'utf8').trim();
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const server = await startServer(env);
  expect(server.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('ASSENT_SECRET_KEY is not set'))).toBe(true);
  const jwks = await request(server.port, { method: 'GET', path: '/.well-known/jwks.json', host: `${slug}.localhost` });
  expect(jwks.status).toBe(200);
  expect(JSON.parse(jwks.body).keys).toHaveLength(1);
  expect(await server.stop()).toBe(0);
  expect(readFileSync(file, 'utf8').trim()).toBe(secret);
});

/** A collection point and one consent record of the organization as written before receipts existed (receipt null), by SQL; returns the record's id. */
async function oldRecord(slug: string): Promise<string> {
  const purpose = randomUUID();
  const [row] = await store.query<{ id: string }>(
    `with org as (select id from organizations where slug = $1),
     asset as (insert into assets (org_id, id, name, kind, status, created_at, updated_at) select id, gen_random_uuid(), 'App', 'website', 'active', now(), now() from org returning org_id, id),
     cp as (insert into collection_points (org_id, id, display_id, asset_id, name, notice, notice_version, purposes, status, created_at, updated_at)
            select org_id, gen_random_uuid(), 'CP001', id, 'Sign-up', 'The notice', 1, $2::text::jsonb, 'active', now(), now() from asset returning org_id, id),
     dp as (insert into data_principals (org_id, id, dp_id, created_at) select org_id, gen_random_uuid(), 'dp-old', now() from cp returning org_id, id)
     insert into consent_records (org_id, id, collection_point_id, data_principal_id, dp_id, consent_action, purposes, notice_version, channel, created_at, receipt)
     select dp.org_id, gen_random_uuid(), cp.id, dp.id, 'dp-old', 'approved', $3::text::jsonb, 1, 'api', now() - interval '30 days', null from dp, cp
     returning id`,
    [slug, JSON.stringify([{ id: purpose, name: 'Account', description: '', required: true }]), JSON.stringify([{ id: purpose, granted: true }])],
  );
  return row!.id;
}

test('assent receipts backfill signs records written before receipts and prints the count; the server does the same at start; through the control socket on the embedded store', async () => {
  const a = uniqueSlug();
  const b = uniqueSlug();
  await cliJson(['org', 'create', a], store.env);
  await cliJson(['org', 'create', b], store.env);
  const recordA = await oldRecord(a);
  const recordB = await oldRecord(b);

  const human = await runCli(['receipts', 'backfill', a], store.env);
  expect(human.code, human.stderr).toBe(0);
  expect(human.stdout).toBe(`Signed 1 late receipt (${a} 1)\n`);
  expect(await cliJson(['receipts', 'backfill', a], store.env)).toEqual({ signed: 0, organizations: [{ slug: a, signed: 0 }] });
  const unknown = await runCli(['receipts', 'backfill', uniqueSlug()], store.env);
  expect(unknown.code).toBe(1);
  const [stillB] = await store.query<{ receipt: string | null }>('select receipt from consent_records where id = $1', [recordB]);
  expect(stillB!.receipt).toBeNull();

  // A server signs the rest at start (every organization), then hourly.
  const server = await startServer(store.env);
  const deadline = Date.now() + 30_000;
  const signedLine = () => server.logs.find((l) => l.msg === 'signed late receipts for consent records written before receipts existed');
  while (!signedLine() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(signedLine()).toMatchObject({ signed: 1, organizations: [{ slug: b, signed: 1 }] });

  // While it runs: on the embedded store the command travels over the control socket.
  const all = await runCli(['receipts', 'backfill'], store.env);
  expect(all.code, all.stderr).toBe(0);
  expect(all.stdout).toBe('No record without a receipt: nothing to sign\n');
  if (store.kind === 'pglite') expect(server.logs.some((l) => l.msg === 'ran a command for the assent CLI' && l.command === 'receipts backfill')).toBe(true);
  const key = (await cliJson<{ key: string }>(['key', 'create', b, '--scopes', 'consent'], store.env)).key;
  const res = await request(server.port, { method: 'GET', path: `/api/v1/consents/${recordB}/receipt`, host: `${b}.localhost`, key });
  expect(res.status, res.body).toBe(200);
  expect(res.json().document).toMatchObject({ record_id: recordB, issued_late: true, principal: { dp_id: 'dp-old' } });
  expect(await server.stop()).toBe(0);
  const [a1] = await store.query<{ receipt: string | null }>('select receipt from consent_records where id = $1', [recordA]);
  expect(a1!.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
});

test('assent receipt verify: exit 0 with what the receipt says; a receipt signed outside its key validity: exit 1 naming it', async () => {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  const notBefore = '2026-06-01T00:00:00.000Z';
  const dir = mkdtempSync(join(tmpdir(), 'assent-receipt-cli-'));
  try {
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...jwk, kid, alg: 'EdDSA', use: 'sig', not_before: notBefore }] }));
    const receipt = (time: string): ConsentReceipt => ({
      version: RECEIPT_VERSION,
      schema: 'ISO/IEC TS 27560:2023',
      record_id: randomUUID(),
      previous_record_id: null,
      controller: { id: randomUUID(), slug: 'acme', name: 'Acme', url: 'http://acme.localhost:3000', jwks_uri: 'http://acme.localhost:3000/.well-known/jwks.json' },
      principal: { dp_id: 'user-42' },
      collection_point: { id: randomUUID(), display_id: 'CP001', name: 'Checkout' },
      notice: { version: 1, sha256: 'a'.repeat(64) },
      purposes: [{ id: randomUUID(), name: 'Order delivery', required: true, granted: true, state: 'given' as const }],
      action: 'approved' as const,
      time,
      channel: 'api' as const,
      request_id: null,
      event_id: null,
    });
    writeFileSync(join(dir, 'good.jws'), await signReceipt(receipt('2026-07-01T10:00:00.000Z'), { kid, privateKey: privateKey as never }));
    writeFileSync(join(dir, 'old.jws'), await signReceipt(receipt('2025-07-01T10:00:00.000Z'), { kid, privateKey: privateKey as never }));
    const env = { DATA_DIR: '/nonexistent/never-opened', DATABASE_URL: '' };
    const good = await runCli(['receipt', 'verify', join(dir, 'good.jws'), '--jwks', join(dir, 'jwks.json')], env);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe(
      `Receipt verified with key ${kid} of ${join(dir, 'jwks.json')}:\n  approved by user-42 at CP001 (Checkout) of acme, 2026-07-01T10:00:00.000Z\n  notice version 1; purposes: Order delivery given\n`,
    );
    const old = await runCli(['receipt', 'verify', join(dir, 'old.jws'), '--jwks', join(dir, 'jwks.json'), '--json'], env);
    expect(old.code).toBe(1);
    expect(JSON.parse(old.stdout)).toMatchObject({
      ok: false,
      problem: `receipt time 2025-07-01T10:00:00.000Z is before its key ${kid} became valid (not_before ${notBefore}): back-dated, or signed with a key that did not exist then`,
    });
    const missing = await runCli(['receipt', 'verify', join(dir, 'good.jws')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--jwks');
    expect(existsSync('/nonexistent/never-opened')).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
