// Compiles src/ to dist/ and copies the SQL migrations beside the compiled code. Builds into a
// private directory and swaps it in, so a process starting meanwhile never sees half a dist/.
import { cpSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const staging = `${root}.dist-${process.pid}`;
const retired = `${root}.dist-old-${process.pid}`;

// The stamp carries the time the build started: a source edited while tsc runs is newer, so
// bin/assent.mjs builds again instead of running code that does not have the edit.
const started = new Date();

try {
  execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`, '--outDir', staging], { stdio: 'inherit' });
  cpSync(`${root}src/db/migrations`, `${staging}/db/migrations`, { recursive: true });
  writeFileSync(`${staging}/.build-stamp`, started.toISOString() + '\n');
  utimesSync(`${staging}/.build-stamp`, started, started);
  // Two renames, not a recursive delete then a rename: a running process reads dist/db/migrations
  // after it has loaded its modules, and must not find dist/ gone while the old one is deleted.
  try {
    renameSync(`${root}dist`, retired);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  renameSync(staging, `${root}dist`);
} catch (e) {
  // tsc has printed its errors; a stack trace of the failed child would only bury them.
  if (typeof e?.status !== 'number') throw e;
  process.exitCode = e.status;
} finally {
  rmSync(staging, { recursive: true, force: true });
  rmSync(retired, { recursive: true, force: true });
}
