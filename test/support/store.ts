// A fresh, migrated store per test file: PGlite in memory, or (project "postgres") a scratch database
// on TEST_DATABASE_URL, dropped afterwards. Real databases, never mocks. Each starts as a copy of a
// migrated template (test/support/templates.ts) rather than running every migration itself; opening
// still runs migrate(), which then finds nothing to apply.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase } from '../../src/platform/db/open.js';
import { migrate } from '../../src/platform/db/migrate.js';
import type { Database } from '../../src/platform/db/types.js';
import { databaseUrl, pgliteTemplateTarball, postgresTemplate } from './templates.js';

export type StoreKind = 'pglite' | 'postgres';

export function storeKind(): StoreKind {
  return process.env.ASSENT_TEST_STORE === 'postgres' ? 'postgres' : 'pglite';
}

export interface ScratchStore {
  kind: StoreKind;
  /** DATABASE_URL for a child process (postgres), or null (pglite: use a data directory instead). */
  url: string | null;
  /** Opens (another) connection to the same store, migrated; on PostgreSQL, with these pool sizes (default 4 and 4 read lanes). */
  open(options?: { rls?: boolean; poolSize?: number; readLanes?: number }): Promise<Database>;
  drop(): Promise<void>;
}

/**
 * Creates a scratch database on TEST_DATABASE_URL and returns its URL: empty, or with `migrated`, a
 * copy of the migrated template.
 */
export async function createScratchPostgres(options: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is not set: the postgres project needs it');
  const name = `assent_t_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? ` template ${await postgresTemplate(adminUrl)}` : '';
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}${template}`);
  return {
    url: databaseUrl(adminUrl, name),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export async function createScratchStore(): Promise<ScratchStore> {
  if (storeKind() === 'pglite') {
    const opened: Database[] = [];
    return {
      kind: 'pglite',
      url: null,
      async open(options) {
        // In memory: each open is its own store, so open once per file.
        if (opened.length > 0) throw new Error('an in-memory PGlite store can be opened once');
        const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://', rls: options?.rls, loadDataDir: await pgliteTemplateTarball() });
        await migrate(db);
        opened.push(db);
        return db;
      },
      async drop() {
        await Promise.all(opened.map((d) => d.close().catch(() => {})));
      },
    };
  }
  const scratch = await createScratchPostgres({ migrated: true });
  const opened: Database[] = [];
  return {
    kind: 'postgres',
    url: scratch.url,
    async open(options) {
      const db = await openDatabase({ databaseUrl: scratch.url, dataDir: '', rls: options?.rls, poolSize: options?.poolSize ?? 4, readLanes: options?.readLanes });
      await migrate(db);
      opened.push(db);
      return db;
    },
    async drop() {
      await Promise.all(opened.map((d) => d.close().catch(() => {})));
      await scratch.drop();
    },
  };
}
