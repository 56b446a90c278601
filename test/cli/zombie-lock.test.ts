// Issue 34, item 5: a restart right after SIGKILL on the embedded store. The killed server stays a
// zombie until its parent reaps it, and signal 0 still finds a zombie, so the data directory's lock
// looked held ("in use by an Assent server (pid N)") and a start script without a retry stayed down.
// Here the server's parent is a shell that has exec'd `sleep` and never reaps it: a real SIGKILL, a real
// zombie, and a new server on the same directory must start while the zombie is still there.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { storeKind } from '../support/store.js';
import { ROOT, childEnv, cliJson, createCliStore, freePort, killServers, portOpen, request, startServer, uniqueSlug, type CliStore } from './child.js';

let store: CliStore;
let parent: ChildProcess | null = null;
beforeAll(async () => {
  store = await createCliStore();
});
afterAll(async () => {
  parent?.kill('SIGKILL'); // its zombie child is then reaped by init
  await killServers();
  await store?.drop();
});

function state(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
  } catch {
    return null;
  }
}

const until = async (ok: () => boolean | Promise<boolean>, ms: number, what: string) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

test.runIf(storeKind() === 'pglite')('a server SIGKILLed and not yet reaped (a zombie) does not hold the data directory: the restart starts at once', async () => {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  const key = (await cliJson<{ key: string }>(['key', 'create', slug, '--scopes', 'admin'], store.env)).key;

  const port = await freePort();
  parent = spawn('sh', ['-c', `"${process.execPath}" bin/assent.mjs serve >/dev/null 2>&1 & echo $!; exec sleep 600`], {
    cwd: ROOT,
    env: childEnv({ ...store.env, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const pid = await new Promise<number>((resolve) => parent!.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  expect(pid).toBeGreaterThan(0);
  await until(() => portOpen(port), 90_000, 'the first server to listen');
  const lock = JSON.parse(readFileSync(`${store.dataDir}/assent.lock`, 'utf8')) as { pid: number; holder: string };
  expect(lock).toMatchObject({ pid, holder: 'server' });

  process.kill(pid, 'SIGKILL');
  await until(() => state(pid) === 'Z', 5_000, 'the killed server to be a zombie');

  const started = Date.now();
  const restarted = await startServer(store.env, 90_000);
  const took = Date.now() - started;
  // The zombie is still there (its parent never reaped it): the lock was told from a live holder.
  expect(state(pid)).toBe('Z');
  const res = await request(restarted.port, { method: 'GET', path: '/api/v1/webhooks', host: `${slug}.localhost`, key });
  expect(res.status).toBe(200);
  const relocked = JSON.parse(readFileSync(`${store.dataDir}/assent.lock`, 'utf8')) as { pid: number };
  expect(relocked.pid).toBe(restarted.child.pid);
  console.log(`restart after SIGKILL with the killed server a zombie: listening after ${took} ms`);
}, 240_000);
