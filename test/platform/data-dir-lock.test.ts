// The embedded store's data-directory lock (src/platform/db/data-dir-lock.ts) between real processes:
// one holder at a time however many start together, a stale lock (its process gone) taken over by one
// of them only, and a release that never removes another process's lock.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { acquireDataDirLock, DataDirBusyError, dataDirHolder } from '../../src/platform/db/data-dir-lock.js';

const CONTENDER = fileURLToPath(new URL('./fixtures/lock-race.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function scratch(): { base: string; dataDir: string } {
  const base = mkdtempSync(join(tmpdir(), 'assent-lock-'));
  dirs.push(base);
  return { base, dataDir: join(base, 'data') };
}

function contend(dataDir: string, startAt: number, rounds: number, holder: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CONTENDER, dataDir, String(startAt), String(rounds), holder], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

// The lock is the embedded store's; it touches no database, so it runs in the pglite project only.
describe.skipIf(process.env.ASSENT_TEST_STORE === 'postgres')('the data directory lock between processes', () => {
  test('six processes taking it 40 times each at once: never two holders, every round held', async () => {
    const { base, dataDir } = scratch();
    // A dead process's lock to begin with, so the contenders also race to take over a stale one.
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'assent.lock'), JSON.stringify({ pid: 4_194_305, holder: 'server' }));
    const startAt = Date.now() + 4_000; // after every contender has loaded
    const codes = await Promise.all(Array.from({ length: 6 }, (_, i) => contend(dataDir, startAt, 40, i % 2 ? 'server' : 'cli')));
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    const lines = readFileSync(join(base, 'race.log'), 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('OVERLAP'))).toEqual([]);
    expect(lines).toHaveLength(240);
    expect(existsSync(join(dataDir, 'assent.lock'))).toBe(false);
  }, 60_000);

  test('a stale lock (its process gone) is taken over; a live one is refused naming its holder; release leaves another lock alone', () => {
    const { dataDir } = scratch();
    const first = acquireDataDirLock(dataDir, 'server');
    expect(dataDirHolder(dataDir)).toEqual({ pid: process.pid, holder: 'server' });
    first.release();
    expect(dataDirHolder(dataDir)).toBeNull();

    // A lock naming a process that no longer exists (pid 2^22 + 1 is above Linux's pid_max).
    writeFileSync(join(dataDir, 'assent.lock'), JSON.stringify({ pid: 4_194_305, holder: 'server' }));
    expect(dataDirHolder(dataDir)).toBeNull();
    const taken = acquireDataDirLock(dataDir, 'cli');
    expect(dataDirHolder(dataDir)).toEqual({ pid: process.pid, holder: 'cli' });

    // Our lock replaced behind our back by a live process's (pid 1 is always alive): release keeps it.
    writeFileSync(join(dataDir, 'assent.lock'), JSON.stringify({ pid: 1, holder: 'server', token: 'other' }));
    taken.release();
    expect(dataDirHolder(dataDir)).toEqual({ pid: 1, holder: 'server' });
    let refusal: unknown;
    try {
      acquireDataDirLock(dataDir, 'cli');
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(DataDirBusyError);
    expect((refusal as DataDirBusyError).holder).toBe('server');
    expect((refusal as Error).message).toMatch(/in use by an Assent server \(pid 1\)/);
    // No leftovers beside the lock.
    expect(readFileSync(join(dataDir, 'assent.lock'), 'utf8')).toContain('"pid":1');
  });
});
