// Several processes behind a real load balancer (issue 19): HAProxy, configured by docs/haproxy.cfg as
// it is (round robin, health checks on /health/ready, X-Forwarded-For), in front of two real `assent
// serve` processes on one scratch PostgreSQL database and one Redis, with TRUST_PROXY naming the
// proxy's address. Through the one address:
// - requests reach both processes, and each sees the client's address, not the proxy's;
// - a key revoked through one is refused by both (within 100 ms, then on every request);
// - the per-address rate limit counts the client's address across both processes (Redis), not the
//   proxy's, and a forged X-Forwarded-For does not escape it;
// - a rolling restart (SIGTERM one process while clients send requests steadily, start it again, then
//   the other) loses no request: every answer 2xx, every acknowledged ticket stored once.
// Clients connect from other loopback addresses (127.0.0.2 and up; all of 127/8 is local on Linux)
// so that their address differs from the proxy's (127.0.0.1).
// PostgreSQL project only: several processes cannot share the embedded store (one process locks
// DATA_DIR), so on PGlite there is nothing to put behind a load balancer. HAProxy must be installed
// (.ci/run installs Debian's); without it the suite fails saying so.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { storeKind } from '../support/store.js';
import { cliJson, createCliStore, freePort, killServers, portOpen, ROOT, startServer, uniqueSlug, type CliStore, type ServerProcess } from './child.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const CONFIG = join(ROOT, 'docs/haproxy.cfg');
const REDIS_URL = process.env.TEST_REDIS_URL;
const PER_ADDRESS = 30;

test('docs/operations.md gives docs/haproxy.cfg exactly as the test runs it', () => {
  const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const block = /```haproxy\n([\s\S]*?)```/.exec(doc);
  expect(block, 'a ```haproxy block in docs/operations.md').not.toBeNull();
  expect(block![1]).toBe(readFileSync(CONFIG, 'utf8'));
});

describe.runIf(storeKind() === 'pglite')('behind a load balancer, on the embedded store', () => {
  test.skip('not applicable: one process owns the embedded store (DATA_DIR is locked), so there are no processes to balance; the postgres project runs these tests', () => {});
});

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

describe.runIf(storeKind() === 'postgres')('two processes behind HAProxy (docs/haproxy.cfg)', () => {
  let store: CliStore;
  let env: Record<string, string>;
  const ports: number[] = [];
  const servers: ServerProcess[] = [];
  let lbPort: number;
  let haproxy: ChildProcess | null = null;
  let haproxyOutput = '';
  let slug: string;
  let key: string;

  /** One request through the load balancer, from the loopback address `from`, on a connection of its own. */
  function via(from: string, o: { method?: string; path: string; key?: string; body?: unknown; headers?: Record<string, string>; host?: string }): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
      const headers: Record<string, string> = { host: o.host ?? `${slug}.localhost:${lbPort}`, ...o.headers };
      if (o.key) headers['x-api-key'] = o.key;
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const req = http.request(
        { host: '127.0.0.1', port: lbPort, localAddress: from, path: o.path, method: o.method ?? 'GET', headers, agent: false, timeout: 30_000 },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${o.method ?? 'GET'} ${o.path}: no answer within 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The addresses the server logged for the requests to `route` it received (Fastify's "incoming request"). */
  function clientsSeen(server: ServerProcess, route: string): string[] {
    return server.logs
      .filter((l) => l.msg === 'incoming request' && (l.req as { route?: string } | undefined)?.route === route)
      .map((l) => (l.req as { remoteAddress: string }).remoteAddress);
  }

  async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms\nhaproxy: ${haproxyOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    const version = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new Error('haproxy is not installed: apt-get install haproxy (Debian\'s; .ci/run installs it when it is missing)');
    }
    store = await createCliStore();
    slug = uniqueSlug();
    await cliJson(['org', 'create', slug], store.env);
    key = (await cliJson(['key', 'create', slug, '--scopes', 'admin,grievances'], store.env)).key;
    env = {
      ...store.env,
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
      ...(REDIS_URL ? { REDIS_URL, REDIS_KEY_PREFIX: `assent-lb-test-${uniqueSlug()}:` } : {}),
    };
    ports.push(await freePort(), await freePort());
    // One after the other: the second finds the migrations applied.
    for (const port of ports) servers.push(await startServer(env, 60_000, port));
    lbPort = await freePort();
    const lbEnv = { ...process.env, ASSENT_LB_BIND: `127.0.0.1:${lbPort}`, ASSENT_APP1: `127.0.0.1:${ports[0]}`, ASSENT_APP2: `127.0.0.1:${ports[1]}` };
    const check = spawnSync('haproxy', ['-c', '-f', CONFIG], { env: lbEnv, encoding: 'utf8' });
    expect(check.status, `haproxy -c -f docs/haproxy.cfg:\n${check.stdout}${check.stderr}`).toBe(0);
    haproxy = spawn('haproxy', ['-db', '-f', CONFIG], { env: lbEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout!.on('data', (d: Buffer) => (haproxyOutput += d));
    haproxy.stderr!.on('data', (d: Buffer) => (haproxyOutput += d));
    await waitFor('haproxy listening', () => portOpen(lbPort), 20_000);
    // Both processes in rotation: requests through the balancer reach each (health checks passed).
    await waitFor('requests reaching both processes', async () => {
      await via('127.0.0.9', { path: '/grievance/user/warm-up', key });
      return servers.every((s) => clientsSeen(s, '/grievance/user/:user_id').length > 0);
    });
  });
  afterAll(async () => {
    haproxy?.kill('SIGTERM');
    await killServers();
    await store?.drop();
  });

  test('requests reach both processes in turn, and each sees the client\'s address, not the proxy\'s', async () => {
    const before = servers.map((s) => clientsSeen(s, '/api/v1/organization').length);
    for (let i = 0; i < 10; i++) {
      const res = await via('127.0.0.2', { path: '/api/v1/organization', key });
      expect(res.status, res.body).toBe(200);
      expect(JSON.parse(res.body).slug).toBe(slug);
    }
    const seen = servers.map((s) => clientsSeen(s, '/api/v1/organization').slice(before[servers.indexOf(s)]));
    // Round robin: five each.
    expect(seen.map((s) => s.length)).toEqual([5, 5]);
    expect(new Set(seen.flat())).toEqual(new Set(['127.0.0.2']));
  });

  test('a host a client forges in X-Forwarded-Host is replaced by the proxy with the Host it asked for', async () => {
    const res = await via('127.0.0.2', { path: '/api/v1/organization', key, headers: { 'x-forwarded-host': 'someone-else.localhost' } });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body).slug).toBe(slug);
  });

  test('a key revoked through one process is refused within 100 ms, then on every request, whichever process answers', async () => {
    const { key: doomed, id } = await cliJson(['key', 'create', slug, '--scopes', 'grievances'], store.env);
    // Each request from the next address, so the per-address limit is never what answers.
    let n = 0;
    const list = () => via(`127.0.2.${1 + (n++ % 250)}`, { path: '/grievance/user/u-revoked', key: doomed });
    // Both processes have the key in their caches (valid for 10 s).
    for (let i = 0; i < 4; i++) expect((await list()).status).toBe(200);
    const revoked = await via('127.0.0.3', { method: 'DELETE', path: `/api/v1/api-keys/${id}`, key });
    expect(revoked.status, revoked.body).toBe(200);
    const start = performance.now();
    for (;;) {
      const res = await list();
      if (res.status === 401) break;
      if (performance.now() - start > 100) throw new Error(`still ${res.status} ${performance.now() - start} ms after the revocation: ${res.body}`);
    }
    const before = servers.map((s) => clientsSeen(s, '/grievance/user/:user_id').length);
    const after = await Promise.all(Array.from({ length: 10 }, () => list()));
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(401));
    expect(JSON.parse(after[0]!.body)).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    // Both processes answered some of them.
    servers.forEach((s, i) => expect(clientsSeen(s, '/grievance/user/:user_id').length).toBeGreaterThan(before[i]!));
  });

  test.runIf(REDIS_URL)('the per-address rate limit counts the client\'s address across both processes, not the proxy\'s', async () => {
    const client = '127.0.0.4';
    const before = servers.map((s) => clientsSeen(s, '/grievance/user/:user_id').filter((a) => a === client).length);
    for (let i = 0; i < PER_ADDRESS; i++) {
      const res = await via(client, { path: '/grievance/user/u-limited', key });
      expect(res.status, `request ${i + 1}: ${res.body}`).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeDefined();
    }
    // Counted on both processes, in one counter.
    servers.forEach((s, i) => expect(clientsSeen(s, '/grievance/user/:user_id').filter((a) => a === client).length - before[i]!).toBe(PER_ADDRESS / 2));
    for (let i = 0; i < 2; i++) {
      const over = await via(client, { path: '/grievance/user/u-limited', key });
      expect(over.status, over.body).toBe(429);
      expect(JSON.parse(over.body).code).toBe('rate_limited');
    }
    // A forged X-Forwarded-For is on the left of what the proxy appends: not believed.
    const forged = await via(client, { path: '/grievance/user/u-limited', key, headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(forged.status, forged.body).toBe(429);
    // Another client behind the same proxy is not limited: the proxy's address is not what is counted.
    const other = await via('127.0.0.5', { path: '/grievance/user/u-limited', key });
    expect(other.status, other.body).toBe(200);
  });

  test('a rolling restart (SIGTERM one process under steady requests, start it again, then the other) loses no request', async () => {
    const user = `rolling-${uniqueSlug()}`;
    const failures: string[] = [];
    const created = new Set<string>();
    let sent = 0;
    let running = true;
    // Many clients (each request from the next of 200 loopback addresses, so no address meets the
    // per-address limit), 4 at a time: writes and reads, one after another on each.
    const worker = async (w: number) => {
      for (let n = 0; running; n++) {
        const from = `127.0.1.${1 + ((n * 4 + w) % 200)}`;
        const write = n % 2 === 0;
        sent++;
        try {
          const res = write
            ? await via(from, { method: 'POST', path: '/grievance', key, body: { client_user_id: user, subject: `Rolling ${w}-${n}`, description: 'Sent during a rolling restart.', category: 'other' } })
            : await via(from, { path: `/grievance/user/${user}`, key });
          if (res.status < 200 || res.status > 299) failures.push(`${write ? 'POST' : 'GET'} ${res.status} ${res.body.slice(0, 200)}`);
          else if (write) created.add(JSON.parse(res.body).ticket_id as string);
        } catch (e) {
          failures.push(`${write ? 'POST' : 'GET'}: ${(e as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(worker));
    const servedBy = (s: ServerProcess) => s.logs.filter((l) => l.msg === 'incoming request' && ['/grievance', '/grievance/user/:user_id'].includes((l.req as { route?: string }).route ?? '')).length;
    try {
      await new Promise((r) => setTimeout(r, 2000));
      for (const i of [0, 1]) {
        const old = servers[i]!;
        expect(await old.stop(), `process ${i + 1} exits 0 after SIGTERM`).toBe(0);
        servers[i] = await startServer(env, 60_000, ports[i]);
        // Back in rotation: HAProxy's health checks passed and requests reach the new process.
        await waitFor(`the restarted process ${i + 1} serving requests through the balancer`, () => servedBy(servers[i]!) >= 5);
      }
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      running = false;
      await load;
    }
    console.log(`rolling restart: ${sent} requests through HAProxy, ${failures.length} failed, ${created.size} tickets created`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(100);
    // Every acknowledged ticket is stored, once (a request HAProxy sent again was not written twice).
    const stored = await via('127.0.0.6', { path: `/grievance/user/${user}`, key });
    expect(stored.status, stored.body).toBe(200);
    expect((JSON.parse(stored.body) as { ticket_id: string }[]).map((r) => r.ticket_id).sort()).toEqual([...created].sort());
  });
});
