// The Node version the README promises is one every installed package supports (issue 20 item 8):
// package.json's engines range, the README and the lock file agree, so `npm ci` on the oldest Node the
// README names prints no EBADENGINE warning. (.ci/run also fails on any EBADENGINE line from npm ci.)
// Issue 30 item 9: Node 22 LTS or newer (Node 20 is past its end of life): engines, .nvmrc, README, and
// `assent` itself refuses an older Node in one line, tried with a real older node when the machine has one.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import semver from 'semver';
import { expect, test } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; os?: string[] }>;
};
const oldest = semver.minVersion(pkg.engines.node)!;

test('package.json names the oldest Node (22.13, Node 22 LTS), and the README, .nvmrc and the lock file say the same', () => {
  expect(pkg.engines.node).toBe('>=22.13.0');
  expect(oldest.version).toBe('22.13.0');
  expect(readFileSync(new URL('README.md', root), 'utf8')).toContain(`Node ${oldest.major} LTS or newer: Node ${oldest.major}.${oldest.minor} or newer`);
  expect(readFileSync(new URL('.nvmrc', root), 'utf8')).toBe(`${oldest.major}\n`);
  expect((lock.packages[''] as { engines?: unknown }).engines).toEqual(pkg.engines);
  expect(process.version).toSatisfy((v: string) => semver.satisfies(v, pkg.engines.node));
});

/** A node binary older than package.json allows (Debian's /usr/bin/node is 20 on the CI machine), or null. */
function olderNode(): { path: string; version: string } | null {
  const candidates = ['/usr/bin/node', '/bin/node', '/usr/local/bin/node', ...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'node'))];
  for (const path of new Set(candidates)) {
    if (!existsSync(path)) continue;
    const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const version = semver.valid(r.stdout?.trim());
    if (version && semver.lt(version, oldest)) return { path, version };
  }
  return null;
}

const older = olderNode();
test.skipIf(older === null)(`assent on an older Node (${older?.path} ${older?.version}) exits 1 at once with one line naming the version found and the one needed, building nothing`, () => {
  const { path, version } = older!;
  for (const args of [['--version'], ['serve']]) {
    const r = spawnSync(path, ['bin/assent.mjs', ...args], { cwd: new URL('.', root).pathname, encoding: 'utf8', env: { ...process.env, DATA_DIR: '/nonexistent/assent-old-node' }, timeout: 20_000 });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr:
        `assent: Node.js 22.13.0 or newer is needed (Node 22 LTS or newer; package.json engines ">=22.13.0"), but this is Node.js ${version} (${path}). ` +
        'Install Node 22 or newer (nvm install reads .nvmrc) and run assent with it.\n',
    });
  }
  expect(existsSync('/nonexistent/assent-old-node')).toBe(false);
});

test('assent on this Node (the one package.json allows) runs: --version exits 0', () => {
  const r = spawnSync(process.execPath, ['bin/assent.mjs', '--version'], { cwd: new URL('.', root).pathname, encoding: 'utf8', timeout: 60_000 });
  expect([r.status, r.stdout]).toEqual([0, `assent ${(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string }).version}\n`]);
});

test('every package in the lock file supports the oldest Node package.json allows, and Node 22.13 and 24', () => {
  const refused: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = !entry.engines || Array.isArray(entry.engines) ? undefined : entry.engines.node;
    if (!path || !range) continue;
    for (const node of [oldest.version, '22.13.0', '24.0.0']) {
      if (!semver.satisfies(node, range)) refused.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${range} (not ${node})`);
    }
  }
  expect(refused).toEqual([]);
});

test('the overrides hold: content-disposition 2 and cookie 1 (kept from the Node 20 days; see docs/architecture.md)', () => {
  const version = (name: string) => Object.entries(lock.packages).filter(([p]) => p.endsWith(`node_modules/${name}`)).map(([, e]) => e.version);
  expect(version('content-disposition').every((v) => semver.major(v!) === 2)).toBe(true);
  expect(version('cookie').every((v) => semver.major(v!) === 1)).toBe(true);
});
