// The embedded store belongs to one process at a time: a lock file in DATA_DIR names the holder, so the
// CLI can refuse clearly while a server runs (PGlite itself would corrupt data under two writers).
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirBusyError extends Error {
  constructor(
    message: string,
    /** Who holds the directory, when a live process does. */
    readonly holder?: 'server' | 'cli',
  ) {
    super(message);
  }
}

export interface DataDirLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live process holding dataDir's lock, or null when none does (no lock, or its process is gone). */
export function dataDirHolder(dataDir: string): { pid: number; holder: 'server' | 'cli' } | null {
  try {
    const owner = JSON.parse(readFileSync(join(dataDir, 'assent.lock'), 'utf8')) as { pid?: number; holder?: 'server' | 'cli' };
    return owner.pid && alive(owner.pid) ? { pid: owner.pid, holder: owner.holder ?? 'cli' } : null;
  } catch {
    return null;
  }
}

export function acquireDataDirLock(dataDir: string, holder: 'server' | 'cli'): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'assent.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          rmSync(path, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner: { pid?: number; holder?: string } = {};
      try {
        owner = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        // A lock file being written right now, or garbage: treated as stale below if its pid is unknown.
      }
      if (owner.pid && owner.pid !== process.pid && alive(owner.pid)) {
        const who = owner.holder === 'server' ? 'an Assent server' : 'another assent command';
        throw new DataDirBusyError(
          `The data directory ${dataDir} is in use by ${who} (pid ${owner.pid}). The embedded store allows one process at a time: ` +
            'stop it first, or run against PostgreSQL (DATABASE_URL), where the CLI and the server can run together.',
          owner.holder === 'server' ? 'server' : 'cli',
        );
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new DataDirBusyError(`Could not lock the data directory ${dataDir}`);
}
