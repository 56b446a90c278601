// What the store's own catalog says about its tables: which are tenant tables (they have org_id), their
// keys and foreign keys, and an order in which they can be filled (referenced tables first). Read by the
// Citus-readiness test and by `assent store copy`, so a table added by a migration needs no code here.
import type { Queryable } from './types.js';

export interface TableInfo {
  name: string;
  /** Column names in their table order. */
  columns: string[];
  /** A tenant table: it has an org_id column (distributed by it on Citus). Others are global (reference tables). */
  tenant: boolean;
}

export interface KeyConstraint {
  table: string;
  name: string;
  kind: 'primary' | 'unique';
  columns: string[];
}

export interface ForeignKey {
  table: string;
  name: string;
  columns: string[];
  references: string;
  referencedColumns: string[];
}

export interface Catalog {
  tables: TableInfo[];
  keys: KeyConstraint[];
  foreignKeys: ForeignKey[];
}

/** Tables the migrator keeps for itself: not data. */
const BOOKKEEPING = new Set(['schema_migrations']);

/** The ordinary tables of the current schema, their keys (constraints and unique indexes) and foreign keys. */
export async function readCatalog(db: Queryable): Promise<Catalog> {
  const columns = await db.query<{ table_name: string; column_name: string }>(
    `select c.relname as table_name, a.attname as column_name
       from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
      order by c.relname, a.attnum`,
  );
  const byTable = new Map<string, string[]>();
  for (const row of columns) {
    if (BOOKKEEPING.has(row.table_name)) continue;
    byTable.set(row.table_name, [...(byTable.get(row.table_name) ?? []), row.column_name]);
  }
  const tables = [...byTable].map(([name, cols]) => ({ name, columns: cols, tenant: cols.includes('org_id') }));

  // Unique indexes cover primary keys, unique constraints and bare unique indexes alike; the columns
  // in key order (an expression column reads as '?').
  const keys = await db.query<{ table_name: string; name: string; primary: boolean; columns: string[] }>(
    `select t.relname as table_name, i.relname as name, x.indisprimary as primary,
            array(select coalesce(a.attname, '?')
                    from unnest(x.indkey::int2[]) with ordinality as k(attnum, pos)
                    left join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum and k.attnum > 0
                   where k.pos <= x.indnkeyatts
                   order by k.pos) as columns
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class t on t.oid = x.indrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema() and x.indisunique and t.relkind in ('r', 'p')`,
  );
  const foreignKeys = await db.query<{ table_name: string; name: string; columns: string[]; references: string; referenced_columns: string[] }>(
    `select t.relname as table_name, c.conname as name, r.relname as references,
            array(select a.attname from unnest(c.conkey) with ordinality k(attnum, pos)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.pos) as columns,
            array(select a.attname from unnest(c.confkey) with ordinality k(attnum, pos)
                    join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.pos) as referenced_columns
       from pg_constraint c
       join pg_class t on t.oid = c.conrelid
       join pg_class r on r.oid = c.confrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema() and c.contype = 'f'`,
  );
  const known = (name: string) => byTable.has(name);
  return {
    tables,
    keys: keys
      .filter((k) => known(k.table_name))
      .map((k) => ({ table: k.table_name, name: k.name, kind: k.primary ? 'primary' : 'unique', columns: k.columns })),
    foreignKeys: foreignKeys
      .filter((f) => known(f.table_name))
      .map((f) => ({ table: f.table_name, name: f.name, columns: f.columns, references: f.references, referencedColumns: f.referenced_columns })),
  };
}

/**
 * The tables ordered so that every table comes after the tables it references (a self-reference is
 * ignored), ties by name so the order is stable. Throws on a cycle: no copy order would satisfy it.
 */
export function fillOrder(catalog: Catalog): TableInfo[] {
  const byName = new Map(catalog.tables.map((t) => [t.name, t]));
  const needs = new Map(catalog.tables.map((t) => [t.name, new Set<string>()]));
  for (const fk of catalog.foreignKeys) {
    if (fk.references !== fk.table && byName.has(fk.references)) needs.get(fk.table)!.add(fk.references);
  }
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  while (ordered.length < catalog.tables.length) {
    const ready = [...needs]
      .filter(([name, deps]) => !placed.has(name) && [...deps].every((d) => placed.has(d)))
      .map(([name]) => name)
      .sort();
    if (ready.length === 0) throw new Error('the foreign keys between tables form a cycle');
    for (const name of ready) {
      placed.add(name);
      ordered.push(byName.get(name)!);
    }
  }
  return ordered;
}

/**
 * What keeps the schema from being distributed by org_id on Citus, one sentence per problem: a tenant
 * table's primary key or unique constraint that does not lead with org_id, a foreign key between tenant
 * tables without org_id at the same position on both sides, a global table referencing a tenant table.
 */
export function distributionProblems(catalog: Catalog): string[] {
  const tenant = new Set(catalog.tables.filter((t) => t.tenant).map((t) => t.name));
  const problems: string[] = [];
  for (const t of catalog.tables) {
    if (t.tenant && !catalog.keys.some((k) => k.table === t.name && k.kind === 'primary')) {
      problems.push(`${t.name}: a tenant table without a primary key`);
    }
  }
  for (const k of catalog.keys) {
    if (tenant.has(k.table) && k.columns[0] !== 'org_id') {
      problems.push(`${k.table}: ${k.kind} key ${k.name} (${k.columns.join(', ')}) does not lead with org_id`);
    }
  }
  for (const fk of catalog.foreignKeys) {
    const from = tenant.has(fk.table);
    const to = tenant.has(fk.references);
    if (from && to) {
      const at = fk.columns.indexOf('org_id');
      if (at < 0 || fk.referencedColumns[at] !== 'org_id') {
        problems.push(`${fk.table}: foreign key ${fk.name} to ${fk.references} does not pair org_id with org_id`);
      }
    } else if (!from && to) {
      problems.push(`${fk.table}: a global table with foreign key ${fk.name} to the tenant table ${fk.references}`);
    }
  }
  return problems;
}
