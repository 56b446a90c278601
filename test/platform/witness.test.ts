// The witness (issue 32 item 2) against a small organization of its own: an HTTP server on 127.0.0.1 at
// <slug>.localhost that serves the interface every Assent serves (JWKS, the latest checkpoint, consistency
// proofs) from a Merkle tree built with the audit feature's own functions, and signs with an Ed25519 key;
// the checkpoints carry real RFC 3161 tokens from OpenSSL's TSA. It can be told to lie (fork, shrink,
// replace its key), which a real server is not. test/cli/witness.test.ts runs the command against a real
// Assent server.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { consistencyRanges, EMPTY_ROOT, leafHash, nodeHash, toHex, type Hash } from '../../src/features/audit/merkle.js';
import { checkpointTimestampData, requestTimestamp } from '../../src/features/audit/tsa.js';
import { witnessOrganization, type KeptCheckpoint } from '../../src/features/transparency/witness.js';
import { startOpensslTsa, type OpensslTsa } from '../support/openssl-tsa.js';

/** MTH(D[a:b]) by RFC 9162's recursion. */
function mth(leaves: Hash[], a: number, b: number): Hash {
  if (b === a) return EMPTY_ROOT;
  if (b - a === 1) return leaves[a]!;
  let k = 1;
  while (k * 2 < b - a) k *= 2;
  return nodeHash(mth(leaves, a, a + k), mth(leaves, a + k, b));
}

interface Org {
  url: string;
  leaves: Hash[];
  /** The checkpoint served as latest; null: none yet. */
  latest: Record<string, unknown> | null;
  /** Answer consistency proofs over these leaves instead (a rewritten past). */
  proofLeaves: Hash[] | null;
  jwk: JWK;
  sign(size: number, root: string, at?: string): Promise<Record<string, unknown>>;
  append(n: number): Promise<void>;
  close(): Promise<void>;
}

let tsa: OpensslTsa;
let root: string;
const orgs: Org[] = [];

async function startOrg(slug: string, withTsa = false): Promise<Org> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const kid = `${slug}-k1`;
  const org: Org = {
    url: '',
    leaves: [],
    latest: null,
    proofLeaves: null,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig', not_before: '2026-01-01T00:00:00.000Z' } as JWK,
    async sign(size, rootHash, at = new Date().toISOString()) {
      const payload = { format: 'assent-checkpoint/1', organization: { id: `00000000-0000-7000-8000-${slug.padEnd(12, '0').slice(0, 12)}`, slug }, tree_size: size, root_hash: rootHash, timestamp: at };
      const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'assent-checkpoint+jws' }).sign(privateKey);
      const token = withTsa ? (await requestTimestamp(tsa.url, checkpointTimestampData(jws))).toString('base64') : null;
      return { tree_size: size, root_hash: rootHash, timestamp: at, kid, jws, tsa_token: token };
    },
    async append(n) {
      for (let i = 0; i < n; i++) org.leaves.push(leafHash(`entry ${org.leaves.length + 1} of ${slug}`));
      org.latest = await org.sign(org.leaves.length, toHex(mth(org.leaves, 0, org.leaves.length)));
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.host !== new URL(org.url).host) return send(404, { error: 'No organization at this address' });
    if (u.pathname === '/.well-known/jwks.json') return send(200, { keys: [org.jwk] });
    if (u.pathname === '/.well-known/assent/checkpoints/latest') return org.latest ? send(200, org.latest) : send(404, { error: 'No checkpoint yet', code: 'no_checkpoint' });
    if (u.pathname === '/.well-known/assent/checkpoints/consistency') {
      const first = Number(u.searchParams.get('first'));
      const second = Number(u.searchParams.get('second'));
      const leaves = org.proofLeaves ?? org.leaves;
      return send(200, { first, second, proof: consistencyRanges(first, second).map(([a, b]) => toHex(mth(leaves, a, b))) });
    }
    send(404, { error: 'Not found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  org.url = `http://${slug}.localhost:${(server.address() as { port: number }).port}`;
  orgs.push(org);
  return org;
}

beforeAll(async () => {
  tsa = await startOpensslTsa();
  root = mkdtempSync(join(tmpdir(), 'assent-witness-'));
}, 60_000);
afterAll(async () => {
  await Promise.all(orgs.map((o) => o.close()));
  await tsa?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('first run keeps the checkpoint; later runs prove consistency, keep each, and say unchanged', async () => {
  const org = await startOrg('acme', true);
  const dir = join(root, 'a');
  expect(await witnessOrganization(org.url, { dir })).toMatchObject({ ok: true, status: 'no_checkpoint' });

  await org.append(5);
  const first = await witnessOrganization(org.url, { dir, tsaCertPem: tsa.caCertPem });
  expect(first, first.problem ?? '').toMatchObject({ ok: true, status: 'first', checkpoint: { tree_size: 5 }, organization: { slug: 'acme' }, tsa: { checked: true }, kept: 1 });
  expect(first.summary).toMatch(/^acme\.localhost:\d+: first checkpoint kept, 5 \(root [0-9a-f]{12}…, acme, key acme-k1\); TSA time \S+; in /);

  await org.append(8);
  const second = await witnessOrganization(org.url, { dir, tsaCertPem: tsa.tsaCertPem });
  expect(second, second.problem ?? '').toMatchObject({ ok: true, status: 'consistent', previous: { tree_size: 5 }, checkpoint: { tree_size: 13 }, kept: 2 });
  expect(second.summary).toMatch(/checkpoint 13 \(root [0-9a-f]{12}…\) extends kept 5: consistency proof of \d+ hashes verified; TSA time/);

  const again = await witnessOrganization(org.url, { dir });
  expect(again).toMatchObject({ ok: true, status: 'unchanged', kept: 2 });

  const hostDir = join(dir, new URL(org.url).host.replace(':', '_'));
  expect(readdirSync(join(hostDir, 'checkpoints')).sort()).toEqual(['000000000005.json', '000000000013.json']);
  const latest = JSON.parse(readFileSync(join(hostDir, 'latest.json'), 'utf8')) as KeptCheckpoint;
  expect(latest).toEqual({ ...org.latest!, witness: { url: org.url, organization: { id: expect.any(String), slug: 'acme' }, fetched_at: expect.any(String), consistency: { from_size: 5, from_root: first.checkpoint!.root_hash, proof: expect.any(Array) }, tsa: { gen_time: expect.any(String), serial: expect.any(String), policy: '1.3.6.1.4.1.99999.1' } } });
});

test('a fork is refused naming both checkpoints: same size, another root', async () => {
  const org = await startOrg('forked');
  const dir = join(root, 'b');
  await org.append(4);
  expect((await witnessOrganization(org.url, { dir })).ok).toBe(true);
  const kept = org.latest!;
  // The organization signs, with its real key, another tree of the same size.
  org.latest = await org.sign(4, toHex(mth([leafHash('x'), ...org.leaves.slice(1)], 0, 4)));
  const r = await witnessOrganization(org.url, { dir });
  expect(r).toMatchObject({ ok: false, status: 'fork' });
  expect(r.problem).toBe(
    `two checkpoints of size 4 with different roots: kept size 4, root ${kept.root_hash as string}, signed ${kept.timestamp as string}; now size 4, root ${org.latest.root_hash as string}, signed ${org.latest.timestamp as string}`,
  );
  expect(r.summary).toMatch(/: FORK REFUSED: two checkpoints of size 4/);
});

test('a rewritten past is refused: the consistency proof fails', async () => {
  const org = await startOrg('rewrite');
  const dir = join(root, 'c');
  await org.append(6);
  expect((await witnessOrganization(org.url, { dir })).ok).toBe(true);
  // Entry 2 changed, then more appended: a valid signature over a tree that does not extend the kept one.
  org.leaves[1] = leafHash('entry 2, rewritten');
  org.proofLeaves = org.leaves;
  await org.append(3);
  const r = await witnessOrganization(org.url, { dir });
  expect(r).toMatchObject({ ok: false, status: 'fork', previous: { tree_size: 6 }, checkpoint: { tree_size: 9 } });
  expect(r.problem).toMatch(/^the consistency proof from kept checkpoint size 6, root [0-9a-f]{64}, signed \S+ to rewrite\.localhost:\d+'s checkpoint size 9, .* fails: the log before 6 was rewritten$/);
  // Nothing of the refused checkpoint was kept.
  expect((await witnessOrganization(org.url, { dir })).previous?.tree_size).toBe(6);
});

test('a tree that shrank, or vanished, is refused', async () => {
  const org = await startOrg('shrink');
  const dir = join(root, 'd');
  await org.append(7);
  expect((await witnessOrganization(org.url, { dir })).ok).toBe(true);
  org.leaves.length = 3;
  await org.append(0);
  const r = await witnessOrganization(org.url, { dir });
  expect(r.status).toBe('fork');
  expect(r.problem).toMatch(/^the tree shrank: this witness kept checkpoint size 7, .* and shrink\.localhost:\d+ now answers checkpoint size 3,/);
  org.latest = null;
  expect((await witnessOrganization(org.url, { dir })).problem).toMatch(/says it has no checkpoint, but this witness kept checkpoint size 7/);
});

test('a replaced key, a bad signature, a bad TSA token and an unreachable address are refused', async () => {
  const org = await startOrg('keys', true);
  const dir = join(root, 'e');
  await org.append(2);
  expect((await witnessOrganization(org.url, { dir, tsaCertPem: tsa.caCertPem })).ok).toBe(true);

  await org.append(1);
  const other = await startOpensslTsa();
  try {
    const wrongTsa = await witnessOrganization(org.url, { dir, tsaCertPem: other.caCertPem });
    expect(wrongTsa.status).toBe('refused');
    expect(wrongTsa.problem).toMatch(/^keys\.localhost:\d+'s checkpoint \(size 3, .*\): the TSA token of checkpoint 3 does not verify: the token was signed by .*not the TSA certificate given/);
  } finally {
    await other.close();
  }

  const saved = org.latest!;
  org.latest = { ...saved, root_hash: 'f'.repeat(64) };
  expect((await witnessOrganization(org.url, { dir })).problem).toMatch(/latest checkpoint says size 3, root f{64}.* but its signed JWS says size 3, root/);
  org.latest = { ...saved, jws: (saved.jws as string).replace(/\.[^.]+$/, '.AAAA') };
  expect((await witnessOrganization(org.url, { dir })).problem).toMatch(/does not verify: the checkpoint's signature does not verify with the organization's keys/);
  org.latest = saved;

  const realKey = org.jwk;
  const { publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  org.jwk = { ...(await exportJWK(publicKey)), kid: realKey.kid, alg: 'EdDSA', use: 'sig', not_before: (realKey as { not_before: string }).not_before } as JWK;
  const replaced = await witnessOrganization(org.url, { dir });
  expect(replaced.status).toBe('refused');
  expect(replaced.problem).toMatch(/publishes key keys-k1 with another public key or not_before than this witness kept: the organization's keys were replaced/);
  org.jwk = realKey;
  expect((await witnessOrganization(org.url, { dir, tsaCertPem: tsa.caCertPem })).status).toBe('consistent');

  await org.close();
  const gone = await witnessOrganization(org.url, { dir });
  expect(gone.status).toBe('error');
  expect(gone.problem).toMatch(/could not get the organization's keys from http:\/\/keys\.localhost:\d+\/\.well-known\/jwks\.json: ECONNREFUSED/);
  orgs.splice(orgs.indexOf(org), 1);
}, 60_000);
