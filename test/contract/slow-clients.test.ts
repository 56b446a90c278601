// Slow clients (issue 21, class 11), on real sockets: clients that send their request a byte at a time
// are cut at the header timeout, /health keeps answering while they hang on, and past the connection cap
// new connections are closed at once instead of exhausting the process.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

const HEADERS_TIMEOUT_MS = 2000;
const MAX_CONNECTIONS = 400;

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({
    env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: '3000', HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS) },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(async () => t?.close());

interface SlowClient {
  socket: Socket;
  closedAt: number | null;
  answer: string;
}

/** A client that sends a request line, then one header byte every 200 ms, never finishing its headers. */
function slowClient(): Promise<SlowClient> {
  return new Promise((resolve) => {
    const client: SlowClient = { socket: connect(port, '127.0.0.1'), closedAt: null, answer: '' };
    let drip: ReturnType<typeof setInterval> | null = null;
    client.socket.on('connect', () => {
      client.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
      drip = setInterval(() => client.socket.write('a'), 200);
      resolve(client);
    });
    client.socket.on('data', (chunk) => (client.answer += chunk.toString('latin1')));
    client.socket.on('error', () => {});
    client.socket.on('close', () => {
      if (drip) clearInterval(drip);
      client.closedAt = Date.now();
      resolve(client);
    });
  });
}

async function healthWithin(ms: number): Promise<number> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(ms) });
  expect(res.status).toBe(200);
  return Date.now() - started;
}

const waitUntil = async (ok: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
};

test('clients dripping their headers are cut at the header timeout while /health keeps answering', async () => {
  const started = Date.now();
  const clients = await Promise.all(Array.from({ length: 300 }, slowClient));
  // While 300 clients hang on, /health answers quickly, again and again.
  for (let i = 0; i < 5; i++) expect(await healthWithin(1000)).toBeLessThan(1000);
  await waitUntil(() => clients.every((c) => c.closedAt !== null), HEADERS_TIMEOUT_MS + 4000);
  const open = clients.filter((c) => c.closedAt === null);
  for (const c of open) c.socket.destroy();
  expect(open.length).toBe(0);
  // Each was cut at the header timeout (checked every second), none earlier, with 408 Request Timeout.
  const lifetimes = clients.map((c) => c.closedAt! - started);
  expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
  expect(clients.every((c) => c.answer === '' || c.answer.startsWith('HTTP/1.1 408'))).toBe(true);
});

test('past the connection cap new connections are closed at once; once the slow ones are cut, the server answers', async () => {
  const clients = await Promise.all(Array.from({ length: MAX_CONNECTIONS + 50 }, slowClient));
  // The ones past the cap were closed by the server straight away, without an answer.
  await waitUntil(() => clients.filter((c) => c.closedAt !== null).length >= 50, 1500);
  const early = clients.filter((c) => c.closedAt !== null);
  expect(early.length).toBeGreaterThanOrEqual(50);
  expect(early.length).toBeLessThan(MAX_CONNECTIONS);
  await waitUntil(() => clients.every((c) => c.closedAt !== null), HEADERS_TIMEOUT_MS + 4000);
  for (const c of clients) if (c.closedAt === null) c.socket.destroy();
  expect(await healthWithin(2000)).toBeLessThan(2000);
});
