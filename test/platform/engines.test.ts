// The Node version the README promises is one every installed package supports (issue 20 item 8):
// package.json's engines range, the README and the lock file agree, so `npm ci` on the oldest Node the
// README names prints no EBADENGINE warning. (.ci/run also fails on any EBADENGINE line from npm ci.)
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { expect, test } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; os?: string[] }>;
};
const oldest = semver.minVersion(pkg.engines.node)!;

test('package.json names the oldest Node, and the README says the same', () => {
  expect(oldest.version).toBe('20.19.0');
  expect(readFileSync(new URL('README.md', root), 'utf8')).toContain(`Node ${oldest.major}.${oldest.minor} or newer`);
  expect(process.version).toSatisfy((v: string) => semver.satisfies(v, pkg.engines.node));
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

test('the overrides that keep Node 20 hold: content-disposition 2 and cookie 1 (3 and 2 need Node 22)', () => {
  const version = (name: string) => Object.entries(lock.packages).filter(([p]) => p.endsWith(`node_modules/${name}`)).map(([, e]) => e.version);
  expect(version('content-disposition').every((v) => semver.major(v!) === 2)).toBe(true);
  expect(version('cookie').every((v) => semver.major(v!) === 1)).toBe(true);
});
