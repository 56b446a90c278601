// The tenant pool's socket (src/platform/db/coalescing-socket.ts): what postgres.js writes in one turn of
// the event loop, and in the setImmediate after it, leaves in one write; what comes later leaves in a
// write of its own; nothing is lost or reordered; a refused connection rejects with the system's error.
// No database: a local TCP server is the peer, so it runs once (in the pglite project).
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { coalescingSocket } from '../../src/platform/db/coalescing-socket.js';
import { storeKind } from '../support/store.js';

const once = storeKind() === 'pglite';
let server: net.Server;
let port = 0;
let received: Buffer[] = [];
beforeAll(async () => {
  if (!once) return;
  server = net.createServer((s) => s.on('data', (d) => received.push(d)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  if (server) await new Promise((resolve) => server.close(resolve));
});

/** Counts the writes that reach the kernel (Node's _write and _writev on the socket). */
function countWrites(socket: net.Socket): { writes: number } {
  const counter = { writes: 0 };
  const s = socket as unknown as { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown };
  const [w, wv] = [s._write, s._writev];
  s._write = function (this: unknown, ...a: unknown[]) {
    counter.writes++;
    return w.apply(this, a);
  };
  s._writev = function (this: unknown, ...a: unknown[]) {
    counter.writes++;
    return wv.apply(this, a);
  };
  return counter;
}

const tick = () => new Promise((resolve) => setImmediate(() => setImmediate(() => setImmediate(resolve))));

test.runIf(once)('a batch written at once and in the setImmediate after it leaves in one write, in order', async () => {
  received = [];
  const socket = await coalescingSocket({ host: ['127.0.0.1'], port: [port] });
  const counter = countWrites(socket);
  // As postgres.js does: past 1,024 bytes at once, the rest on its own setImmediate.
  socket.write(Buffer.alloc(1500, 'a'));
  socket.write(Buffer.from('b'));
  setImmediate(() => socket.write(Buffer.alloc(300, 'c')));
  await tick();
  expect(counter.writes).toBe(1);
  // A later batch is a write of its own.
  socket.write(Buffer.from('d'));
  await tick();
  expect(counter.writes).toBe(2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(Buffer.concat(received).toString()).toBe('a'.repeat(1500) + 'b' + 'c'.repeat(300) + 'd');
  socket.destroy();
});

test.runIf(once)('a refused connection rejects with the system error (ECONNREFUSED), as postgres.js would have', async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const free = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await expect(coalescingSocket({ host: ['127.0.0.1'], port: [free] })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
});
