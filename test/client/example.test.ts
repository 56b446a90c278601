// The README's client script (clients/typescript/examples/ticket-webhook.mjs) run as a user runs it:
// plain Node, the built package (imported by its name), a real `assent serve` on this store, a key
// made by the CLI. It must file a ticket, see its retry replayed, and receive the signed webhook.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { cliJson, createCliStore, killServers, ROOT, startServer, uniqueSlug, type CliStore } from '../cli/child.js';

vi.setConfig({ testTimeout: 120_000 });

let store: CliStore;
let key: string;

beforeAll(async () => {
  store = await createCliStore();
  // Before any server holds the embedded store's data directory.
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  key = (await cliJson<{ key: string }>(['key', 'create', slug, '--scopes', 'admin'], store.env)).key;
}, 180_000);
afterAll(async () => {
  await killServers();
  await store?.drop();
});

function run(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('the example files a ticket, its retry is replayed, and its webhook arrives signed', async () => {
  const server = await startServer({ ...store.env, WEBHOOK_ALLOW_PRIVATE: '1' }, 60_000);
  const result = await run(join(ROOT, 'clients/typescript/examples/ticket-webhook.mjs'), {
    ASSENT_URL: `http://127.0.0.1:${server.port}`,
    ASSENT_API_KEY: key,
  });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split('\n');
  const ticket = /^filed (GRV-[A-Z0-9]{8}) 201$/.exec(lines[0] ?? '')?.[1];
  expect(ticket, result.stdout).toBeDefined();
  expect(lines.slice(1)).toEqual([`retried ${ticket} replayed: true same ticket: true`, `webhook grievance.created ${ticket} verified`]);
  // One ticket, one delivery, and the endpoint removed at the end.
  const tickets = await fetch(`http://127.0.0.1:${server.port}/grievance/user/user-42`, { headers: { 'x-api-key': key } });
  expect((await tickets.json()).map((g: { ticket_id: string }) => g.ticket_id)).toEqual([ticket]);
  const hooks = await fetch(`http://127.0.0.1:${server.port}/api/v1/webhooks`, { headers: { 'x-api-key': key } });
  expect((await hooks.json()).data).toEqual([]);
  await server.stop();
});

test("the README's copy of the script is the file", () => {
  const script = readFileSync(join(ROOT, 'clients/typescript/examples/ticket-webhook.mjs'), 'utf8');
  expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('```js\n' + script + '```\n');
});
