// The documentation stands alone (issue 20 item 9): the licence package.json names is in the checkout,
// every link and every file path the README and docs/ cite exists, and nothing refers the reader to
// files outside the repository (the project's private specification and design notes).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const docs = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

test('LICENSE is the Apache License 2.0 that package.json declares', () => {
  expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('Apache-2.0');
  const license = read('LICENSE');
  expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
  expect(license).toContain('END OF TERMS AND CONDITIONS');
  expect(license).toContain('9. Accepting Warranty or Additional Liability.');
});

test.each(docs)('%s cites no file a reader of the repository does not have', (path) => {
  expect(read(path)).not.toMatch(/contract\.md|DESIGN\.md|original-spec|\.\.\/shared\/|contract §/i);
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const [, heading] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'));
  }
  return out;
}

test.each(docs)('%s: every relative link and every cited repository path exists', (path) => {
  const text = read(path);
  const base = new URL(path, root);
  const missing: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
    const [file, anchor] = target!.split('#');
    const url = new URL(file!, base);
    if (!existsSync(url)) missing.push(target!);
    else if (anchor && !anchors(readFileSync(url, 'utf8')).has(anchor)) missing.push(target!);
  }
  // Paths in backticks such as `src/platform/db/open.ts` or `docs/operations.md` (not patterns).
  for (const [, cited] of text.matchAll(/`((?:src|test|docs|scripts|bench|web|bin|clients|\.ci)\/[\w./-]+)`/g)) {
    if (/[*<>…]/.test(cited!) || cited!.endsWith('.tmp')) continue;
    if (!existsSync(new URL(cited!, root))) missing.push(cited!);
  }
  expect(missing).toEqual([]);
});
