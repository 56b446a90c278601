// Opens the configured store for a process (server or CLI): takes the data-directory lock on the
// embedded store, opens, migrates. close() undoes all of it, in order.
import type { Config } from '../../config.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { migrate, type MigrationResult } from './migrate.js';
import { openDatabase } from './open.js';
import type { Database } from './types.js';

export interface OpenStore {
  db: Database;
  migration: MigrationResult;
  close(): Promise<void>;
}

export async function openStore(config: Config, holder: 'server' | 'cli'): Promise<OpenStore> {
  const lock = config.databaseUrl ? null : acquireDataDirLock(config.dataDir, holder);
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
