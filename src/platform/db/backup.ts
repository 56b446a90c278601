// `assent backup` and `assent restore` for the embedded store. A backup is the data directory as a
// gzipped tar (src/platform/db/tar.ts), streamed into the file while the store's one connection is
// held after a CHECKPOINT (Database.withQuietDataDir): nothing is written to the directory during the
// copy, so it can be taken while the server runs (the CLI hands the command to the running server over
// its control socket and the server writes the file). A restore streams it back into an empty data
// directory. Neither holds the store in memory: a file at a time, a chunk at a time, at the pace the
// disk takes it. PostgreSQL has pg_dump and pg_restore (docs/operations.md).
import { createReadStream, createWriteStream, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import tar from 'tar-stream';
import { packDirectory, unpackInto } from './tar.js';
import type { Database } from './types.js';

/** A backup or restore refused, or failed; the message says why and what to do. */
export class BackupError extends Error {}

/** Writes the store's data directory to `out` (an absolute path that must not exist yet), owner-readable only. */
export async function writeBackup(db: Database, out: string): Promise<{ file: string; bytes: number }> {
  if (!db.withQuietDataDir) throw new BackupError('assent backup copies the embedded store; for PostgreSQL use pg_dump (docs/operations.md, "Backups")');
  if (existsSync(out)) throw new BackupError(`${out} exists: give a new file name (a backup never overwrites a file)`);
  // Written beside the target and renamed: a file named `out` is always a whole backup.
  const partial = `${out}.partial-${process.pid}`;
  try {
    const bytes = await db.withQuietDataDir(async (dataDir) => {
      const pack = tar.pack();
      const file = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
      // The tar, gzipped, into the file; packDirectory reads each file only as fast as this takes it.
      // Both settled before the connection is given back: nothing still reads the directory then.
      const [written, packed] = await Promise.allSettled([pipeline(pack, createGzip(), file), packDirectory(dataDir, pack)]);
      if (packed.status === 'rejected') throw packed.reason;
      if (written.status === 'rejected') throw written.reason;
      return file.bytesWritten;
    });
    // On the disk before it takes its name.
    const handle = await open(partial, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (existsSync(out)) throw new BackupError(`${out} appeared while the backup was written: give a new file name`);
    renameSync(partial, out);
    return { file: out, bytes };
  } finally {
    rmSync(partial, { force: true });
  }
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
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const input = createReadStream(file);
    const gunzip = createGunzip();
    input.on('error', (e) => gunzip.destroy(e));
    await unpackInto(input.pipe(gunzip), dataDir);
    // A tar of something else would leave PGlite an empty directory, which it would fill with a new store.
    if (!existsSync(join(dataDir, 'PG_VERSION'))) throw new Error('it holds no PG_VERSION, so it is not a data directory');
    // Opened once and closed: the engine accepts the directory (the command then migrates and verifies).
    const pg = await PGlite.create(dataDir);
    await pg.close();
  } catch (e) {
    // Leave no half-unpacked store behind: the directory was empty.
    for (const entry of existsSync(dataDir) ? readdirSync(dataDir) : []) rmSync(join(dataDir, entry), { recursive: true, force: true });
    throw new BackupError(`${file} could not be restored (${(e as Error).message}): is it a file assent backup wrote?`);
  }
  return { bytes: statSync(file).size };
}
