// The SHA-256 of a set of inputs (every file's path and content, in a stable order): what the global
// set-up compares to decide whether a build is up to date, and what names the migrated store templates.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function files(path: string): string[] {
  if (!existsSync(`${ROOT}${path}`)) return [];
  if (!statSync(`${ROOT}${path}`).isDirectory()) return [path];
  return readdirSync(`${ROOT}${path}`, { withFileTypes: true })
    .filter((e) => e.name !== 'dist' && e.name !== 'node_modules' && !e.name.startsWith('dist.'))
    .flatMap((e) => files(`${path}/${e.name}`))
    .sort();
}

/** Paths relative to the repository root; a directory stands for every file under it (but dist/ and node_modules/). */
export function inputsHash(inputs: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(files)) hash.update(file).update('\0').update(readFileSync(`${ROOT}${file}`)).update('\0');
  return hash.digest('hex');
}
