// Issue 20 item 3: the `assent` command works while a server holds the embedded store's data directory.
// A real server process on a data directory, real CLI processes on the same directory: the CLI hands
// its command to the server over DATA_DIR/assent.sock (owner-only), prints what it prints when it runs
// the command itself, and the server serves what was created at once. `assent stop` stops the server.
// On PostgreSQL there is no socket: the CLI opens the database itself (server-process.test.ts).
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { cliJson, createCliStore, killServers, request, runCli, startServer, uniqueSlug, type CliStore, type ServerProcess, portOpen } from './child.js';

vi.setConfig({ testTimeout: 120_000 });

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterEach(killServers);
afterAll(async () => {
  await killServers();
  await store?.drop();
});

const organization = (server: ServerProcess, slug: string, key: string) =>
  request(server.port, { method: 'GET', path: '/api/v1/organization', host: `${slug}.localhost:${server.port}`, key });

describe.runIf(storeKind() === 'pglite')('embedded store: the CLI while a server runs', () => {
  test('org create, key create, key list, user create run in the server: same output, served at once; the socket is 0600', async () => {
    const server = await startServer(store.env);
    const socket = join(store.dataDir!, 'assent.sock');
    const stat = lstatSync(socket);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(server.logs.find((l) => l.msg?.includes('Assent listening'))?.control_socket).toBe(socket);

    const slug = uniqueSlug();
    const created = await runCli(['org', 'create', slug, '--name', 'Socket Corp'], store.env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(new RegExp(`^Created organization ${slug} \\([0-9a-f-]{36}\\), served at http://${slug}\\.localhost:\\d+\\nNext: assent key create ${slug} --scopes admin\\n$`));

    const key = await cliJson(['key', 'create', slug, '--scopes', 'admin', '--name', 'over the socket'], store.env);
    expect(key).toEqual({ id: expect.any(String), key: expect.stringMatching(/^ask_live_[0-9A-Za-z]{32}$/), prefix: key.key.slice(0, 12), scopes: ['admin'] });
    const plain = await runCli(['key', 'create', slug, '--scopes', 'grievances'], store.env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.split('\n')[0]).toMatch(/^ask_live_[0-9A-Za-z]{32}$/);

    // The server serves the new key at once: the command ran on its store and its services.
    const served = await organization(server, slug, key.key);
    expect(served.status, served.body).toBe(200);
    expect(served.json()).toMatchObject({ slug, name: 'Socket Corp' });

    const listed = await cliJson(['key', 'list', slug], store.env);
    expect(listed.map((k: { id: string }) => k.id)).toContain(key.id);
    expect(listed.find((k: { id: string }) => k.id === key.id)).toMatchObject({ name: 'over the socket', scopes: ['admin'], revoked_at: null, last_used_at: null });
    const tableWhileServing = await runCli(['key', 'list', slug], store.env);
    expect(tableWhileServing.code).toBe(0);
    expect(tableWhileServing.stdout).toMatch(/^ID +NAME +PREFIX +SCOPES +CREATED +STATUS\n/);

    // The password travels from the CLI's standard input; the user signs in over HTTP.
    const email = `${slug}@example.com`;
    const user = await runCli(['user', 'create', email, '--password-stdin', '--org', slug, '--role', 'owner'], store.env, 60_000, 'a long enough password');
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout).toMatch(new RegExp(`^Created user ${email} \\([0-9a-f-]{36}\\), owner of ${slug}\\n$`));
    const login = await request(server.port, { method: 'POST', path: '/auth/login', host: `localhost:${server.port}`, body: { email, password: 'a long enough password' } });
    expect(login.status, login.body).toBe(200);

    // A refusal is the same message and exit code as when the CLI runs the command itself.
    const duplicate = await runCli(['org', 'create', slug], store.env);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stdout).toBe('');
    expect(duplicate.stderr).toBe(`assent: An organization with slug "${slug}" already exists\n`);
    const unknownScope = await runCli(['key', 'create', slug, '--scopes', 'root'], store.env);
    expect(unknownScope.code).toBe(1);

    // A revocation through the socket reaches the server's key cache: the key it has just used is refused at once.
    const revoked = await runCli(['key', 'revoke', slug, key.id], store.env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const refused = await organization(server, slug, key.key);
    expect(refused.status).toBe(401);

    // Stopped: the same commands open the store themselves and print the same.
    expect(await server.stop()).toBe(0);
    expect(existsSync(socket)).toBe(false);
    const tableAlone = await runCli(['key', 'list', slug], store.env);
    expect(tableAlone.code, tableAlone.stderr).toBe(0);
    // Only the status column moved: the revoked key, and the admin key's last use.
    const withoutStatus = (out: string) => out.split('\n').map((line) => line.replace(/(revoked|last used) \S+$/, ''));
    expect(withoutStatus(tableAlone.stdout)).toEqual(withoutStatus(tableWhileServing.stdout));
    const duplicateAlone = await runCli(['org', 'create', slug], store.env);
    expect(duplicateAlone).toEqual(duplicate);
  });

  test('assent stop: stops the server over the socket (port, lock and socket freed); with nothing running it says so, exit 0', async () => {
    const server = await startServer(store.env);
    const stopped = await runCli(['stop'], store.env);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe(`Stopped the Assent server (pid ${server.child.pid}); ${store.dataDir} is free\n`);
    // The lock is released after the HTTP server has closed: by the time stop returns, both are free.
    expect(existsSync(join(store.dataDir!, 'assent.lock'))).toBe(false);
    expect(existsSync(join(store.dataDir!, 'assent.sock'))).toBe(false);
    expect(await portOpen(server.port)).toBe(false);
    await vi.waitFor(() => expect(server.child.exitCode).toBe(0), { timeout: 10_000 });
    expect(server.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['assent stop: shutting down', 'stopped cleanly']));

    const nothing = await runCli(['stop', '--json'], store.env);
    expect(nothing.code).toBe(0);
    expect(JSON.parse(nothing.stdout)).toEqual({ stopped: false, pid: null });
  });

  test('a command sent while the server is still starting waits for it, and a server started while a command runs waits for it', async () => {
    const slug = uniqueSlug();
    // Both at once: whichever takes the directory first, both succeed.
    const [server, org] = await Promise.all([startServer(store.env, 60_000), cliJson(['org', 'create', slug], store.env)]);
    expect(org.slug).toBe(slug);
    const key = await cliJson(['key', 'create', slug], store.env);
    expect((await organization(server, slug, key.key)).status).toBe(200);
    expect((await runCli(['stop'], store.env)).code).toBe(0);
  });
});

describe.runIf(storeKind() === 'postgres')('PostgreSQL: no control socket', () => {
  test('assent stop says how to stop a server on PostgreSQL (exit 2); the CLI works beside the server without a socket', async () => {
    const server = await startServer(store.env);
    const stop = await runCli(['stop'], store.env);
    expect(stop.code).toBe(2);
    expect(stop.stderr).toContain('With DATABASE_URL set, stop the server with SIGTERM');
    const slug = uniqueSlug();
    await cliJson(['org', 'create', slug], store.env);
    const key = await cliJson(['key', 'create', slug], store.env);
    expect((await organization(server, slug, key.key)).status).toBe(200);
    expect(server.logs.find((l) => l.msg?.includes('Assent listening'))?.control_socket).toBeUndefined();
    expect(await server.stop()).toBe(0);
  });
});
