// A real webhook receiver for tests: node:http on 127.0.0.1 that records every request and answers as told
// (a status, or never: a dead receiver that holds the connection open), at once or after a fixed latency.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests started (also those never answered). */
  started: number;
  /** Status to answer with, or 'hang' to never answer. */
  answer: number | 'hang';
  /** Connections open now. */
  open(): number;
  /** The most requests it was answering at one time. */
  maxConcurrent: number;
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(answer: number | 'hang' = 200, latencyMs = 0): Promise<Receiver> {
  let openConnections = 0;
  let answering = 0;
  const server = http.createServer((req, res) => {
    r.started++;
    answering++;
    r.maxConcurrent = Math.max(r.maxConcurrent, answering);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      if (r.answer === 'hang') return;
      const reply = (status: number) => {
        answering--;
        res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (latencyMs > 0) setTimeout(reply, latencyMs, r.answer);
      else reply(r.answer);
    });
  });
  server.on('connection', (socket) => {
    openConnections++;
    socket.on('close', () => openConnections--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    received: [],
    started: 0,
    maxConcurrent: 0,
    answer,
    open: () => openConnections,
    async waitFor(n, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      while (r.received.length < n) {
        if (Date.now() > until) throw new Error(`receiver got ${r.received.length} of ${n} requests`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return r;
}
