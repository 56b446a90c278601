// Compiles src/ to dist/ and copies the SQL migrations beside the compiled code.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(`${root}dist`, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { stdio: 'inherit' });
mkdirSync(`${root}dist/db/migrations`, { recursive: true });
cpSync(`${root}src/db/migrations`, `${root}dist/db/migrations`, { recursive: true });
writeFileSync(`${root}dist/.build-stamp`, new Date().toISOString() + '\n');
