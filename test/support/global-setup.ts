// Builds dist/ (the server, for the tests that start the real `assent` command), web/dist/ (the
// dashboard, for the browser tests) and clients/typescript/dist/ (the client package) once before any suite runs, and only what changed: each build
// records the SHA-256 of its inputs (every file's path and content) in <dir>/.inputs-sha256, and a run
// whose inputs hash the same skips that build (35-110 s on a loaded 2-core machine; hashing takes
// well under a second). When a build is skipped, its .build-stamp is touched: bin/assent.mjs compares
// modification times, and a checkout that rewrote files with the same content would otherwise make
// every CLI child of the suite rebuild at once.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { inputsHash, ROOT as root } from './hash.js';
import { dropOldPostgresTemplates, pgliteTemplate, postgresTemplate } from './templates.js';

const SHARED = ['scripts/build.mjs', 'package-lock.json'];
const PARTS = {
  server: { flag: '--server', dir: 'dist', inputs: ['src', 'tsconfig.build.json', 'tsconfig.json', ...SHARED] },
  web: { flag: '--web', dir: 'web/dist', inputs: ['web', ...SHARED] },
  // The client package (@assent/client): test/client imports its dist/ as a consumer would.
  client: { flag: '--client', dir: 'clients/typescript/dist', inputs: ['clients/typescript/src', 'clients/typescript/tsconfig.json', 'clients/typescript/package.json', ...SHARED] },
} as const;

export default async function setup(): Promise<void> {
  for (const part of Object.values(PARTS)) {
    const record = `${root}${part.dir}/.inputs-sha256`;
    const hash = inputsHash(part.inputs);
    const built = existsSync(record) && existsSync(`${root}${part.dir}/.build-stamp`) ? readFileSync(record, 'utf8').trim() : null;
    if (built === hash && !process.env.ASSENT_TEST_REBUILD) {
      const now = new Date();
      utimesSync(`${root}${part.dir}/.build-stamp`, now, now);
      process.stderr.write(`global setup: ${part.dir}/ is up to date (inputs unchanged), not rebuilt\n`);
      continue;
    }
    execFileSync(process.execPath, [`${root}scripts/build.mjs`, part.flag], { stdio: 'inherit' });
    writeFileSync(record, hash + '\n');
  }
  // The migrated store templates every scratch store is copied from (test/support/templates.ts): made
  // here, before any worker starts, when the migrations changed; a worker would otherwise make them itself.
  await pgliteTemplate();
  if (process.env.TEST_DATABASE_URL) {
    await postgresTemplate(process.env.TEST_DATABASE_URL);
    await dropOldPostgresTemplates(process.env.TEST_DATABASE_URL);
  }
}
