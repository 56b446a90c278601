// Issue 20 item 3: the README's walk-through, run as a script (scripts/readme-check.mjs: the blocks
// marked <!-- readme-check -->, pasted in order into bash with set -euo pipefail) from the checkout on a
// fresh data directory: once with no server running (step 1 starts one with npm start), once with a
// server already running (as when the first block's `npm start` runs in another terminal; the CLI
// commands then go through its control socket). Either way it must finish with exit 0, print what the
// README says it prints, and leave no server behind (the last step, `npx assent stop`).
// The walk-through is the embedded store's (./data): this runs on the pglite project only.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
// @ts-expect-error: a plain ES module without types
import { readmeScript } from '../../scripts/readme-check.mjs';
import { ROOT, childEnv, freePort, killServers, startServer, portOpen } from './child.js';

vi.setConfig({ testTimeout: 300_000 });
const dirs: string[] = [];
afterEach(killServers);
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function runReadme(env: Record<string, string>, port: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/readme-check.mjs', '--port', String(port)], {
      cwd: ROOT,
      env: childEnv({ ...env, PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the README script took over 280 s:\n${out}`));
    }, 280_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** What the README says the walk-through prints, step by step. */
function expectWalkthrough(out: string): void {
  expect(out).toMatch(/Created organization acme \([0-9a-f-]{36}\)/);
  expect(out).toMatch(/ask_live_[0-9A-Za-z]{32} ask_live_[0-9A-Za-z]{32}/);
  expect(out).toContain('Created user privacy@acme.example');
  expect(out).toMatch(/"ticket_id":"GRV-[A-Z0-9]{8}"/); // 3
  expect(out).toContain('"status":"in_progress"'); // 5
  expect(out).toContain('"status":"verified"'); // 7
  expect(out).toContain('"code":"validation_failed"'); // 8
  expect(out).toContain('"consent_action":"partial_consent"'); // 12
  expect(out).toMatch(/[}\n]204\n/); // 13, the logout (after the history JSON, which ends without a newline)
  expect(out).toMatch(/\n303\n/); // the Rights Center's withdrawal
  expect(out).toContain('<span class="state">Withdrawn</span>');
  expect(out).toContain('"consent_action":"revoked"');
  expect(out).toMatch(/acme\.localhost:\d+: first checkpoint kept, \d+ \(root [0-9a-f]{12}…, acme, key \S+\)/); // the witness
  expect(out).toMatch(/acme\.localhost:\d+: checkpoint \d+ \(root [0-9a-f]{12}…\) extends kept \d+: consistency proof of \d+ hashes verified/);
  expect(out).toMatch(/Stopped the Assent server \(pid \d+\)/); // 14
  expect(out).not.toMatch(/Internal Server Error|"code":"internal|unexpected error|TypeError/);
}

test('the marked blocks make one script: set -euo pipefail, the walk-through in order, the stop last, the port replaced', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const script: string = readmeScript(readme, 4321);
  expect(script.startsWith('set -euo pipefail\n')).toBe(true);
  expect(script).not.toContain('localhost:3000');
  const order = ['# 1. A server', '# 2. An organization', '# 9. An asset', '# 13. Log in', '# 1. A token for user-42', '# 14. Stop the server'].map((s) => script.indexOf(s));
  expect(order.every((i) => i >= 0)).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
  expect(() => readmeScript('<!-- readme-check -->\ntext\n')).toThrow(/must stand right before/);
});

// Issue 30 item 6: JSON answers carry no final newline, so a pasted curl that prints one leaves the
// shell's prompt glued to it. Every curl in the README whose answer reaches the terminal (not captured
// in $(...), not piped, not written to a file) ends it with -w '\n'.
test("every curl in the README that prints its answer to the terminal ends it with a newline (-w '\\n')", () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const offenders: string[] = [];
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) inBlock = !inBlock;
    if (!inBlock || !/^curl\s/.test(lines[i]!)) continue;
    let command = lines[i]!;
    for (let j = i; lines[j]!.endsWith('\\'); j++) command += ' ' + lines[j + 1]!;
    const bare = command.replace(/'[^']*'|"[^"]*"/g, '');
    const printed = !/(^|\s)-o\s|\||>/.test(bare);
    if (printed && !/\s-w\s/.test(bare)) offenders.push(`README.md line ${i + 1}: ${lines[i]}`);
  }
  expect(offenders).toEqual([]);
});

describe.runIf(storeKind() === 'pglite')('the README walk-through as a script', () => {
  test('with no server running: it starts one, walks through, and stops it (port and data directory freed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-readme-'));
    dirs.push(dir);
    const port = await freePort();
    const { code, out } = await runReadme({ DATA_DIR: join(dir, 'data') }, port);
    expect(code, out).toBe(0);
    expectWalkthrough(out);
    expect(await portOpen(port)).toBe(false);
    expect(existsSync(join(dir, 'data', 'assent.lock'))).toBe(false);
  });

  test('with a server already running on the data directory: the CLI steps go through it, and the last step stops it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-readme-'));
    dirs.push(dir);
    const env = { DATA_DIR: join(dir, 'data') };
    const server = await startServer(env);
    const { code, out } = await runReadme(env, server.port);
    expect(code, out).toBe(0);
    expectWalkthrough(out);
    expect(out).toContain(`Stopped the Assent server (pid ${server.child.pid})`);
    await vi.waitFor(() => expect(server.child.exitCode).toBe(0), { timeout: 15_000 });
    expect(server.logs.map((l) => l.msg)).toContain('ran a command for the assent CLI');
  });
});
