// `assent witness` (issue 32 item 2), the real command as a child process, against a real Assent over
// real HTTP on each store: the app listening on 127.0.0.1 with TSA_URL pointing at OpenSSL's TSA
// (test/support/openssl-tsa.ts), behind a small pass-through proxy that the organization controls.
// A first run keeps the checkpoint; entries are added and sealed; a second run proves consistency.
// Then the proxy answers, for the size kept, a checkpoint with another root, signed with the
// organization's real key (the organization showing two histories): refused with exit 1, naming both.
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { startOpensslTsa, type OpensslTsa } from '../support/openssl-tsa.js';
import { runCli } from './child.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { CHECKPOINT_FORMAT, signCheckpoint } from '../../src/features/transparency/index.js';
import { createExportService } from '../../src/features/export/index.js';

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
  const { witness: about, ...published } = latest;
  expect(published).toEqual(served.json());
  expect(about).toMatchObject({ url, organization: { id: org.id, slug: org.slug }, consistency: { from_size: r.previous.tree_size } });
  expect(latest.tsa_token).toMatch(/^[A-Za-z0-9+/]+=*$/);
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
      `${host}: FORK REFUSED: two checkpoints of size ${r.checkpoint.tree_size} with different roots: kept size ${r.checkpoint.tree_size}, root ${r.checkpoint.root_hash}, signed ${latest.timestamp}; now size ${r.checkpoint.tree_size}, root ${otherRoot}, signed ${timestamp}\n`,
    );
  } finally {
    forgedLatest = null;
  }
  // The kept checkpoints are untouched by the refused run.
  expect(JSON.parse(readFileSync(join(hostDir, 'latest.json'), 'utf8'))).toEqual(latest);
});

test('the export carries the TSA tokens; export verify --tsa-cert checks them, and refuses another TSA', async () => {
  await addEntries(1);
  const file = join(dir, 'acme-export.tar.gz');
  const started = createExportService({ db: t.db, clock: t.clock, signer: t.app.services.receipts.signer, sequencer: t.app.sequencer }).exportOrganization({ id: org.id, slug: org.slug, name: org.slug });
  await Promise.all([pipeline(started.stream, createWriteStream(file)), started.done]);
  const host = new URL(url).host;
  const kept = join(dir, host.replace(':', '_'), 'latest.json');

  const ok = await runCli(['export', 'verify', file, '--tsa-cert', tsa.caCertFile, '--checkpoint', kept], {});
  expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  expect(ok.stdout).toMatch(new RegExp(`\n  TSA tokens: ([3-9]|\\d\\d+) verified with ${tsa.caCertFile.replace(/[.]/g, '\\.')} \\(TSA times \\S+ to \\S+\\)\n`));
  const json = await runCli(['export', 'verify', file, '--tsa-cert', tsa.tsaCertFile, '--json'], {});
  const report = JSON.parse(json.stdout) as { ok: boolean; timestamps: { verified: number; without_token: number }; tree: { checkpoints: number } };
  expect(report.ok).toBe(true);
  expect(report.timestamps.verified + report.timestamps.without_token).toBe(report.tree.checkpoints);
  expect(report.timestamps.without_token).toBe(0);
  // Without --tsa-cert nothing about tokens is said (nor checked).
  expect(JSON.parse((await runCli(['export', 'verify', file, '--json'], {})).stdout)).not.toHaveProperty('timestamps');

  const other = await startOpensslTsa();
  try {
    const wrong = await runCli(['export', 'verify', file, '--tsa-cert', other.caCertFile], {});
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/FAILED verification: audit checkpoint, audit-checkpoints\/000001\.jsonl line 1: the TSA token of checkpoint \d+ does not verify: the token was signed by .*Test Time Stamping Authority.*, which is not the TSA certificate given/);
  } finally {
    await other.close();
  }
});

test('several addresses: one line each; one that fails makes the exit 1, the others are still witnessed', async () => {
  const r = await runCli(['witness', url, 'http://nobody.localhost:9', '--dir', dir], {});
  expect(r.code).toBe(1);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/: checkpoint \d+ \(root [0-9a-f]{12}…\) (unchanged since kept|extends kept \d+)/);
  expect(lines[1]).toBe("nobody.localhost:9: ERROR: could not get the organization's keys from http://nobody.localhost:9/.well-known/jwks.json: ECONNREFUSED");
});

test('usage: at least one address; an unreadable --tsa-cert is named', async () => {
  const none = await runCli(['witness'], {});
  expect(none.code).toBe(2);
  expect(none.stderr).toMatch(/Usage: assent witness <url> \[<url>\.\.\.\] \[--dir DIR\] \[--tsa-cert FILE\] \[--json\]/);
  const bad = await runCli(['witness', url, '--tsa-cert', '/nonexistent/tsa.pem'], {});
  expect(bad.code).toBe(2);
  expect(bad.stderr).toBe('assent: cannot read the TSA certificate /nonexistent/tsa.pem: ENOENT\n');
});
