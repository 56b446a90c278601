// `assent witness` (issue 32 item 2), the real command as a child process, against a real Assent over
// real HTTP on each store: the app listening on 127.0.0.1 with TSA_URL pointing at OpenSSL's TSA
// (test/support/openssl-tsa.ts), behind a small pass-through proxy that the organization controls.
// A first run keeps the checkpoint; entries are added and sealed; a second run proves consistency.
// Then the proxy answers, for the size kept, a checkpoint with another root, signed with the
// organization's real key (the organization showing two histories): refused with exit 1, naming both.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { startOpensslTsa, type OpensslTsa } from '../support/openssl-tsa.js';
import { runCli } from './child.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { CHECKPOINT_FORMAT, signCheckpoint } from '../../src/features/transparency/index.js';

vi.setConfig({ testTimeout: 120_000 });

let t: TestApp;
let tsa: OpensslTsa;
let proxy: http.Server;
let dir: string;
let org: TestOrg & { key: string };
let url: string;
/** When set, the proxy answers this for /.well-known/assent/checkpoints/latest instead of the server. */
let forgedLatest: Record<string, unknown> | null = null;

beforeAll(async () => {
  tsa = await startOpensslTsa();
  t = await buildTestApp({ env: { TSA_URL: tsa.url } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const appPort = (t.app.server.address() as { port: number }).port;
  proxy = http.createServer((req, res) => {
    if (forgedLatest && req.url === '/.well-known/assent/checkpoints/latest') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(forgedLatest));
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port: appPort, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  org = await t.tenant();
  url = `http://${org.slug}.localhost:${(proxy.address() as { port: number }).port}`;
  dir = mkdtempSync(join(tmpdir(), 'assent-witness-cli-'));
}, 120_000);

afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
  await t?.close();
  await tsa?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function addEntries(n: number) {
  for (let i = 0; i < n; i++) {
    const res = await t.call({ method: 'POST', url: '/grievance', org, key: org.key, body: { client_user_id: `user-${i}`, subject: 'Copy of my data', description: 'Please send a copy.', category: 'data_access' } });
    expect(res.statusCode, res.body).toBe(201);
  }
  const sealed = await t.app.sequencer.sealNow(org.id);
  expect(sealed.checkpoint, 'a checkpoint was signed').not.toBeNull();
}

const witness = (...extra: string[]) => runCli(['witness', url, '--dir', dir, ...extra], {});

test('assent witness keeps, proves consistency, and refuses a fork with exit 1', async () => {
  await addEntries(2);
  const first = await witness('--tsa-cert', tsa.caCertFile);
  expect(first.stderr).toBe('');
  expect(first.code, first.stdout).toBe(0);
  const host = new URL(url).host;
  expect(first.stdout).toMatch(new RegExp(`^${host.replace('.', '\\.')}: first checkpoint kept, \\d+ \\(root [0-9a-f]{12}…, ${org.slug}, key \\S+\\); TSA time \\S+; in ${dir}/${host.replace(':', '_')}\\n$`));

  await addEntries(3);
  const second = await runCli(['witness', url, '--dir', dir, '--tsa-cert', tsa.tsaCertFile, '--json'], {});
  expect(second.code, second.stdout + second.stderr).toBe(0);
  const [r] = JSON.parse(second.stdout) as [{ status: string; previous: { tree_size: number; root_hash: string }; checkpoint: { tree_size: number; root_hash: string }; proof_length: number; tsa: { checked: boolean }; kept: number }];
  expect(r).toMatchObject({ status: 'consistent', tsa: { checked: true }, kept: 2 });
  expect(r.checkpoint.tree_size).toBeGreaterThan(r.previous.tree_size);
  expect(r.proof_length).toBeGreaterThan(0);
  // What was kept is what the server publishes, token and all.
  const hostDir = join(dir, host.replace(':', '_'));
  const latest = JSON.parse(readFileSync(join(hostDir, 'latest.json'), 'utf8'));
  const served = await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/latest', org });
  expect(latest.checkpoint).toEqual(served.json());
  expect(latest.checkpoint.tsa_token).toMatch(/^[A-Za-z0-9+/]+=*$/);
  expect(readdirSync(join(hostDir, 'checkpoints'))).toHaveLength(2);

  const unchanged = await witness();
  expect(unchanged.code).toBe(0);
  expect(unchanged.stdout).toMatch(/: checkpoint \d+ \(root [0-9a-f]{12}…\) unchanged since kept; 2 kept in /);

  // The organization signs, with its own key, another root for the size the witness kept.
  const context = await withTenant(t.db, org.id, (tx) => t.app.services.receipts.signer.prepare(tx, null));
  const key = await context.key;
  const timestamp = t.clock.now().toISOString();
  const otherRoot = 'ab'.repeat(32);
  const jws = await signCheckpoint({ format: CHECKPOINT_FORMAT, organization: { id: org.id, slug: org.slug }, tree_size: r.checkpoint.tree_size, root_hash: otherRoot, timestamp }, key);
  forgedLatest = { tree_size: r.checkpoint.tree_size, root_hash: otherRoot, timestamp, kid: key.kid, jws, tsa_token: null };
  try {
    const forked = await witness();
    expect(forked.code).toBe(1);
    expect(forked.stdout).toBe(
      `${host}: FORK REFUSED: two checkpoints of size ${r.checkpoint.tree_size} with different roots: kept size ${r.checkpoint.tree_size}, root ${r.checkpoint.root_hash}, signed ${latest.checkpoint.timestamp}; now size ${r.checkpoint.tree_size}, root ${otherRoot}, signed ${timestamp}\n`,
    );
  } finally {
    forgedLatest = null;
  }
  // The kept checkpoints are untouched by the refused run.
  expect(JSON.parse(readFileSync(join(hostDir, 'latest.json'), 'utf8'))).toEqual(latest);
});

test('usage: at least one address; an unreadable --tsa-cert is named', async () => {
  const none = await runCli(['witness'], {});
  expect(none.code).toBe(2);
  expect(none.stderr).toMatch(/Usage: assent witness <url\.\.\.> \[--dir DIR\] \[--tsa-cert FILE\] \[--json\]/);
  const bad = await runCli(['witness', url, '--tsa-cert', '/nonexistent/tsa.pem'], {});
  expect(bad.code).toBe(2);
  expect(bad.stderr).toBe('assent: cannot read the TSA certificate /nonexistent/tsa.pem: ENOENT\n');
});
