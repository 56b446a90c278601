#!/usr/bin/env node
// The `assent` command. In a checkout it first builds what is older than its sources: dist/ (the
// server, from src/) and web/dist/ (the dashboard, from web/), so `npm start` and `npx assent` always
// run the code you see.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

// The Node this package needs (package.json engines, ">=22.13.0": Node 22 LTS or newer), checked before
// anything is built or run, so an older Node gets one line saying what to install rather than an error
// from deep inside a dependency.
{
  const range = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).engines.node;
  const needed = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim())?.slice(1).map(Number);
  const found = process.versions.node.split('.').map(Number);
  const older = needed && (found[0] - needed[0] || found[1] - needed[1] || found[2] - needed[2]) < 0;
  if (older) {
    process.stderr.write(
      `assent: Node.js ${needed.join('.')} or newer is needed (Node 22 LTS or newer; package.json engines "${range}"), ` +
        `but this is Node.js ${process.versions.node} (${process.execPath}). Install Node 22 or newer (nvm install reads .nvmrc) and run assent with it.\n`,
    );
    process.exit(1);
  }
}

function newestMtime(path) {
  if (!statSync(path).isDirectory()) return statSync(path).mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(`${path}/${entry.name}`));
  }
  return newest;
}

/** Is the build stamped in `stamp` older than any of `sources`? */
function stale(stamp, sources) {
  const built = existsSync(`${root}${stamp}`) ? statSync(`${root}${stamp}`).mtimeMs : 0;
  return sources.some((s) => existsSync(`${root}${s}`) && newestMtime(`${root}${s}`) > built);
}

function build(part, what) {
  process.stderr.write(`assent: building ${what}…\n`);
  // Compiler errors go to stderr, so they are seen and --json output stays clean.
  try {
    execFileSync(process.execPath, [`${root}scripts/build.mjs`, part], { stdio: ['ignore', process.stderr, 'inherit'] });
    return true;
  } catch {
    return false;
  }
}

if (existsSync(`${root}tsconfig.build.json`) && stale('dist/.build-stamp', ['src'])) {
  if (!build('--server', 'dist/ (src/ changed)')) {
    process.stderr.write('assent: the build failed (compiler errors above); dist/ is unchanged\n');
    process.exit(1);
  }
}

// The dashboard needs Vite to build; an install without dev dependencies serves whatever web/dist/ holds.
if (existsSync(`${root}web/index.html`) && stale('web/dist/.build-stamp', ['web'])) {
  let vite = true;
  try {
    createRequire(import.meta.url).resolve('vite/package.json');
  } catch {
    vite = false;
  }
  if (!vite) process.stderr.write('assent: web/ changed but Vite is not installed (npm ci without --omit=dev builds the dashboard)\n');
  else if (!build('--web', 'the dashboard, web/dist/ (web/ changed)')) process.stderr.write('assent: the dashboard build failed (errors above); web/dist/ is unchanged\n');
}

const { main } = await import(pathToFileURL(`${root}dist/cli/main.js`).href);
process.exitCode = await main(process.argv.slice(2));
