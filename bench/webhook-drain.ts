// Issue 31 item 4: does the webhook worker keep up with the writes? N organizations, each with 3 endpoints
// subscribed to grievance.created and pointing at real HTTP receivers (in a worker thread of this process,
// so their event loop is not the service's; each answers 200 after a fixed latency, as a real receiver
// would take some time), then `POST /grievance` for S seconds at full speed (app.inject, C at a time, the
// organizations in turn) with the service's own webhook worker running, as `assent serve` runs it. Then
// the time until every delivery has arrived. Reports writes/s (during the burst), deliveries/s (all of
// them, from the first write to the last arrival) and how long the backlog took to drain after the
// burst, plus the order seen by each endpoint (arrivals whose event is older than one that endpoint
// already received).
// Usage: [DATABASE_URL=postgres://...] npx tsx bench/webhook-drain.ts [--orgs 10] [--seconds 5]
//          [--latency 10] [--concurrency 16] [--worker-after]
// --worker-after starts the worker once the burst is over: the worker's own rate, with no writes beside it
// (then deliveries/s counts from the worker's start).
// On PostgreSQL it makes a scratch database beside DATABASE_URL and drops it after; without it, an
// in-memory embedded store.
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/platform/db/open.js';
import { migrate } from '../src/platform/db/migrate.js';
import { BENCH_SECRET_KEY } from './secret.js';
import { scratchDatabase } from './scratch-db.js';

const { values: opts } = parseArgs({
  options: {
    orgs: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '5' },
    latency: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    'max-wait': { type: 'string', default: '300' },
    // The worker starts only after the burst: its own rate, with no writes beside it.
    'worker-after': { type: 'boolean', default: false },
  },
});
const ORGS = Number(opts.orgs);
const ENDPOINTS = 3;
const SECONDS = Number(opts.seconds);
const LATENCY_MS = Number(opts.latency);
const CONCURRENCY = Number(opts.concurrency);
const MAX_WAIT_S = Number(opts['max-wait']);

// The receivers: one HTTP server per endpoint number, the organization in the path. Each counts what
// arrives (once per event id and path: a repeat is not a second delivery) and the arrivals out of order.
const receiverCode = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const seen = new Set();
const newest = new Map();
let received = 0, repeats = 0, outOfOrder = 0;
const servers = [];
let ready = 0;
for (let e = 0; e < workerData.endpoints; e++) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        const id = req.headers['webhook-id'];
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const path = e + req.url;
        const key = path + ' ' + id;
        if (seen.has(key)) repeats++;
        else {
          seen.add(key);
          received++;
          // The events' order: created_at, then the id (a UUIDv7, in creation order within one process).
          const order = event.created_at + ' ' + id;
          const last = newest.get(path);
          if (last !== undefined && order < last) outOfOrder++;
          else newest.set(path, order);
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }, workerData.latencyMs);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    servers[e] = server.address().port;
    if (++ready === workerData.endpoints) parentPort.postMessage({ ports: servers });
  });
}
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ received, repeats, outOfOrder });
  else if (m === 'close') process.exit(0);
});
`;

const receiver = new Worker(receiverCode, { eval: true, workerData: { endpoints: ENDPOINTS, latencyMs: LATENCY_MS } });
const ports = await new Promise<number[]>((resolve) => receiver.once('message', (m: { ports: number[] }) => resolve(m.ports)));
const counts = () =>
  new Promise<{ received: number; repeats: number; outOfOrder: number }>((resolve) => {
    receiver.once('message', resolve);
    receiver.postMessage('count');
  });

const scratch = process.env.DATABASE_URL ? await scratchDatabase(process.env.DATABASE_URL, 'hooks_bench') : null;
const db = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir: 'memory://' });
await migrate(db);
const config = loadConfig({
  LOG_LEVEL: 'silent',
  WEBHOOK_ALLOW_PRIVATE: '1',
  ASSENT_SECRET_KEY: BENCH_SECRET_KEY,
  RATE_LIMIT_PER_KEY: '100000000',
  RATE_LIMIT_PER_ADDRESS: '100000000',
});
const app = await buildApp({ config, db, logger: false });
await app.ready();

const orgs: { host: string; key: string }[] = [];
for (let o = 0; o < ORGS; o++) {
  const slug = `hooks${o}x${Date.now().toString(36)}`;
  await app.services.accounts.createOrganization({ slug, name: `Bench ${o}` });
  const admin = (await app.services.accounts.createApiKey(slug, { scopes: ['admin'] })).key;
  const host = `${slug}.${config.baseDomain}`;
  for (let e = 0; e < ENDPOINTS; e++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { host, 'x-api-key': admin },
      payload: { url: `http://127.0.0.1:${ports[e]}/org-${o}`, events: ['grievance.created'] },
    });
    if (res.statusCode !== 201) throw new Error(`endpoint: ${res.statusCode} ${res.body}`);
  }
  orgs.push({ host, key: admin });
}

const WORKER_AFTER = opts['worker-after'];
if (!WORKER_AFTER) app.webhooks.start();
let writes = 0;
let failedWrites = 0;
const started = performance.now();
const burstEnds = started + SECONDS * 1000;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async (_, lane) => {
    for (let i = lane; performance.now() < burstEnds; i += CONCURRENCY) {
      const org = orgs[i % orgs.length]!;
      const res = await app.inject({
        method: 'POST',
        url: '/grievance',
        headers: { host: org.host, 'x-api-key': org.key, 'content-type': 'application/json' },
        payload: JSON.stringify({ client_user_id: `user-${i % 500}`, subject: `Request ${i}`, description: 'Please send me a copy of my data.', category: 'data_access' }),
      });
      if (res.statusCode === 201) writes++;
      else failedWrites++;
    }
  }),
);
const burstMs = performance.now() - started;
const atBurstEnd = (await counts()).received;
const cpuAtWorkerStart = process.cpuUsage();
if (WORKER_AFTER) app.webhooks.start();
const expected = writes * ENDPOINTS;
let last = await counts();
while (last.received < expected && performance.now() - started < MAX_WAIT_S * 1000) {
  await new Promise((r) => setTimeout(r, 25));
  last = await counts();
}
const totalMs = performance.now() - started;
const cpu = process.cpuUsage(cpuAtWorkerStart);
await app.webhooks.stop();

const s = (ms: number) => (ms / 1000).toFixed(1);
console.log(
  `${db.kind}, ${ORGS} organizations x ${ENDPOINTS} endpoints, receivers answering after ${LATENCY_MS} ms, ${CONCURRENCY} writers for ${SECONDS} s:\n` +
    `  writes: ${writes} in ${s(burstMs)} s = ${(writes / (burstMs / 1000)).toFixed(0)} writes/s${failedWrites ? ` (${failedWrites} failed)` : ''}\n` +
    `  deliveries: ${last.received} of ${expected}${last.received < expected ? ' (GAVE UP WAITING)' : ''}; ${atBurstEnd} arrived during the burst; ` +
    `all in ${s(totalMs)} s = ${(last.received / (totalMs / 1000)).toFixed(0)} deliveries/s (${(last.received / ENDPOINTS / (totalMs / 1000)).toFixed(0)} events/s to all 3); ` +
    (WORKER_AFTER
      ? `the worker alone: ${((last.received / (totalMs - burstMs)) * 1000).toFixed(0)} deliveries/s, ` +
        `${((cpu.user + cpu.system) / last.received).toFixed(0)} µs of this process's CPU each (receivers included); `
      : '') +
    `drained ${s(totalMs - burstMs)} s after the burst\n` +
    `  repeats: ${last.repeats}; arrivals older than one the endpoint already had: ${last.outOfOrder}`,
);

await app.close();
await db.close?.();
await receiver.terminate();
await scratch?.drop();
