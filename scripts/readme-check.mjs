#!/usr/bin/env node
// `node scripts/readme-check.mjs [--print] [--port N]`: runs the README's walk-through as a script.
// It takes the fenced bash blocks that the line before marks with `<!-- readme-check -->`, in the
// README's order, then those marked `<!-- readme-check: last -->` (the stop), joins them into one bash
// script with `set -euo pipefail`, and runs it from the checkout, as a reader pasting them would.
// Only marked blocks run: a section that adds a block runs here once it is marked.
// Changed for the run, and nothing else: the port (3000 -> --port, PORT) so that it cannot meet a server
// of yours. DATA_DIR comes from the environment (default: a fresh temporary directory, removed after).
// --print prints the script instead of running it. Exit: the script's.
// test/cli/readme.test.ts runs it against a fresh data directory, with a server running and without.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The marked bash blocks of a Markdown text, in run order. */
export function readmeScript(markdown, port = 3000) {
  const lines = markdown.split('\n');
  const blocks = { main: [], last: [] };
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*readme-check(:\s*last)?\s*-->\s*$/.exec(lines[i]);
    if (!marker) continue;
    if (!/^```(bash|sh)\s*$/.test(lines[i + 1] ?? '')) throw new Error(`README line ${i + 1}: a readme-check marker must stand right before a \`\`\`bash block`);
    const end = lines.findIndex((l, j) => j > i + 1 && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`README line ${i + 2}: the block never closes`);
    (marker[1] ? blocks.last : blocks.main).push({ line: i + 3, body: lines.slice(i + 2, end).join('\n') });
    i = end;
  }
  if (blocks.main.length === 0) throw new Error('the README has no block marked <!-- readme-check -->');
  const parts = [...blocks.main, ...blocks.last].map((b) => `# --- README.md line ${b.line}\n${b.body}`);
  return ['set -euo pipefail', ...parts, ''].join('\n\n').replaceAll('localhost:3000', `localhost:${port}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { print: { type: 'boolean' }, port: { type: 'string' } } });
  const port = Number(values.port ?? process.env.PORT ?? 3000);
  const script = readmeScript(readFileSync(join(root, 'README.md'), 'utf8'), port);
  if (values.print) {
    process.stdout.write(script);
    process.exit(0);
  }
  const scratch = process.env.DATA_DIR ? null : mkdtempSync(join(tmpdir(), 'assent-readme-'));
  const env = { ...process.env, PORT: String(port), DATA_DIR: process.env.DATA_DIR ?? join(scratch, 'data') };
  try {
    const r = spawnSync('bash', ['-c', script], { cwd: root, env, stdio: 'inherit' });
    process.exitCode = r.status ?? 1;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
