// Issue 30 item 1: PostgreSQL as the operations guide recommends it, a login role that is not a
// superuser and holds nothing but `GRANT assent_app TO <role>` (and its own database). The database
// already holds organizations made every way there is: copied from an embedded store by `assent store
// copy`, created by a superuser (with a signing key, and without one: no ASSENT_SECRET_KEY), and created
// by the role itself (with and without a key). Then, as the role: every CLI command and `assent serve`,
// which at start adds the missing signing keys (signing_keys forces row-level security, so the owner
// must set the organization for each insert), and serves every organization through its API.
// Runs in the postgres project (TEST_DATABASE_URL), so on every CI run.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { cliJson, killServers, request, runCli, startServer, uniqueSlug, type ServerProcess } from './child.js';
import { answers, call, createOrg, deliveriesSettled, seedOrg, type SeededOrg } from './seed.js';

vi.setConfig({ testTimeout: 400_000, hookTimeout: 120_000 });

const SECRET = 'least-privilege-secret-of-at-least-32-chars';
const NEW_SECRET = 'least-privilege-new-secret-of-at-least-32-chars';

describe.runIf(storeKind() === 'postgres')('a login role holding only assent_app: every command and the server, with organizations in the database', () => {
  const role = `assent_t_least_${randomBytes(4).toString('hex')}`;
  let admin: postgres.Sql;
  let roleUrl: string;
  let superUrl: string;
  let dataDir: string;
  let receiver: Receiver;
  let work: string;

  beforeAll(async () => {
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`do $$ begin create role assent_app nologin; exception when duplicate_object or unique_violation then null; end $$`);
    // Not a superuser, cannot create roles or databases, no BYPASSRLS: the tenant role granted, and a database of its own.
    await admin.unsafe(`create role ${role} login nosuperuser nocreaterole nocreatedb nobypassrls`);
    await admin.unsafe(`grant assent_app to ${role}`);
    await admin.unsafe(`create database ${role} owner ${role}`);
    const u = new URL(process.env.TEST_DATABASE_URL!);
    u.pathname = `/${role}`;
    superUrl = u.toString();
    u.username = role;
    roleUrl = u.toString();
    dataDir = mkdtempSync(join(tmpdir(), 'assent-least-'));
    work = mkdtempSync(join(tmpdir(), 'assent-least-out-'));
    receiver = await startReceiver(200);
  });
  afterAll(async () => {
    await killServers();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${role} with (force)`);
    await admin.unsafe(`drop role if exists ${role}`);
    await admin.end();
  });

  test('store copy, organizations made by a superuser and by the role, then every command and a server as the role', async () => {
    const [me] = await admin.unsafe<{ rolsuper: boolean; rolbypassrls: boolean }[]>(`select rolsuper, rolbypassrls from pg_roles where rolname = '${role}'`);
    expect(me).toEqual({ rolsuper: false, rolbypassrls: false });
    const asRole = { DATABASE_URL: roleUrl, ASSENT_SECRET_KEY: SECRET, WEBHOOK_ALLOW_PRIVATE: '1' };
    const asRoleNoSecret = { DATABASE_URL: roleUrl, ASSENT_SECRET_KEY: '' };
    const asSuper = { DATABASE_URL: superUrl, ASSENT_SECRET_KEY: SECRET };

    // 1. The move: an embedded store with one organization, copied into the role's empty database by the role.
    const embedded = { DATA_DIR: dataDir, ASSENT_SECRET_KEY: SECRET };
    const copied = await createOrg(embedded);
    const copy = await runCli(['store', 'copy', '--to', roleUrl, '--json'], embedded, 120_000);
    expect(copy.code, copy.stderr).toBe(0);
    expect((JSON.parse(copy.stdout) as { organizations: { slug: string; ok: boolean }[] }).organizations).toEqual([
      expect.objectContaining({ slug: copied.slug, ok: true }),
    ]);
    const owners = postgres(superUrl, { max: 1, onnotice: () => {} });
    try {
      expect(await owners.unsafe(`select distinct tableowner as owner from pg_tables where schemaname = 'public'`)).toEqual([{ owner: role }]);
    } finally {
      await owners.end();
    }

    // 2. Organizations made by a superuser on the same database: with a signing key, and without (no ASSENT_SECRET_KEY).
    const bySuper = await createOrg(asSuper);
    const bySuperKeyless = uniqueSlug();
    expect((await runCli(['org', 'create', bySuperKeyless], { DATABASE_URL: superUrl, ASSENT_SECRET_KEY: '' })).code).toBe(0);

    // 3. Organizations made by the role: with a signing key (refused by row-level security before the fix), and without.
    const byRole = await createOrg(asRole);
    const byRoleKeyless = uniqueSlug();
    const keyless = await runCli(['org', 'create', byRoleKeyless, '--json'], asRoleNoSecret);
    expect(keyless.code, keyless.stderr).toBe(0);
    const signingKeys = (slug: string, env: Record<string, string> = asRole) => cliJson<{ kid: string; current: boolean }[]>(['signing-key', 'list', slug], env);
    expect(await signingKeys(byRole.slug)).toEqual([expect.objectContaining({ current: true })]);
    expect(await signingKeys(bySuper.slug)).toEqual([expect.objectContaining({ current: true })]);
    expect(await signingKeys(bySuperKeyless)).toEqual([]);
    expect(await signingKeys(byRoleKeyless)).toEqual([]);

    expect(await cliJson(['migrate'], asRole)).toEqual({ applied: [], current: expect.any(String) });

    // 4. The server as the role: it starts, adds the two missing signing keys, and serves every organization.
    let server: ServerProcess = await startServer(asRole, 120_000);
    expect(server.logs.find((l) => l.msg === 'created receipt signing keys for existing organizations')).toMatchObject({ organizations: 2 });
    const ready = await request(server.port, { method: 'GET', path: '/health/ready', host: `localhost:${server.port}` });
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', tenant_role: 'ok' } });
    const orgs: SeededOrg[] = [copied, bySuper, byRole];
    for (const t of orgs) await seedOrg(server, t, receiver);
    await deliveriesSettled(server, orgs);
    const served = await answers(server, orgs);
    expect(served.filter(([, status]) => status !== 200).map(([what, status, body]) => `${what} ${status} ${JSON.stringify(body)}`)).toEqual([]);
    for (const slug of [copied.slug, bySuper.slug, byRole.slug, bySuperKeyless, byRoleKeyless]) {
      const jwks = await request(server.port, { method: 'GET', path: '/.well-known/jwks.json', host: `${slug}.localhost:${server.port}` });
      expect(jwks.status, `${slug}: ${jwks.body}`).toBe(200);
      expect(jwks.json().keys, slug).toHaveLength(1);
    }
    expect(await server.stop()).toBe(0);

    // 5. Every other command, as the role.
    for (const slug of [bySuperKeyless, byRoleKeyless]) expect(await signingKeys(slug)).toEqual([expect.objectContaining({ current: true })]);
    const key = await cliJson<{ id: string; key: string }>(['key', 'create', bySuper.slug, '--scopes', 'grievances'], asRole);
    expect((await cliJson<{ id: string; revoked_at: string | null }[]>(['key', 'list', bySuper.slug], asRole)).map((k) => k.id)).toContain(key.id);
    expect(await cliJson(['key', 'revoke', bySuper.slug, key.id], asRole)).toMatchObject({ id: key.id, revoked_at: expect.any(String) });
    const email = `extra-${byRole.slug}@example.com`;
    const user = await runCli(['user', 'create', email, '--password-stdin', '--json'], asRole, 60_000, 'a long enough password');
    expect(user.code, user.stderr).toBe(0);
    const setPassword = await runCli(['user', 'set-password', email, '--password-stdin'], asRole, 60_000, 'another long password');
    expect(setPassword.code, setPassword.stderr).toBe(0);
    expect(await cliJson(['member', 'add', copied.slug, email, '--role', 'admin'], asRole)).toMatchObject({ role: 'admin' });
    for (const t of orgs) {
      expect(await cliJson(['audit', 'verify', t.slug], asRole), t.slug).toMatchObject({ ok: true });
    }
    const rotated = await cliJson<{ kid: string; retired_kid: string | null }>(['signing-key', 'rotate', byRole.slug], asRole);
    expect(rotated.retired_kid).toEqual(expect.any(String));
    expect(await signingKeys(byRole.slug)).toHaveLength(2);
    const backfill = await runCli(['receipts', 'backfill', '--json'], asRole);
    expect(backfill.code, backfill.stderr).toBe(0);
    const archive = join(work, 'export.tar.gz');
    const exported = await runCli(['export', copied.slug, '--out', archive, '--json'], asRole, 120_000);
    expect(exported.code, exported.stderr).toBe(0);
    expect(await cliJson(['export', 'verify', archive], {})).toMatchObject({ ok: true });
    expect(JSON.parse(exported.stdout)).toMatchObject({ file: archive, bytes: expect.any(Number) });

    // The secret rotated as the role: every organization's keys resealed (none skipped by row-level security).
    const rotate = await runCli(['secret', 'rotate', '--json'], { ...asRole, ASSENT_NEW_SECRET_KEY: NEW_SECRET });
    expect(rotate.code, rotate.stderr).toBe(0);
    const report = JSON.parse(rotate.stdout) as { organizations: number; signing_keys: number; webhook_secrets: number };
    // Five organizations, six keys (one rotated), one sealed webhook secret per seeded organization.
    expect(report).toMatchObject({ organizations: 5, signing_keys: 6, webhook_secrets: 3 });
    const generated = await runCli(['secret', 'generate'], {});
    expect(generated.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);

    // The commands that belong to the embedded store refuse with their usual line, not a database error.
    expect(await runCli(['backup', '--out', join(work, 'b.backup')], asRole)).toMatchObject({ code: 2, stderr: expect.stringContaining('for PostgreSQL use pg_dump') });
    expect(existsSync(join(work, 'b.backup'))).toBe(false);
    expect(await runCli(['restore', join(work, 'none.backup')], asRole)).toMatchObject({ code: 2, stderr: expect.stringContaining('use pg_restore') });
    expect(await runCli(['store', 'copy', '--to', roleUrl], asRole)).toMatchObject({ code: 2, stderr: expect.stringContaining('unset DATABASE_URL') });
    expect(await runCli(['stop'], asRole)).toMatchObject({ stderr: expect.stringContaining('With DATABASE_URL set') });

    // The server again, with the new secret: its check opens the keys, and a consent is signed.
    server = await startServer({ ...asRole, ASSENT_SECRET_KEY: NEW_SECRET }, 120_000);
    const after = await answers(server, orgs);
    expect(after.filter(([, status]) => status !== 200).map(([what, status]) => `${what} ${status}`)).toEqual([]);
    const point = (await call(server, byRole, 'GET', `/api/v1/collection-points/${byRole.pointId}`)).json<{ purposes: { id: string }[] }>();
    const consent = await call(server, byRole, 'POST', `/consent/${byRole.pointId}/consent`, {
      body: { dp_id: 'dp-9', purposes: point.purposes.map((p) => ({ id: p.id, granted: true })) },
    });
    expect(consent.status, consent.body).toBe(201);
    const receipt = await call(server, byRole, 'GET', `/api/v1/consents/${consent.json().consent_id}/receipt`);
    expect(receipt.status, receipt.body).toBe(200);
    expect(receipt.json().kid).toBe(rotated.kid);
    expect(await server.stop()).toBe(0);
  });
});
