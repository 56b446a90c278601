// `npm run build`: the server (src/ -> dist/, with the SQL migrations) and the dashboard (web/ ->
// web/dist/, pre-compressed), and the client package (clients/typescript/src -> its dist/, what
// `npm pack` there would publish). Each is built into a private directory and swapped in, so a process
// starting meanwhile never sees half a build. `--server`, `--web` or `--client` builds only that part.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const both = !args.includes('--server') && !args.includes('--web') && !args.includes('--client');

/** Runs build(staging), stamps it with the start time, and swaps it in at target. */
async function swapIn(target, build) {
  // The stamp carries the time the build started: a source edited meanwhile is newer, so
  // bin/assent.mjs builds again instead of running code that does not have the edit.
  const started = new Date();
  const staging = `${target}.staging-${process.pid}`;
  const retired = `${target}.old-${process.pid}`;
  try {
    await build(staging);
    writeFileSync(`${staging}/.build-stamp`, started.toISOString() + '\n');
    utimesSync(`${staging}/.build-stamp`, started, started);
    // Two renames, not a recursive delete then a rename: a running process reads files after it has
    // started, and must not find the directory gone while the old one is deleted.
    try {
      renameSync(target, retired);
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
    }
    renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(retired, { recursive: true, force: true });
  }
}

function buildServer() {
  const tsc = require.resolve('typescript/bin/tsc');
  return swapIn(`${root}dist`, (out) => {
    execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`, '--outDir', out], { stdio: 'inherit' });
    cpSync(`${root}src/db/migrations`, `${out}/db/migrations`, { recursive: true });
  });
}

/** The client package, as its own `npm run build` makes it (tsc, and the generated types beside). */
function buildClient() {
  const tsc = require.resolve('typescript/bin/tsc');
  const pkg = `${root}clients/typescript`;
  return swapIn(`${pkg}/dist`, (out) => {
    execFileSync(process.execPath, [tsc, '-p', `${pkg}/tsconfig.json`, '--outDir', out], { stdio: 'inherit' });
    cpSync(`${pkg}/src/openapi.d.ts`, `${out}/openapi.d.ts`);
  });
}

/** Brotli and gzip beside every text file worth compressing; the server picks one by Accept-Encoding. */
function precompress(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.name.startsWith('.')) continue; // .vite/manifest.json is never served
    if (entry.isDirectory()) precompress(path);
    else if (/\.(js|css|html|svg|json)$/.test(entry.name) && statSync(path).size > 1024) {
      const data = readFileSync(path);
      writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
    }
  }
}

async function buildWeb() {
  // A production bundle whatever the caller's NODE_ENV (vitest sets "test", which would give React's
  // development build, twice the size).
  process.env.NODE_ENV = 'production';
  // Loaded here: an install without dev dependencies can still build the server.
  const { build } = await import('vite');
  return swapIn(`${root}web/dist`, async (out) => {
    await build({ configFile: `${root}web/vite.config.ts`, logLevel: 'warn', build: { outDir: out } });
    precompress(out);
  });
}

try {
  if (both || args.includes('--server')) await buildServer();
  if (both || args.includes('--web')) await buildWeb();
  if (both || args.includes('--client')) await buildClient();
} catch (e) {
  // tsc has printed its errors; a stack trace of the failed child would only bury them. Vite's errors
  // carry what they need in the message.
  if (typeof e?.status === 'number') process.exitCode = e.status;
  else {
    process.stderr.write(`${e?.message ?? e}\n`);
    process.exitCode = 1;
  }
}
