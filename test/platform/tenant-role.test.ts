// Issue 20 item 1: a PostgreSQL role that cannot take the tenant role (assent_app exists, not granted to
// it). A real role, created here without the grant, owning a scratch database: `assent migrate` and
// `assent serve` refuse with one line saying what to run; after the grant both work; /health/ready
// answers 503 naming the fix when the grant is taken away from a running server.
// The store cannot be reached at all (item 2): one line naming the problem and DATABASE_URL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openStore, type OpenStore } from '../../src/platform/db/store.js';
import { storeKind } from '../support/store.js';
import { killServers, request, runCli, startServer } from '../cli/child.js';

vi.setConfig({ testTimeout: 90_000 });

describe.runIf(storeKind() === 'postgres')('a connecting role that cannot take assent_app', () => {
  const role = `assent_t_role_${randomBytes(4).toString('hex')}`;
  let admin: postgres.Sql;
  let url: string;
  beforeAll(async () => {
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    // The tenant role exists (as after any earlier installation in this cluster); this role may log in
    // and owns its database, but may not create roles and was never granted assent_app.
    await admin.unsafe(`do $$ begin create role assent_app nologin; exception when duplicate_object or unique_violation then null; end $$`);
    await admin.unsafe(`create role ${role} login nocreaterole`);
    await admin.unsafe(`create database ${role} owner ${role}`);
    const u = new URL(process.env.TEST_DATABASE_URL!);
    u.username = role;
    u.pathname = `/${role}`;
    url = u.toString();
  });
  afterAll(async () => {
    await killServers();
    await admin.unsafe(`drop database if exists ${role} with (force)`);
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  const refusal =
    `assent: The database role "${role}" (DATABASE_URL) cannot take the tenant role assent_app that row-level security needs: ` +
    `the role exists but was not granted to "${role}". As a database administrator, run: GRANT assent_app TO "${role}"; ` +
    'Then run "assent migrate" again.\n';

  test('assent store copy --to names --to and itself in the same refusal (not DATABASE_URL and assent migrate)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'assent-role-copy-'));
    try {
      const copy = await runCli(['store', 'copy', '--to', url], { DATA_DIR: dataDir }, 120_000);
      expect(copy).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `assent: The database role "${role}" (--to) cannot take the tenant role assent_app that row-level security needs: ` +
          `the role exists but was not granted to "${role}". As a database administrator, run: GRANT assent_app TO "${role}"; ` +
          'Then run "assent store copy" again.\n',
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('assent migrate exits 1 with one line naming the GRANT to run; serve refuses to start likewise; after the grant both work and /health/ready is 200', async () => {
    const migrate = await runCli(['migrate'], { DATABASE_URL: url });
    expect(migrate).toEqual({ code: 1, stdout: '', stderr: refusal });

    const serve = await runCli(['serve'], { DATABASE_URL: url, PORT: '0', HOST: '127.0.0.1' });
    expect(serve).toEqual({ code: 1, stdout: '', stderr: refusal });

    await admin.unsafe(`grant assent_app to ${role}`);
    const again = await runCli(['migrate', '--json'], { DATABASE_URL: url });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [], current: expect.any(String) });

    const server = await startServer({ DATABASE_URL: url });
    const ready = await request(server.port, { method: 'GET', path: '/health/ready', host: `localhost:${server.port}` });
    expect(ready.status, ready.body).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', tenant_role: 'ok' } });
    expect(await server.stop()).toBe(0);
  });

  test('/health/ready answers 503 with what to run when the grant is taken away from a running server; /health stays 200', async () => {
    await admin.unsafe(`grant assent_app to ${role}`);
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent' });
    let store: OpenStore | undefined;
    let app: Awaited<ReturnType<typeof buildApp>> | undefined;
    try {
      store = await openStore(config, 'server');
      app = await buildApp({ config, db: store.db, logger: false });
      expect((await app.inject({ method: 'GET', url: '/health/ready', headers: { host: 'localhost' } })).statusCode).toBe(200);

      await admin.unsafe(`revoke assent_app from ${role}`);
      const res = await app.inject({ method: 'GET', url: '/health/ready', headers: { host: 'localhost' } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'ok', migrations: 'ok', tenant_role: 'failed' },
        error:
          `The database role "${role}" (DATABASE_URL) cannot take the tenant role assent_app that row-level security needs: ` +
          `the role exists but was not granted to "${role}". As a database administrator, run: GRANT assent_app TO "${role}"; ` +
          'Then run "assent migrate" again.',
      });
      const health = await app.inject({ method: 'GET', url: '/health', headers: { host: 'localhost' } });
      expect(health.statusCode).toBe(200);
    } finally {
      await app?.close();
      await store?.close();
    }
  });
});

describe('a database that cannot be reached: one line naming the problem and the setting', () => {
  const base = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const withUrl = (change: (u: URL) => void) => {
    const u = new URL(base);
    change(u);
    return u.toString();
  };

  test('connection refused (nothing listens on the port)', async () => {
    const r = await runCli(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:9/assent' });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'assent: Cannot connect to PostgreSQL at 127.0.0.1:9: connection refused (is PostgreSQL running there, on that port?). Check DATABASE_URL.\n',
    });
  });

  test('an unknown host', async () => {
    const r = await runCli(['org', 'create', 'acme'], { DATABASE_URL: 'postgres://postgres@no-such-host.invalid:5432/assent' });
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'assent: Cannot connect to PostgreSQL: the host "no-such-host.invalid" is not known (DNS). Check DATABASE_URL.\n' });
  });

  test.runIf(storeKind() === 'postgres')('an unknown database, and an unknown role; serve says the same and never listens', async () => {
    const noDb = withUrl((u) => (u.pathname = '/assent_no_such_db'));
    const where = `${base.hostname}:${base.port || '5432'}`;
    const dbLine = `assent: PostgreSQL at ${where} has no database "assent_no_such_db": create it (createdb assent_no_such_db) or fix the database name in DATABASE_URL.\n`;
    expect(await runCli(['migrate'], { DATABASE_URL: noDb })).toEqual({ code: 1, stdout: '', stderr: dbLine });
    expect(await runCli(['serve'], { DATABASE_URL: noDb, PORT: '0' })).toEqual({ code: 1, stdout: '', stderr: dbLine });

    const noRole = withUrl((u) => (u.username = 'assent_no_such_role'));
    expect(await runCli(['key', 'list', 'acme'], { DATABASE_URL: noRole })).toEqual({
      code: 1,
      stdout: '',
      stderr: `assent: PostgreSQL at ${where} refused the connection: role "assent_no_such_role" does not exist. Create that role or fix the user in DATABASE_URL.\n`,
    });
  });
});
