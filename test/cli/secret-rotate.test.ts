// `assent secret rotate` (issue 18): a new ASSENT_SECRET_KEY, from the real command and server, on the
// store of the project. Every signing key and sealed webhook secret is sealed again in one
// transaction; a current secret that does not open them is refused naming the key, with nothing
// changed; afterwards a server with the new key signs and the old receipts still verify, one with the
// old key refuses to start saying why; a second run changes nothing; on the embedded store the
// command refuses while a server runs, and rewrites DATA_DIR/secret.key when that was the secret.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { createSigningKeyring } from '../../src/platform/crypto/signing-keys.js';
import { secretBox } from '../../src/platform/webhooks/secrets.js';
import { CHILD_SECRET_KEY, cliJson, createCliStore, killServers, request, runCli, startServer, uniqueSlug, type CliStore, type ServerProcess } from './child.js';

vi.setConfig({ testTimeout: 180_000 });

const NEW_KEY = 'the-new-secret-key-for-the-rotation-test-0123456789';

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterAll(async () => {
  await killServers();
  await store?.drop();
});

async function ok(server: ServerProcess, slug: string, key: string, method: string, path: string, body?: unknown) {
  const res = await request(server.port, { method, path, host: `${slug}.localhost`, key, body });
  expect(res.status, `${method} ${path}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

/** A collection point, one consent through the API, and its receipt; returns the receipt JWS and the point. */
async function consent(server: ServerProcess, slug: string, key: string, dpId: string, pointId?: string) {
  let point = pointId;
  let purposes: { id: string }[];
  if (!point) {
    const asset = await ok(server, slug, key, 'POST', '/api/v1/assets', { name: 'App', kind: 'website' });
    const p = await ok(server, slug, key, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice: 'Notice', purposes: [{ name: 'Account', required: true }] });
    point = p.id as string;
    purposes = p.purposes;
  } else {
    purposes = (await ok(server, slug, key, 'GET', `/api/v1/collection-points/${point}`)).purposes;
  }
  const given = await ok(server, slug, key, 'POST', `/consent/${point}/consent`, { dp_id: dpId, purposes: purposes.map((x) => ({ id: x.id, granted: true })) });
  const receipt = (await ok(server, slug, key, 'GET', `/api/v1/consents/${given.consent_id}/receipt`)).receipt as string;
  return { receipt, point: point! };
}

async function jwks(server: ServerProcess, slug: string): Promise<JSONWebKeySet> {
  const res = await request(server.port, { method: 'GET', path: '/.well-known/jwks.json', host: `${slug}.localhost` });
  expect(res.status).toBe(200);
  return res.json();
}

const verifies = async (jws: string, set: JSONWebKeySet) => {
  await compactVerify(jws, createLocalJWKSet(set), { algorithms: ['EdDSA'] });
  return true;
};

const sealed = () =>
  store.query<{ kid: string; private_key_enc: string }>('select kid, private_key_enc from signing_keys order by kid');

test('rotation: refused with the wrong current key (nothing changed); then every key sealed again; the new key serves and signs, old receipts verify, the old key refuses to start', async () => {
  const env = { ...store.env, WEBHOOK_ALLOW_PRIVATE: '1' };
  const a = uniqueSlug();
  const b = uniqueSlug();
  await cliJson(['org', 'create', a], env);
  await cliJson(['org', 'create', b], env);
  await cliJson(['signing-key', 'rotate', b], env); // a retired key too
  const keyA = (await cliJson<{ key: string }>(['key', 'create', a, '--scopes', 'admin'], env)).key;

  const before = await startServer(env);
  const first = await consent(before, a, keyA, 'dp-1');
  const hook = await ok(before, a, keyA, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['grievance.overdue'] });
  expect(await before.stop()).toBe(0);
  const [storedHook] = await store.query<{ secret: string }>('select secret from webhook_endpoints where id = $1', [hook.id]);
  expect(storedHook!.secret).toMatch(/^enc:v1:/);
  const keysBefore = await sealed();
  expect(keysBefore.length).toBeGreaterThanOrEqual(3);

  // No new key given: a usage error.
  const missing = await runCli(['secret', 'rotate'], env);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('ASSENT_NEW_SECRET_KEY');

  // The current secret is not the one the keys were sealed with: refused, naming a key; nothing changed.
  const wrong = await runCli(['secret', 'rotate'], { ...env, ASSENT_SECRET_KEY: 'not-the-secret-the-keys-were-sealed-with-0123', ASSENT_NEW_SECRET_KEY: NEW_KEY });
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/^assent: ASSENT_SECRET_KEY does not open the signing key \S+ of \S+: it is not the secret the keys were sealed with\. Nothing was changed/);
  expect(await sealed()).toEqual(keysBefore);

  const rotated = await runCli(['secret', 'rotate', '--json'], { ...env, ASSENT_NEW_SECRET_KEY: NEW_KEY });
  expect(rotated.code, rotated.stderr).toBe(0);
  const report = JSON.parse(rotated.stdout);
  expect(report).toMatchObject({ signing_keys: keysBefore.length, webhook_secrets: 1, already_new: 0, secret_key_file: null });
  const keysAfter = await sealed();
  expect(keysAfter.map((k) => k.kid)).toEqual(keysBefore.map((k) => k.kid));
  const opener = createSigningKeyring(NEW_KEY);
  for (const [i, k] of keysAfter.entries()) {
    expect(k.private_key_enc).not.toBe(keysBefore[i]!.private_key_enc);
    await opener.open(k.kid, k.private_key_enc);
    await expect(createSigningKeyring(CHILD_SECRET_KEY).open(`${k.kid}-old`, k.private_key_enc)).rejects.toThrow(/not the one it was sealed with/);
  }
  const [hookAfter] = await store.query<{ secret: string }>('select secret from webhook_endpoints where id = $1', [hook.id]);
  expect(secretBox(NEW_KEY).open(hookAfter!.secret)).toBe(secretBox(CHILD_SECRET_KEY).open(storedHook!.secret));

  // A second run: everything is sealed with the new key already; nothing changes.
  const again = await cliJson(['secret', 'rotate'], { ...env, ASSENT_NEW_SECRET_KEY: NEW_KEY });
  expect(again).toMatchObject({ signing_keys: 0, webhook_secrets: 0, already_new: keysBefore.length + 1 });
  expect(await sealed()).toEqual(keysAfter);

  // The old key: the server refuses to start, saying why.
  const old = await runCli(['serve'], { ...env, PORT: '0', HOST: '127.0.0.1' }, 90_000);
  expect(old.code).toBe(1);
  expect(old.stderr).toContain('assent: ASSENT_SECRET_KEY does not open the signing keys in the store');
  expect(old.stderr).toContain('assent secret rotate');

  // The new key: it serves, signs new records with the same keys, and the old receipt still verifies.
  const after = await startServer({ ...env, ASSENT_SECRET_KEY: NEW_KEY });
  const set = await jwks(after, a);
  expect(await verifies(first.receipt, set)).toBe(true);
  const second = await consent(after, a, keyA, 'dp-2', first.point);
  expect(await verifies(second.receipt, set)).toBe(true);
  expect(second.receipt.split('.')[0]).toBe(first.receipt.split('.')[0]); // the same kid
  expect(await after.stop()).toBe(0);
});

test.runIf(storeKind() === 'pglite')('embedded store: refused while a server runs; with DATA_DIR/secret.key as the secret, the file holds the new key afterwards', async () => {
  const env = { ...store.env, ASSENT_SECRET_KEY: '' };
  const file = join(store.dataDir!, 'secret.key');
  // The store's keys so far are sealed with NEW_KEY (the test above): make that the file's secret.
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, NEW_KEY + '\n', { mode: 0o600 });
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], env);

  const server = await startServer(env);
  const busy = await runCli(['secret', 'rotate'], { ...env, ASSENT_NEW_SECRET_KEY: CHILD_SECRET_KEY });
  expect(busy.code).toBe(2);
  expect(busy.stderr).toContain('stop the server first');
  expect(await server.stop()).toBe(0);

  const next = 'a-third-secret-key-written-to-the-data-directory-0123';
  const rotated = await cliJson(['secret', 'rotate'], { ...env, ASSENT_NEW_SECRET_KEY: next });
  expect(rotated.secret_key_file).toBe(file);
  expect(readFileSync(file, 'utf8')).toBe(next + '\n');
  const restarted = await startServer(env);
  expect((await jwks(restarted, slug)).keys).toHaveLength(1);
  expect(await restarted.stop()).toBe(0);
});
