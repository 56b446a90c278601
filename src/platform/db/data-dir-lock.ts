// The embedded store belongs to one process at a time: a lock file in DATA_DIR names the holder, so the
// CLI can refuse clearly while a server runs (PGlite itself would corrupt data under two writers).
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * The lock file appears whole or not at all: its content is written to a file of this process's own and
 * then hard-linked into place, which fails if a lock exists. (Creating it with `wx` and writing after
 * left a moment in which another process read it empty, took it for stale, removed it and took the
 * directory too: two processes on one store, seen once in CI when a server and a command started together.)
 */
function createLock(path: string, content: string): boolean {
  const own = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(own, content, { mode: 0o600 });
  try {
    linkSync(own, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    rmSync(own, { force: true });
  }
}

function readOwner(path: string): { pid?: number; holder?: string; token?: string } | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return {}; // not ours to read: garbage (no live pid), treated as stale
  }
}

function busy(dataDir: string, owner: { pid?: number; holder?: string }): DataDirBusyError {
  const who = owner.holder === 'server' ? 'an Assent server' : 'another assent command';
  return new DataDirBusyError(
    `The data directory ${dataDir} is in use by ${who} (pid ${owner.pid}). The embedded store allows one process at a time: ` +
      'stop it first, or run against PostgreSQL (DATABASE_URL), where the CLI and the server can run together.',
    owner.holder === 'server' ? 'server' : 'cli',
  );
}

export function acquireDataDirLock(dataDir: string, holder: 'server' | 'cli'): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'assent.lock');
  const token = randomBytes(12).toString('hex');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createLock(path, JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString(), token }))) {
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          // Only our own lock: never a file another process put there.
          if (readOwner(path)?.token === token) rmSync(path, { force: true });
        },
      };
    }
    const owner = readOwner(path);
    if (!owner) continue; // released meanwhile
    if (owner.pid && owner.pid !== process.pid && alive(owner.pid)) throw busy(dataDir, owner);
    // Stale (its process is gone): moved aside under a name of our own, so that of two processes that
    // both saw it stale only one removes it; if what was moved is a live lock taken since we read, it goes back.
    const aside = `${path}.stale.${process.pid}.${token}`;
    try {
      renameSync(path, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    const moved = readOwner(aside);
    if (moved?.pid && moved.pid !== process.pid && alive(moved.pid)) {
      try {
        linkSync(aside, path);
      } catch {
        // Yet another process took the directory in between: it holds it now.
      }
      rmSync(aside, { force: true });
      throw busy(dataDir, moved);
    }
    rmSync(aside, { force: true });
  }
  throw new DataDirBusyError(`Could not lock the data directory ${dataDir}`);
}
