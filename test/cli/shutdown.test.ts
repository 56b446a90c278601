// Stopping the server (issue 19 item 8, issue 20 item 4), with real processes on both stores:
// - SIGTERM in the middle of many concurrent creates: every request the server accepted is answered
//   (2xx, or 503 on a kept-alive connection once it is closing; never cut), it exits 0, and after a
//   restart every ticket whose creation was acknowledged (2xx) is there.
// - `npm start` passes SIGTERM and SIGINT on to the server: signalling npm stops the server, frees the
//   port and (embedded store) the data directory.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { ROOT, childEnv, cliJson, createCliStore, freePort, killServers, request, startServer, uniqueSlug, type CliStore, portOpen } from './child.js';

vi.setConfig({ testTimeout: 180_000 });

let store: CliStore;
beforeAll(async () => {
  store = await createCliStore();
});
afterEach(killServers);
afterAll(async () => {
  await killServers();
  await store?.drop();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Outcome {
  status?: number;
  ticketId?: string;
  error?: string;
  /** Answered after SIGTERM was sent. */
  afterSignal: boolean;
}

test('SIGTERM under load: every accepted request is answered, the server exits 0, and every acknowledged create is there after a restart', async () => {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  const { key } = await cliJson(['key', 'create', slug, '--scopes', 'grievances'], store.env);
  const server = await startServer(store.env);
  const host = `${slug}.localhost:${server.port}`;
  const user = `user-${uniqueSlug()}`;
  // Keep-alive connections, as a load balancer or a client pool would hold them.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

  let signalled = false;
  let stop = false;
  const outcomes: Outcome[] = [];
  const create = (n: number) =>
    new Promise<Outcome>((resolve) => {
      const body = JSON.stringify({ client_user_id: user, subject: `Load ${n}`, description: 'Created while the server is asked to stop.', category: 'data_access' });
      const req = http.request(
        { host: '127.0.0.1', port: server.port, path: '/grievance', method: 'POST', agent, headers: { host, 'x-api-key': key, 'content-type': 'application/json' }, timeout: 30_000 },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let ticketId: string | undefined;
            try {
              ticketId = (JSON.parse(text) as { ticket_id?: string }).ticket_id;
            } catch {
              // not JSON: counted by status
            }
            resolve({ status: res.statusCode, ticketId, afterSignal: signalled });
          });
          res.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message, afterSignal: signalled }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message, afterSignal: signalled }));
      req.end(body);
    });

  // 32 workers create tickets until the server is gone; SIGTERM once 150 creates have been answered.
  let next = 0;
  const worker = async () => {
    while (!stop) {
      const outcome = await create(next++);
      outcomes.push(outcome);
      if (outcome.error && signalled) stop = true; // refused: the server has stopped accepting
      if (outcomes.length === 150 && !signalled) {
        signalled = true;
        server.child.kill('SIGTERM');
      }
    }
  };
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  await Promise.all(Array.from({ length: 32 }, worker));
  const code = await exited;
  agent.destroy();

  expect(signalled).toBe(true);
  const tally = (list: Outcome[]) => {
    const counts: Record<string, number> = {};
    for (const o of list) counts[`${o.status ?? o.error}${o.afterSignal ? ' after the signal' : ''}`] = (counts[`${o.status ?? o.error}${o.afterSignal ? ' after the signal' : ''}`] ?? 0) + 1;
    return JSON.stringify(counts);
  };
  const problems = () =>
    tally(outcomes) + '\n' + server.logs.slice(-40).map((l) => JSON.stringify(l)).join('\n') + server.stderr();
  expect(code, problems()).toBe(0);
  expect(server.logs.map((l) => l.msg), problems()).toContain('stopped cleanly');
  // Never an error answer: 201, or 503 for a request that reached a kept-alive connection after the close.
  const statuses = new Set(outcomes.filter((o) => o.status !== undefined).map((o) => o.status));
  expect([...statuses].filter((s) => s !== 201 && s !== 503)).toEqual([]);
  // Requests that were not answered never reached the server: refused or reset connections only.
  expect([...new Set(outcomes.filter((o) => o.error).map((o) => o.error))].filter((e) => !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(e!))).toEqual([]);
  // Requests in flight when the signal came were finished, not cut.
  const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.ticketId!);
  expect(outcomes.filter((o) => o.status === 201 && o.afterSignal).length).toBeGreaterThan(0);
  expect(acknowledged.length).toBeGreaterThanOrEqual(150);

  // Every acknowledged create survived the stop.
  const restarted = await startServer(store.env);
  const listed = await request(restarted.port, { method: 'GET', path: `/grievance/user/${user}`, host: `${slug}.localhost:${restarted.port}`, key });
  expect(listed.status).toBe(200);
  const found = new Set(listed.json<{ ticket_id: string }[]>().map((t) => t.ticket_id));
  expect(acknowledged.filter((id) => !found.has(id))).toEqual([]);
  expect(await restarted.stop()).toBe(0);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`npm start passes ${signal} on: the server stops cleanly, the port and the data directory are freed`, async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: childEnv({ ...store.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d: Buffer) => (out += d));
    npm.stderr!.on('data', (d: Buffer) => (out += d));
    try {
      await vi.waitFor(() => expect(out).toContain('Assent listening'), { timeout: 90_000, interval: 200 });
      const serverPid = (JSON.parse(out.split('\n').find((l) => l.includes('Assent listening'))!) as { pid: number }).pid;
      // npm's child is the server itself (the script execs node), not a shell that would keep the signal.
      const parent = Number(readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      expect(parent).toBe(npm.pid);
      const lock = store.dataDir ? join(store.dataDir, 'assent.lock') : null;
      if (lock) expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(serverPid);

      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      npm.kill(signal);
      expect(await exited).toBe(0);
      await vi.waitFor(() => expect(alive(serverPid)).toBe(false), { timeout: 15_000 });
      expect(out).toContain('stopped cleanly');
      expect(await portOpen(port)).toBe(false);
      if (lock) expect(existsSync(lock)).toBe(false);
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  });
}
