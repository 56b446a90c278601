// `assent backup` and `assent restore` for the embedded store. A backup is PGlite's own dump of the data
// directory (a gzipped tarball of the data directory, read between two uses of the one connection after a CHECKPOINT: see
// Database.dumpDataDir), so it can be taken while the server runs: the CLI hands the command to the
// running server over its control socket and the server writes the file. A restore unpacks it into an
// empty data directory. PostgreSQL has pg_dump and pg_restore (docs/operations.md).
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadDataDir } from './open.js';
import { PROCESS_FILES } from './tar.js';
import type { Database } from './types.js';

/** A backup or restore refused, or failed; the message says why and what to do. */
export class BackupError extends Error {}


/** Writes the store's dump to `out` (an absolute path that must not exist yet), owner-readable only. */
export async function writeBackup(db: Database, out: string): Promise<{ file: string; bytes: number }> {
  if (!db.dumpDataDir) throw new BackupError('assent backup copies the embedded store; for PostgreSQL use pg_dump (docs/operations.md, "Backups")');
  if (existsSync(out)) throw new BackupError(`${out} exists: give a new file name (a backup never overwrites a file)`);
  const dump = await db.dumpDataDir();
  const bytes = Buffer.from(await dump.arrayBuffer());
  // Written beside the target and renamed: a file named `out` is always a whole backup.
  const partial = `${out}.partial-${process.pid}`;
  try {
    await writeFile(partial, bytes, { mode: 0o600, flag: 'wx' });
    if (existsSync(out)) throw new BackupError(`${out} appeared while the backup was written: give a new file name`);
    renameSync(partial, out);
  } finally {
    rmSync(partial, { force: true });
  }
  return { file: out, bytes: bytes.length };
}

/** Unpacks the backup `file` into `dataDir`, which must be missing or empty. */
export async function restoreBackup(file: string, dataDir: string): Promise<{ bytes: number }> {
  if (!existsSync(file) || !statSync(file).isFile()) throw new BackupError(`${file}: no such backup file`);
  if (existsSync(dataDir)) {
    const entries = readdirSync(dataDir);
    if (entries.length > 0) {
      throw new BackupError(
        `The data directory ${dataDir} is not empty (${entries.length} entries): restore into a new, empty directory (set DATA_DIR), never over a store`,
      );
    }
  }
  const bytes = await readFile(file);
  try {
    await loadDataDir(dataDir, new Blob([bytes as unknown as BlobPart], { type: 'application/x-gzip' }));
  } catch (e) {
    // Leave no half-unpacked store behind: the directory was empty.
    for (const entry of existsSync(dataDir) ? readdirSync(dataDir) : []) rmSync(join(dataDir, entry), { recursive: true, force: true });
    throw new BackupError(`${file} could not be restored (${(e as Error).message}): is it a file assent backup wrote?`);
  }
  // Backups made by PGlite's own dump (or an older version) may carry them.
  for (const name of PROCESS_FILES) rmSync(join(dataDir, name), { force: true });
  return { bytes: bytes.length };
}
