// Health endpoints: /health (database answers), /health/live (the process answers), /health/ready
// (the store answers, every migration is applied, the connecting role can take the tenant role).
// A role that cannot take the tenant role: test/platform/tenant-role.test.ts (PostgreSQL).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import { listMigrations } from '../../src/platform/db/migrate.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

describe('GET /health/live', () => {
  test('200 {status: ok} on the bare domain and on an organization host, without credentials', async () => {
    const org = await t.org();
    for (const host of [undefined, org]) {
      const res = await t.call({ method: 'GET', url: '/health/live', org: host });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    }
  });
});

describe('GET /health/ready', () => {
  test('200: started, database, migrations and tenant role all ok', async () => {
    const res = await t.call({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', tenant_role: 'ok' } });
  });

  test('503 naming the migration when one of this version is not applied; 200 again once it is', async () => {
    const last = listMigrations().at(-1)!.version;
    await t.db.system.query('delete from schema_migrations where version = $1', [last]);
    try {
      const res = await t.call({ method: 'GET', url: '/health/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'ok', migrations: 'failed', tenant_role: 'not_run' },
        error: `Migrations not applied: ${last} (run "assent migrate")`,
      });
    } finally {
      await t.db.system.query('insert into schema_migrations (version) values ($1)', [last]);
    }
    expect((await t.call({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  });

  test('the OpenAPI document lists /health/live and /health/ready', async () => {
    const doc = (await t.call({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/health/live'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/health/ready'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/health/ready'].get.responses)).toEqual(expect.arrayContaining(['200', '503']));
  });
});

describe('with ASSENT_RLS=off', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await buildTestApp({ rls: false, env: { ASSENT_RLS: 'off' } });
  });
  afterAll(async () => off?.close());

  test('the tenant role is not needed, so not checked: 200 with tenant_role skipped', async () => {
    const res = await off.call({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', tenant_role: 'skipped' } });
  });
});
