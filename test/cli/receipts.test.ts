// Receipt signing keys from the real `assent` command and server (issue 18 item 2), on the store of the
// project: `assent secret generate`; an organization created by the CLI has its key; `signing-key
// rotate` keeps the old key public; the secret: required by a server on PostgreSQL, kept in
// DATA_DIR/secret.key (0600, with a warning) on the embedded store when unset.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
