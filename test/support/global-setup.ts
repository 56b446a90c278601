// Builds dist/ (the server, for the tests that start the real `assent` command) and web/dist/ (the
// dashboard, for the browser tests) once before any suite runs.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync(process.execPath, [`${root}scripts/build.mjs`], { stdio: 'inherit' });
}
