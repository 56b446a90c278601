// From the embedded store to PostgreSQL (issue 19 item 4), with real processes: a server on a data
// directory is filled through its API (two organizations: keys, users and sessions, tickets with their
// history and conversation, nominees, assets, collection points and notice versions, consent links and
// records, data principals and their tokens, the DPO, settings, webhooks and deliveries, idempotency
// keys, outbox messages, audit entries); it stops; `assent store copy --to` copies the directory into a
// new PostgreSQL database; then a server on the data directory and one on the database answer every GET
// of the list the same, the same credentials work on both, and the audit chains verify on the copy
// with the source's heads. Also: a second copy into the now non-empty database is refused, and
// `store copy` with DATABASE_URL set is refused. Runs in the postgres project (it needs TEST_DATABASE_URL);
// the source is always a data directory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createScratchPostgres, storeKind } from '../support/store.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { cliJson, killServers, runCli, startServer } from './child.js';
import { answers, call, createOrg, deliveriesSettled, PASSWORD, seedOrg, type SeededOrg } from './seed.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 180_000 });

describe.runIf(storeKind() === 'postgres')('assent store copy: the embedded store into PostgreSQL', () => {
  let dataDir: string;
  let target: { url: string; drop(): Promise<void> };
  let receiver: Receiver;
  const tenants: SeededOrg[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'assent-copy-'));
    target = await createScratchPostgres();
    receiver = await startReceiver(200);
    env = { DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: '1', ASSENT_SECRET_KEY: 'copy-test-secret-of-at-least-32-characters' };
  });
  afterAll(async () => {
    await killServers();
    await receiver?.close();
    await target?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('seeded through the API, copied, and served from PostgreSQL: every GET answers the same', async () => {
    for (let i = 0; i < 2; i++) tenants.push(await createOrg(env));
    const source = await startServer(env, 60_000);
    for (const t of tenants) await seedOrg(source, t, receiver);
    // Every webhook delivery answered, so none is in flight at the copy.
    await deliveriesSettled(source, tenants);
    expect(await source.stop()).toBe(0);

    const copy = await runCli(['store', 'copy', '--to', target.url, '--json'], env, 120_000);
    expect(copy.code, copy.stderr).toBe(0);
    const report = JSON.parse(copy.stdout) as { tables: { table: string; rows: number }[]; organizations: { slug: string; entries: number; head: string; ok: boolean }[] };
    const rows = Object.fromEntries(report.tables.map((t) => [t.table, t.rows]));
    // What the seed made exists in the copy (a table the seed fills with nothing would hide a copy that loses it).
    for (const table of [
      'organizations', 'api_keys', 'users', 'memberships', 'auth_sessions', 'grievances', 'grievance_status_changes', 'grievance_messages',
      'nominees', 'assets', 'collection_points', 'consent_requests', 'consent_records', 'data_principals', 'dp_tokens', 'dpo_contacts',
      'audit_log', 'audit_chain_heads', 'webhook_endpoints', 'webhook_events', 'webhook_deliveries', 'idempotency_keys', 'outbound_messages',
    ]) {
      expect(rows[table], table).toBeGreaterThan(0);
    }
    expect(report.organizations.map((o) => o.slug).sort()).toEqual(tenants.map((t) => t.slug).sort());
    for (const o of report.organizations) {
      expect(o.ok).toBe(true);
      expect(o.entries).toBeGreaterThan(5);
    }

    // Both servers: the source again on its data directory, and the copy on PostgreSQL.
    const again = await startServer(env, 60_000);
    const served = await startServer({ DATABASE_URL: target.url, WEBHOOK_ALLOW_PRIVATE: '1', ASSENT_SECRET_KEY: 'copy-test-secret-of-at-least-32-characters' }, 60_000);
    const before = await answers(again, tenants);
    const after = await answers(served, tenants);
    expect(after.map(([what, status]) => `${what} ${status}`)).toEqual(before.map(([what, status]) => `${what} ${status}`));
    for (let i = 0; i < before.length; i++) expect(after[i], before[i]![0]).toEqual(before[i]);
    // Not a list of errors compared with itself.
    expect(before.filter(([, status]) => status !== 200)).toEqual([]);

    // Passwords and sign-in work on the copy.
    const login = await call(served, null, 'POST', '/auth/login', { body: { email: tenants[0]!.email, password: PASSWORD }, key: null });
    expect(login.status, login.body).toBe(200);
    await again.stop();
    await served.stop();

    // The audit chains on the copy, with the CLI on the database: the heads the source had.
    for (const o of report.organizations) {
      const verified = await cliJson(['audit', 'verify', o.slug], { DATABASE_URL: target.url });
      expect(verified).toMatchObject({ ok: true, chain: { entries: o.entries, head: { hash: o.head } } });
    }
  });

  test('a target that is not empty is refused, and nothing is written to it', async () => {
    await killServers();
    const again = await runCli(['store', 'copy', '--to', target.url], env, 120_000);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^assent: The target database is not empty \(rows in .*organizations.*\): nothing was copied/);
    const verified = await cliJson(['audit', 'verify', tenants[0]!.slug], { DATABASE_URL: target.url });
    expect(verified.ok).toBe(true);
  });

  test("the embedded store's development key (DATA_DIR/secret.key) must become ASSENT_SECRET_KEY: store copy says so, and a server on the copy starts with it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-copy-key-'));
    const fresh = await createScratchPostgres();
    try {
      const keyless = { DATA_DIR: dir, ASSENT_SECRET_KEY: '' };
      const org = await createOrg(keyless);
      const keyFile = join(dir, 'secret.key');
      const secret = readFileSync(keyFile, 'utf8').trim();
      const copy = await runCli(['store', 'copy', '--to', fresh.url], keyless, 120_000);
      expect(copy.code, copy.stderr).toBe(0);
      expect(copy.stdout).toContain(
        `Next: stop using DATA_DIR and start the server with DATABASE_URL set to the target, and ASSENT_SECRET_KEY set to the key in ${keyFile}: ` +
          'it seals the signing keys just copied, and a server on PostgreSQL does not read DATA_DIR (it refuses to start without ASSENT_SECRET_KEY). ' +
          `Keep it with your other secrets:\n  export ASSENT_SECRET_KEY="$(cat ${keyFile})"\n`,
      );
      // Another secret does not open the copied keys: the server refuses, as the message warns.
      const wrong = await runCli(['serve'], { DATABASE_URL: fresh.url, PORT: '0', HOST: '127.0.0.1' }, 60_000);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('ASSENT_SECRET_KEY does not open the signing keys in the store');
      const server = await startServer({ DATABASE_URL: fresh.url, ASSENT_SECRET_KEY: secret }, 60_000);
      const jwks = await call(server, org, 'GET', '/.well-known/jwks.json', { key: null });
      expect(jwks.status).toBe(200);
      expect(await server.stop()).toBe(0);
    } finally {
      await killServers();
      await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with ASSENT_SECRET_KEY set, store copy says to keep it, and --json names where the secret came from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-copy-env-'));
    const fresh = await createScratchPostgres();
    try {
      const withKey = { DATA_DIR: dir, ASSENT_SECRET_KEY: 'copy-test-secret-of-at-least-32-characters' };
      await createOrg(withKey);
      const human = await runCli(['store', 'copy', '--to', fresh.url], withKey, 120_000);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(
        /\nNext: stop using DATA_DIR and start the server with DATABASE_URL set to the target and ASSENT_SECRET_KEY as it is now: it seals the signing keys and webhook secrets just copied\.\n$/,
      );
      const again = await createScratchPostgres();
      try {
        const json = await cliJson(['store', 'copy', '--to', again.url], withKey);
        expect(json.secret_key).toEqual({ from: 'ASSENT_SECRET_KEY', file: null });
      } finally {
        await again.drop();
      }
    } finally {
      await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('store copy refuses to run with DATABASE_URL set, and --to must be a PostgreSQL URL', async () => {
    const withUrl = await runCli(['store', 'copy', '--to', target.url], { ...env, DATABASE_URL: target.url });
    expect(withUrl.code).toBe(2);
    expect(withUrl.stderr).toContain('store copy copies the embedded store in DATA_DIR: unset DATABASE_URL');
    const notPg = await runCli(['store', 'copy', '--to', 'mysql://x'], env);
    expect(notPg.code).toBe(2);
    expect(notPg.stderr).toContain('--to takes a PostgreSQL URL');
  });
});
