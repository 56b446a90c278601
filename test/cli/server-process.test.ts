// Contract §6, `assent serve` as a real process: real HTTP on 127.0.0.1, the embedded store's
// data-directory lock, clean shutdown on SIGTERM, data surviving a restart, keys managed meanwhile.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { cliJson, createCliStore, killServers, request, runCli, startServer, uniqueSlug, type CliStore, type ServerProcess } from './child.js';

// Each test starts servers and runs commands, and one of them rebuilds dist/ when src/ has changed meanwhile.
vi.setConfig({ testTimeout: 90_000 });

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterEach(killServers);
afterAll(async () => {
  await killServers();
  await store?.drop();
});

async function tenant(scopes = 'admin'): Promise<{ slug: string; key: string; keyId: string }> {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  const key = await cliJson(['key', 'create', slug, '--scopes', scopes], store.env);
  return { slug, key: key.key, keyId: key.id };
}

function fileGrievance(server: ServerProcess, t: { slug: string; key: string }, clientUserId: string) {
  return request(server.port, {
    method: 'POST',
    path: '/grievance',
    host: `${t.slug}.localhost:${server.port}`,
    key: t.key,
    body: { client_user_id: clientUserId, subject: 'Delete my data', description: 'Please erase my account.', category: 'erasure' },
  });
}

function listGrievances(server: ServerProcess, t: { slug: string; key: string }, clientUserId: string) {
  return request(server.port, {
    method: 'GET',
    path: `/grievance/user/${clientUserId}`,
    host: `${t.slug}.localhost:${server.port}`,
    key: t.key,
  });
}

const messages = (server: ServerProcess) => server.logs.map((l) => l.msg);

test('GET /health over real HTTP: 200 {status: ok, database: ok}', async () => {
  const server = await startServer(store.env);
  const res = await request(server.port, { method: 'GET', path: '/health', host: `localhost:${server.port}` });
  expect(res.status).toBe(200);
  expect(res.json()).toEqual({ status: 'ok', database: 'ok' });
  expect(await server.stop()).toBe(0);
  // A PostgreSQL that never analyzes its tables gets a warning at start naming the setting (embedded: none).
  const warned = server.logs.find((l) => /autovacuum/.test(l.msg ?? ''));
  if (storeKind() === 'postgres') {
    const sql = postgres(process.env.TEST_DATABASE_URL!, { max: 1 });
    const [setting] = await sql<{ autovacuum: string; track_counts: string }[]>`select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts`;
    await sql.end();
    if (setting!.autovacuum === 'on' && setting!.track_counts === 'on') expect(warned).toBeUndefined();
    else expect(warned?.msg).toMatch(/^PostgreSQL runs with (autovacuum|track_counts|autovacuum and track_counts) off: nothing analyzes the tables as they grow.*VACUUM ANALYZE on a schedule/);
  } else {
    expect(warned).toBeUndefined();
  }
});

test.runIf(storeKind() === 'pglite')('embedded store: while a server holds the data directory the CLI runs in it (control socket); SIGTERM stops cleanly and frees it', async () => {
  const lock = join(store.dataDir!, 'assent.lock');
  const server = await startServer(store.env);
  expect(existsSync(lock)).toBe(true);

  // Handed to the server (test/cli/control-socket.test.ts has the details).
  const slug = uniqueSlug();
  const org = await cliJson(['org', 'create', slug], store.env);
  expect(org.slug).toBe(slug);

  expect(await server.stop(10_000)).toBe(0);
  expect(messages(server)).toContain('stopped cleanly');
  expect(existsSync(lock)).toBe(false);
  expect(existsSync(join(store.dataDir!, 'assent.sock'))).toBe(false);

  // The CLI opens the store itself again, and finds what the server's run created.
  const again = await runCli(['org', 'create', slug], store.env);
  expect(again.code, again.stderr).toBe(1);
  expect(again.stderr).toContain(`An organization with slug "${slug}" already exists`);
});

test('data survives a restart: a ticket filed over HTTP is there after SIGTERM and a new start', async () => {
  const t = await tenant('grievances');
  const userId = `user-${uniqueSlug()}`;

  const first = await startServer(store.env);
  const created = await fileGrievance(first, t, userId);
  expect(created.status, created.body).toBe(201);
  expect(created.json()).toMatchObject({ client_user_id: userId, status: 'open', ticket_id: expect.stringMatching(/^GRV-[A-Z0-9]{8}$/) });
  expect(await first.stop()).toBe(0);
  expect(messages(first)).toContain('stopped cleanly');

  const second = await startServer(store.env);
  const listed = await listGrievances(second, t, userId);
  expect(listed.status, listed.body).toBe(200);
  expect(listed.json()).toEqual([created.json()]);
  expect(await second.stop()).toBe(0);
});

test.runIf(storeKind() === 'postgres')('PostgreSQL: keys created and revoked by the CLI while the server runs', async () => {
  const server = await startServer(store.env);
  const host = (slug: string) => `${slug}.localhost:${server.port}`;

  // An organization and key made while the server runs work at once.
  const t = await tenant('grievances');
  const userId = `user-${uniqueSlug()}`;
  const created = await fileGrievance(server, t, userId);
  expect(created.status, created.body).toBe(201);

  // A key revoked before this server ever saw it is refused at once (nothing cached).
  const unused = await cliJson(['key', 'create', t.slug], store.env);
  await cliJson(['key', 'revoke', t.slug, unused.id], store.env);
  const refusedUnused = await request(server.port, { method: 'GET', path: `/grievance/user/${userId}`, host: host(t.slug), key: unused.key });
  expect(refusedUnused.status).toBe(401);
  expect(refusedUnused.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });

  // A key this server has cached may be honoured for up to KEY_CACHE_TTL_MS after a revocation made
  // by another process; a freshly started server refuses it.
  await cliJson(['key', 'revoke', t.slug, t.keyId], store.env);
  expect(await server.stop()).toBe(0);
  const restarted = await startServer(store.env);
  const refused = await listGrievances(restarted, t, userId);
  expect(refused.status).toBe(401);
  expect(refused.json()).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  expect(await restarted.stop()).toBe(0);
});
