// Ready for a distributed PostgreSQL (Citus, sharded by organization; issue 19 item 6): the migrated
// schema, read from the store's own catalog, has every tenant table's primary key and unique
// constraints leading with org_id and every foreign key between tenant tables pairing org_id with
// org_id; and no SQL in src/ joins a tenant table without matching org_id.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { distributionProblems, fillOrder, readCatalog, type Catalog } from '../../src/platform/db/catalog.js';
import type { Database } from '../../src/platform/db/types.js';
import { createScratchStore, type ScratchStore } from '../support/store.js';

let store: ScratchStore;
let db: Database;
let catalog: Catalog;

beforeAll(async () => {
  store = await createScratchStore();
  db = await store.open();
  catalog = await readCatalog(db.system);
});
afterAll(() => store.drop());

/** The global tables: reference tables on Citus. Adding one is a decision, so the test names them. */
const GLOBAL = ['auth_sessions', 'auth_tokens', 'organizations', 'users'];

test('the catalog sees the tables: tenant tables have org_id, the rest are the known global tables', () => {
  const names = catalog.tables.map((t) => t.name);
  for (const t of ['api_keys', 'grievances', 'nominees', 'consent_records', 'audit_log', 'outbound_messages', 'memberships']) {
    expect(names).toContain(t);
    expect(catalog.tables.find((x) => x.name === t)!.tenant).toBe(true);
  }
  expect(catalog.tables.filter((t) => !t.tenant).map((t) => t.name).sort()).toEqual(GLOBAL);
  expect(catalog.keys.find((k) => k.table === 'grievances' && k.kind === 'primary')!.columns).toEqual(['org_id', 'id']);
  expect(catalog.foreignKeys.find((f) => f.table === 'consent_link_codes')).toMatchObject({
    columns: ['org_id', 'event_id'],
    references: 'consent_link_events',
    referencedColumns: ['org_id', 'id'],
  });
});

test('every tenant key leads with org_id and every foreign key between tenant tables carries it', () => {
  expect(distributionProblems(catalog)).toEqual([]);
});

test('the check finds each kind of problem it looks for', () => {
  const broken: Catalog = {
    tables: [
      { name: 'organizations', columns: ['id'], tenant: false },
      { name: 'a', columns: ['org_id', 'id'], tenant: true },
      { name: 'b', columns: ['org_id', 'id', 'a_id'], tenant: true },
      { name: 'c', columns: ['org_id', 'x'], tenant: true },
      { name: 'g', columns: ['id', 'b_id'], tenant: false },
    ],
    keys: [
      { table: 'a', name: 'a_pkey', kind: 'primary', columns: ['org_id', 'id'] },
      { table: 'b', name: 'b_pkey', kind: 'primary', columns: ['id'] },
      { table: 'b', name: 'b_email', kind: 'unique', columns: ['a_id', 'org_id'] },
    ],
    foreignKeys: [
      { table: 'b', name: 'b_a', columns: ['a_id'], references: 'a', referencedColumns: ['id'] },
      { table: 'a', name: 'a_org', columns: ['org_id'], references: 'organizations', referencedColumns: ['id'] },
      { table: 'g', name: 'g_b', columns: ['b_id'], references: 'b', referencedColumns: ['id'] },
    ],
  };
  expect(distributionProblems(broken)).toEqual([
    'c: a tenant table without a primary key',
    'b: primary key b_pkey (id) does not lead with org_id',
    'b: unique key b_email (a_id, org_id) does not lead with org_id',
    'b: foreign key b_a to a does not pair org_id with org_id',
    'g: a global table with foreign key g_b to the tenant table b',
  ]);
});

test('the fill order puts every referenced table first', () => {
  const order = fillOrder(catalog).map((t) => t.name);
  expect(order).toHaveLength(catalog.tables.length);
  for (const fk of catalog.foreignKeys) {
    if (fk.references === fk.table) continue;
    expect(order.indexOf(fk.references), `${fk.table} -> ${fk.references}`).toBeLessThan(order.indexOf(fk.table));
  }
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every `join <tenant table> <alias> on …` must match org_id in its condition (up to the next join,
 * where, group, order or the end of the string), so no statement pairs two organizations' rows.
 * A join of a global table (users) needs no org_id.
 */
function joinsWithoutOrgId(text: string, tenantTables: Set<string>): string[] {
  const pattern = /\bjoin\s+([a-z_]+)\s+(?:as\s+)?([a-z_]+)\s+on\s+([\s\S]*?)(?=\bjoin\b|\bwhere\b|\bgroup\b|\border\b|\blimit\b|\breturning\b|[`'")]|$)/gi;
  return [...text.matchAll(pattern)]
    .map(([, table = '', alias = '', on = '']) => ({ table, alias, on }))
    .filter((j) => tenantTables.has(j.table.toLowerCase()) && !/\borg_id\b/i.test(j.on))
    .map((j) => `join ${j.table} ${j.alias} on ${j.on.trim()}`);
}

test('the join check finds a join of tenant tables on their ids alone', () => {
  const tenant = new Set(['grievances', 'grievance_status_changes']);
  const sql = `select * from grievances g join grievance_status_changes h on h.grievance_id = g.id where g.org_id = $1`;
  expect(joinsWithoutOrgId(sql, tenant)).toEqual(['join grievance_status_changes h on h.grievance_id = g.id']);
  expect(joinsWithoutOrgId(sql.replace('on h.', 'on h.org_id = g.org_id and h.'), tenant)).toEqual([]);
  expect(joinsWithoutOrgId('from memberships m join users u on u.id = m.user_id', tenant)).toEqual([]);
});

test('no statement in src/ joins a tenant table without matching org_id', () => {
  const tenant = new Set(catalog.tables.filter((t) => t.tenant).map((t) => t.name));
  const root = fileURLToPath(new URL('../../src/', import.meta.url));
  const found = sourceFiles(root).flatMap((file) =>
    joinsWithoutOrgId(readFileSync(file, 'utf8'), tenant).map((j) => `${file.slice(root.length)}: ${j}`),
  );
  expect(found).toEqual([]);
});
