// Opens the configured store for a process (server or CLI): takes the data-directory lock on the
// embedded store (waiting while another assent command holds it), opens, migrates. close() undoes all of it, in order.
import type { Config } from '../../config.js';
import { acquireDataDirLock, DataDirBusyError, type DataDirLock } from './data-dir-lock.js';
import { migrate, type MigrationResult } from './migrate.js';
import { openDatabase } from './open.js';
import type { Database } from './types.js';

export interface OpenStore {
  db: Database;
  migration: MigrationResult;
  close(): Promise<void>;
}

/** How long opening waits while another assent command (a short one) holds the data directory. */
const CLI_HOLDER_WAIT_MS = 30_000;

/** The data directory's lock; while an assent command holds it, waits for it (a server is refused at once). */
async function lockDataDir(dataDir: string, holder: 'server' | 'cli'): Promise<DataDirLock> {
  const deadline = Date.now() + CLI_HOLDER_WAIT_MS;
  for (;;) {
    try {
      return acquireDataDirLock(dataDir, holder);
    } catch (e) {
      if (!(e instanceof DataDirBusyError) || e.holder !== 'cli' || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function openStore(config: Config, holder: 'server' | 'cli'): Promise<OpenStore> {
  const lock = config.databaseUrl ? null : await lockDataDir(config.dataDir, holder);
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, rls: config.rls, sharedBuffers: config.pgliteSharedBuffers });
    try {
      const migration = await migrate(db, { checkTenantRole: config.rls });
      return {
        db,
        migration,
        async close() {
          try {
            await db.close();
          } finally {
            lock?.release();
          }
        },
      };
    } catch (e) {
      await db.close().catch(() => {});
      throw e;
    }
  } catch (e) {
    lock?.release();
    throw e;
  }
}
