#!/usr/bin/env node
// The `assent` command. In a checkout it builds dist/ first when src/ is newer, so `npm start` and
// `npx assent` always run the code you see.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = `${root}dist/.build-stamp`;

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

if (existsSync(`${root}src`) && existsSync(`${root}tsconfig.build.json`)) {
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  if (newestMtime(`${root}src`) > built) {
    process.stderr.write('assent: building dist/ (src/ changed)…\n');
    // tsc prints its errors on stdout: they go to stderr, so they are seen and --json output stays clean.
    try {
      execFileSync(process.execPath, [`${root}scripts/build.mjs`], { stdio: ['ignore', process.stderr, 'inherit'] });
    } catch {
      process.stderr.write('assent: the build failed (compiler errors above); dist/ is unchanged\n');
      process.exit(1);
    }
  }
}

const { main } = await import(pathToFileURL(`${root}dist/cli/main.js`).href);
process.exitCode = await main(process.argv.slice(2));
