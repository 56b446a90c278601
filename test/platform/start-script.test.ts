// The server's memory settings (docs/operations.md, "Embedded store"): `npm start`'s Node flags must be
// flags this Node accepts (a typo would stop `npm start` with "bad option"), also in NODE_OPTIONS as the
// documentation offers; the heap growth serve() sets must be a flag V8 takes at run time; and the
// documentation must name what the code uses.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { EMBEDDED_HEAP_GROWING_PERCENT, heapFlagFor } from '../../src/platform/heap.js';

const root = new URL('../../', import.meta.url);
const start = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
const words = start.split(/\s+/);
const flags = words.slice(2, words.indexOf('bin/assent.mjs'));

test('npm start runs the server through bin/assent.mjs with Node flags only before it, exec\'d so that npm\'s signals reach it', () => {
  // npm runs the script with sh -c; without exec the shell sits between npm and the server, and the
  // SIGTERM npm passes on stops the shell, not the server (test/cli/shutdown.test.ts runs it).
  expect(words.slice(0, 2)).toEqual(['exec', 'node']);
  expect(words.slice(-2)).toEqual(['bin/assent.mjs', 'serve']);
  expect(flags).toEqual(['--v8-pool-size=1']);
});

test('this Node accepts the flags, on the command line and in NODE_OPTIONS (as the docs offer)', () => {
  const script = "process.stdout.write(JSON.stringify(process.execArgv.filter((a) => a.startsWith('--')).concat((process.env.NODE_OPTIONS || '').split(' ').filter(Boolean))))";
  const clean = { ...process.env };
  delete clean.NODE_OPTIONS;
  expect(JSON.parse(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', env: clean }))).toEqual(flags);
  expect(JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...clean, NODE_OPTIONS: flags.join(' ') } }))).toEqual(flags);
});

test('serve() holds the old generation growth at 50% on the embedded store only, and V8 takes the flag at run time', () => {
  expect(heapFlagFor({ databaseUrl: null })).toBe(`--heap-growing-percent=${EMBEDDED_HEAP_GROWING_PERCENT}`);
  expect(EMBEDDED_HEAP_GROWING_PERCENT).toBe(50);
  expect(heapFlagFor({ databaseUrl: 'postgres://u@h/db' })).toBeNull();
  // A flag V8 does not know is ignored with a warning on stderr: this one must be taken silently.
  const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(heapFlagFor({ databaseUrl: null }))})`], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  expect(r.stderr).toBe('');
  const unknown = spawnSync(process.execPath, ['-e', "require('node:v8').setFlagsFromString('--heap-growing-percentage=50')"], { encoding: 'utf8' });
  expect(unknown.stderr).toMatch(/unrecognized flag|Error/i);
});

test('docs/operations.md names the flags the start script and serve() use', () => {
  const docs = readFileSync(new URL('docs/operations.md', root), 'utf8');
  expect(docs).toContain(`\`npm start\` runs Node with \`${flags.join(' ')}\``);
  expect(docs).toContain(`NODE_OPTIONS="${flags.join(' ')}"`);
  expect(docs).toContain(`\`${heapFlagFor({ databaseUrl: null })}\``);
});
