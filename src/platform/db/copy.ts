// `assent store copy`: every row of every table from one store (the embedded store) into an empty,
// migrated PostgreSQL database, exactly as stored. The tables come from the catalog (readCatalog), in
// an order that satisfies the foreign keys (fillOrder), so a table a migration adds is copied without a
// change here; a table only one side has stops the copy before anything is written.
//
// Rows travel as PostgreSQL's own JSON text of the row (row_to_json on the source, json_populate_recordset
// on the target): timestamps keep their microseconds, bytea its bytes, jsonb its value, and nothing is
// parsed in JavaScript on the way (a bigint stays exact).
//
// The copy is one transaction on the target, as the tables' owner (the role that ran the migrations):
// - `alter table … disable trigger user` on every table for the copy's transaction only. Rows keep
//   what the source stored: the audit log's trigger (migration 0013) would otherwise re-chain each
//   entry (new seq, prev_hash and hash) instead of keeping the source's, and the auth-change
//   notifications would fire for rows that changed nothing. Foreign keys stay checked (they are not
//   user triggers).
// - `alter table … no force row level security` on the forced tables, so the owner sees and writes
//   every organization's rows in one pass.
// Both are undone before the commit; the ALTERs hold their tables' locks until then, so no other
// session ever sees a table without its trigger or its forced policy, and a copy that fails rolls all
// of it back, leaving the target as empty as it was.
import type { Catalog, TableInfo } from './catalog.js';
import { fillOrder, readCatalog } from './catalog.js';
import type { Database, Queryable } from './types.js';

/** The copy was refused or its check failed; the message says why and what to do. */
export class StoreCopyError extends Error {}

export interface TableCopy {
  table: string;
  rows: number;
}

export interface CopyOptions {
  /** Rows per batch (default 1000). */
  batch?: number;
  /** Called as each table is done. */
  onTable?(copy: TableCopy): void;
}

function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The tables of both catalogs must be the same, with the same columns: else name the difference. */
export function catalogDifferences(source: Catalog, target: Catalog): string[] {
  const problems: string[] = [];
  const targetTables = new Map(target.tables.map((t) => [t.name, t]));
  const sourceTables = new Set(source.tables.map((t) => t.name));
  for (const t of source.tables) {
    const other = targetTables.get(t.name);
    if (!other) {
      problems.push(`table ${t.name} is in the source but not in the target's schema (a table no migration creates)`);
      continue;
    }
    const missing = t.columns.filter((c) => !other.columns.includes(c));
    const extra = other.columns.filter((c) => !t.columns.includes(c));
    if (missing.length || extra.length) {
      problems.push(
        `table ${t.name} has different columns (${[...missing.map((c) => `only the source has ${c}`), ...extra.map((c) => `only the target has ${c}`)].join(', ')})`,
      );
    }
  }
  for (const t of target.tables) if (!sourceTables.has(t.name)) problems.push(`table ${t.name} is in the target but not in the source`);
  return problems;
}

async function count(q: Queryable, table: string): Promise<number> {
  const [row] = await q.query<{ n: string | number }>(`select count(*) as n from ${ident(table)}`);
  return Number(row!.n);
}

/** Columns a row cannot be given (generated columns): the target computes them. */
async function generatedColumns(q: Queryable): Promise<Set<string>> {
  const rows = await q.query<{ table_name: string; column_name: string }>(
    `select c.relname as table_name, a.attname as column_name
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and a.attnum > 0 and not a.attisdropped and a.attgenerated <> ''`,
  );
  return new Set(rows.map((r) => `${r.table_name}.${r.column_name}`));
}

/**
 * Copies every table of `source` into `target`. Both must be migrated to the same schema; the target
 * must be empty (every table, as the owner sees it with its policies lifted). Throws StoreCopyError
 * (nothing written) when it is not, or when a count differs after the copy.
 */
export async function copyStore(source: Database, target: Database, options: CopyOptions = {}): Promise<TableCopy[]> {
  const batch = options.batch ?? 1000;
  const [sourceCatalog, targetCatalog] = await Promise.all([readCatalog(source.system), readCatalog(target.system)]);
  const differences = catalogDifferences(sourceCatalog, targetCatalog);
  if (differences.length) {
    throw new StoreCopyError(`The source and the target have different schemas, so nothing was copied: ${differences.join('; ')}.`);
  }
  const order: TableInfo[] = fillOrder(sourceCatalog);
  const generated = await generatedColumns(target.system);

  return source.system.transaction((src) =>
    target.system.transaction(async (dst) => {
      const names = order.map((t) => t.name);
      const forced = (
        await dst.query<{ relname: string }>(
          `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = current_schema() and c.relname = any($1::text[]) and c.relforcerowsecurity`,
          [names],
        )
      ).map((r) => r.relname);
      try {
        for (const t of names) await dst.query(`alter table ${ident(t)} disable trigger user`);
        for (const t of forced) await dst.query(`alter table ${ident(t)} no force row level security`);
      } catch (e) {
        if ((e as { code?: unknown }).code === '42501') {
          throw new StoreCopyError(
            `The target's user does not own the tables (${(e as Error).message}): copy as the user that ran the migrations on the target, or into a new database that this user creates.`,
          );
        }
        throw e;
      }

      const notEmpty: string[] = [];
      for (const t of names) {
        const [row] = await dst.query<{ any: boolean }>(`select exists (select 1 from ${ident(t)}) as any`);
        if (row!.any) notEmpty.push(t);
      }
      if (notEmpty.length) {
        throw new StoreCopyError(
          `The target database is not empty (rows in ${notEmpty.join(', ')}): nothing was copied. Copy into a new, empty database (createdb).`,
        );
      }

      const copies: TableCopy[] = [];
      for (const table of order) {
        const columns = table.columns.filter((c) => !generated.has(`${table.name}.${c}`)).map(ident).join(', ');
        const insert =
          `insert into ${ident(table.name)} (${columns}) overriding system value ` +
          `select ${columns} from json_populate_recordset(null::${ident(table.name)}, $1::text::json)`;
        // A cursor in the source's transaction: one snapshot for every table, read a batch at a time.
        await src.query(`declare assent_copy no scroll cursor for select row_to_json(t)::text as j from ${ident(table.name)} t`);
        let rows = 0;
        for (;;) {
          const fetched = await src.query<{ j: string }>(`fetch forward ${batch} from assent_copy`);
          if (fetched.length === 0) break;
          await dst.query(insert, [`[${fetched.map((r) => r.j).join(',')}]`]);
          rows += fetched.length;
          if (fetched.length < batch) break;
        }
        await src.query('close assent_copy');
        const [inSource, inTarget] = await Promise.all([count(src, table.name), count(dst, table.name)]);
        if (inSource !== rows || inTarget !== rows) {
          throw new StoreCopyError(`${table.name}: the source has ${inSource} rows, ${rows} were read and the target has ${inTarget}: nothing was copied.`);
        }
        const copy = { table: table.name, rows };
        copies.push(copy);
        options.onTable?.(copy);
      }

      for (const t of forced) await dst.query(`alter table ${ident(t)} force row level security`);
      for (const t of names) await dst.query(`alter table ${ident(t)} enable trigger user`);
      return copies;
    }),
  );
}
