// Migrated store templates: every scratch store starts as a copy of a store that ran all migrations,
// instead of running them itself (measured in the README's "Tests" section). One template per store:
//   PGlite      a migrated data directory, and the same as a tarball (PGlite's dumpDataDir), under
//               <tmpdir>/assent-test-templates/pglite-<hash>/: a CLI test copies the directory for its
//               child's DATA_DIR, an in-memory store starts from the tarball (loadDataDir);
//   PostgreSQL  a database assent_tpl_<hash> on TEST_DATABASE_URL's server, marked as a template that
//               takes no connections: a scratch database is CREATE DATABASE … TEMPLATE it.
// <hash> is the SHA-256 of the migrations and of the code that applies them (and, for PGlite, of
// PGlite's version and of the code that opens it): a change to any of them names another template,
// which is made on first use, so a stale template is never used. A template is made under a temporary
// name and renamed when complete, so a crash half-way leaves nothing that looks like one.
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { migrate } from '../../src/platform/db/migrate.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { inputsHash } from './hash.js';

const SCHEMA = ['src/db/migrations', 'src/platform/db/migrate.ts'];
const PGLITE = [...SCHEMA, 'src/platform/db/open.ts', 'node_modules/@electric-sql/pglite/package.json'];
const DIR = join(tmpdir(), 'assent-test-templates');
/** Templates of other migrations are dropped once this old (another checkout may still use one). */
const KEEP_DAYS = 7;

let pgliteDir: string | null = null;

/** The PGlite template's directory (data/ and data.tar), made if missing. */
export async function pgliteTemplate(): Promise<string> {
  if (pgliteDir && existsSync(pgliteDir)) return pgliteDir;
  const dir = join(DIR, `pglite-${inputsHash(PGLITE).slice(0, 16)}`);
  if (!existsSync(dir)) {
    mkdirSync(DIR, { recursive: true });
    const building = `${dir}.building-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      const db = await openDatabase({ databaseUrl: null, dataDir: join(building, 'data') });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      const pg = await PGlite.create(join(building, 'data'));
      try {
        const tar = await pg.dumpDataDir('none');
        writeFileSync(join(building, 'data.tar'), Buffer.from(await tar.arrayBuffer()));
      } finally {
        await pg.close();
      }
      try {
        renameSync(building, dir);
      } catch (e) {
        // Another process made it meanwhile.
        if (!existsSync(dir)) throw e;
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
  }
  pgliteDir = dir;
  return dir;
}

/** A tarball of the migrated PGlite store, for PGlite's loadDataDir. */
export async function pgliteTemplateTarball(): Promise<Blob> {
  return new Blob([readFileSync(join(await pgliteTemplate(), 'data.tar'))], { type: 'application/x-tar' });
}

/** Copies the migrated PGlite data directory into dataDir (empty or missing). */
export async function copyPgliteTemplate(dataDir: string): Promise<void> {
  cpSync(join(await pgliteTemplate(), 'data'), dataDir, { recursive: true });
}

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function isTemplate(admin: postgres.Sql, name: string): Promise<boolean> {
  const rows = await admin<{ datistemplate: boolean }[]>`select datistemplate from pg_database where datname = ${name}`;
  return rows[0]?.datistemplate === true;
}

/** The name of the migrated template database on adminUrl's server, made if missing. */
export async function postgresTemplate(adminUrl: string): Promise<string> {
  const name = `assent_tpl_${inputsHash(SCHEMA).slice(0, 16)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    if (await isTemplate(admin, name)) return name;
    // One maker at a time (max: 1, so the lock and its release share a session).
    await admin`select pg_advisory_lock(7426002)`;
    try {
      if (await isTemplate(admin, name)) return name;
      const building = `${name}_building_${randomBytes(3).toString('hex')}`;
      await admin.unsafe(`create database ${building}`);
      try {
        const db = await openDatabase({ databaseUrl: databaseUrl(adminUrl, building), dataDir: '', poolSize: 1, readLanes: 1 });
        try {
          await migrate(db);
        } finally {
          await db.close();
        }
        // A closed connection's server process may take a moment to go: renaming waits for none.
        for (let attempt = 1; ; attempt++) {
          try {
            await admin.unsafe(`alter database ${building} rename to ${name}`);
            break;
          } catch (e) {
            if ((e as { code?: string }).code !== '55006' || attempt >= 50) throw e;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      } catch (e) {
        await admin.unsafe(`drop database if exists ${building} with (force)`).catch(() => {});
        throw e;
      }
      await admin.unsafe(`comment on database ${name} is 'assent test template, made ${new Date().toISOString()}'`);
      // No connections: nothing can change it, and nothing connected can keep CREATE DATABASE from copying it.
      await admin.unsafe(`alter database ${name} with is_template true allow_connections false`);
      return name;
    } finally {
      await admin`select pg_advisory_unlock(7426002)`;
    }
  } finally {
    await admin.end();
  }
}

/** Drops the templates of other migrations made over KEEP_DAYS days ago. */
export async function dropOldPostgresTemplates(adminUrl: string): Promise<void> {
  const current = `assent_tpl_${inputsHash(SCHEMA).slice(0, 16)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin<{ datname: string; comment: string | null }[]>`
      select datname, shobj_description(oid, 'pg_database') as comment from pg_database
      where datname like 'assent\\_tpl\\_%' and datistemplate and datname <> ${current}`;
    for (const { datname, comment } of rows) {
      const made = Date.parse(/made (\S+)/.exec(comment ?? '')?.[1] ?? '');
      if (!(Date.now() - made > KEEP_DAYS * 86_400_000)) continue;
      await admin.unsafe(`alter database ${datname} with is_template false`);
      await admin.unsafe(`drop database if exists ${datname}`).catch(() => {});
    }
  } finally {
    await admin.end();
  }
}
