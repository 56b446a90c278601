// Compiles src/ to dist/ and copies the SQL migrations beside the compiled code. Builds into a
// private directory and swaps it in, so a process starting meanwhile never sees half a dist/.
import { cpSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const staging = `${root}.dist-${process.pid}`;

try {
  execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`, '--outDir', staging], { stdio: 'inherit' });
  cpSync(`${root}src/db/migrations`, `${staging}/db/migrations`, { recursive: true });
  writeFileSync(`${staging}/.build-stamp`, new Date().toISOString() + '\n');
  rmSync(`${root}dist`, { recursive: true, force: true });
  renameSync(staging, `${root}dist`);
} finally {
  rmSync(staging, { recursive: true, force: true });
}
