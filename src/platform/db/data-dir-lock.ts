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

/**
 * What /proc says of a process (Linux): its state letter and its start time (clock ticks after boot),
 * or null where there is no /proc or the process is gone. The command name may hold spaces and
 * parentheses, so the fields are read after its last ')'.
 */
function procStat(pid: number): { state: string; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/** This process's start time as /proc gives it (null off Linux): written into the lock beside the pid. */
const OWN_START = procStat(process.pid)?.start ?? null;

/**
 * Whether the lock's process still runs. Signal 0 alone is not enough: a process killed with SIGKILL
 * stays a zombie (state Z) until its parent reaps it, and signal 0 still finds it, so a restart right
 * after a crash was refused while the parent (a shell, a process manager) had not reaped it yet
 * (issue 34: 6 of 7 kills). A zombie or dead process (Z, X) holds nothing; nor does a process whose
 * start time differs from the lock's (its pid was reused).
 */
function alive(pid: number, start?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (!stat) return true; // no /proc (not Linux), or it exited this instant: signal 0 decided
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  return !start || stat.start === start;
}

/** The live process holding dataDir's lock, or null when none does (no lock, or its process is gone). */
export function dataDirHolder(dataDir: string): { pid: number; holder: 'server' | 'cli' } | null {
  try {
    const owner = JSON.parse(readFileSync(join(dataDir, 'assent.lock'), 'utf8')) as { pid?: number; holder?: 'server' | 'cli'; start?: string };
    return owner.pid && alive(owner.pid, owner.start) ? { pid: owner.pid, holder: owner.holder ?? 'cli' } : null;
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

function readOwner(path: string): { pid?: number; holder?: string; token?: string; start?: string } | null {
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
    const lock = { pid: process.pid, holder, since: new Date().toISOString(), token, ...(OWN_START ? { start: OWN_START } : {}) };
    if (createLock(path, JSON.stringify(lock))) {
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
    if (owner.pid && owner.pid !== process.pid && alive(owner.pid, owner.start)) throw busy(dataDir, owner);
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
    if (moved?.pid && moved.pid !== process.pid && alive(moved.pid, moved.start)) {
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
