// Metrics (issue 19 item 3): a real `assent serve` with METRICS_PORT, scraped over HTTP. Requests are
// counted by route pattern, status and duration; database pools, outbox depth and age, event-loop lag
// are there; no slug and no id of the caller's data appears in any label unless METRICS_PER_ORG=1.
import http from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { cliJson, createCliStore, freePort, killServers, request, startServer, uniqueSlug, type CliStore } from './child.js';

vi.setConfig({ testTimeout: 120_000 });

let store: CliStore;
let t: { slug: string; key: string };

beforeAll(async () => {
  store = await createCliStore();
  // Before any server holds the embedded store's data directory.
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], store.env);
  const key = await cliJson(['key', 'create', slug, '--scopes', 'admin'], store.env);
  t = { slug, key: key.key };
}, 180_000);
afterAll(async () => {
  await killServers();
  await store?.drop();
});

function scrape(port: number, path = '/metrics', host = '127.0.0.1'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host, port, path }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
      .on('error', reject);
  });
}

/** The value of one sample line, e.g. sample(text, 'x_total{a="b"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('METRICS_PORT must be a port number; metrics are off by default and per-organization labels too', () => {
  expect(loadConfig({}).metricsPort).toBeNull();
  expect(loadConfig({}).metricsHost).toBe('127.0.0.1');
  expect(loadConfig({ METRICS_HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0');
  expect(() => loadConfig({ METRICS_HOST: 'http://x' })).toThrow('METRICS_HOST must be an address to listen on');
  expect(loadConfig({}).metricsPerOrg).toBe(false);
  expect(loadConfig({ METRICS_PORT: '9464', METRICS_PER_ORG: '1' })).toMatchObject({ metricsPort: 9464, metricsPerOrg: true });
  expect(() => loadConfig({ METRICS_PORT: 'abc' })).toThrow(ConfigError);
  expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow('METRICS_PORT must be an integer between 0 and 65535, got "70000"');
});

test('GET /metrics on METRICS_PORT: requests by route pattern and status, pools, outbox, event loop; no slug or id in labels', async () => {
  const metricsPort = await freePort();
  const server = await startServer({ ...store.env, METRICS_PORT: String(metricsPort) }, 60_000);
  const host = `${t.slug}.localhost:${server.port}`;
  const secretUser = `person-${uniqueSlug()}`;
  for (let i = 0; i < 3; i++) {
    expect((await request(server.port, { method: 'GET', path: `/grievance/user/${secretUser}`, host, key: t.key })).status).toBe(200);
  }
  expect((await request(server.port, { method: 'GET', path: `/grievance/user/${secretUser}`, host, key: 'ask_live_wrong' })).status).toBe(401);
  expect((await request(server.port, { method: 'GET', path: `/no/such/${secretUser}`, host, key: t.key })).status).toBe(404);

  const res = await scrape(metricsPort);
  expect(res.status).toBe(200);
  expect(res.type).toContain('text/plain');
  const text = res.body;
  expect(sample(text, 'assent_http_requests_total{method="GET",route="/grievance/user/:user_id",status="200"}')).toBe(3);
  expect(sample(text, 'assent_http_requests_total{method="GET",route="/grievance/user/:user_id",status="401"}')).toBe(1);
  expect(sample(text, 'assent_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  expect(sample(text, 'assent_http_request_duration_seconds_count{method="GET",route="/grievance/user/:user_id",status="200"}')).toBe(3);
  expect(sample(text, 'assent_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/grievance/user/:user_id",status="200"}')).toBe(3);
  expect(sample(text, 'assent_db_pool_connections{pool="system"}')).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'assent_db_operations_in_flight{pool="system"}')).toBe(0);
  expect(sample(text, 'assent_db_operation_duration_seconds_count{pool="system"}')).toBeGreaterThan(0);
  expect(sample(text, 'assent_outbox_queued_messages')).toBe(0);
  expect(sample(text, 'assent_outbox_oldest_queued_age_seconds')).toBe(0);
  expect(sample(text, 'assent_outbox_failed_messages')).toBe(0);
  expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  expect(text).toContain('process_resident_memory_bytes');
  // Nothing of the callers' data: no slug, no path value, no key.
  expect(text).not.toContain(t.slug);
  expect(text).not.toContain(secretUser);
  expect(text).not.toContain('ask_live');
  expect(text).not.toContain('org=');

  expect((await scrape(metricsPort, '/other')).status).toBe(404);
  // The API port does not serve them.
  expect((await request(server.port, { method: 'GET', path: '/metrics', host: `localhost:${server.port}` })).status).toBe(404);
  expect(await server.stop()).toBe(0);
});

test('METRICS_PER_ORG=1 adds the organization slug as a label; without METRICS_PORT nothing listens', async () => {
  const metricsPort = await freePort();
  const server = await startServer({ ...store.env, METRICS_PORT: String(metricsPort), METRICS_PER_ORG: '1' }, 60_000);
  const host = `${t.slug}.localhost:${server.port}`;
  expect((await request(server.port, { method: 'GET', path: '/grievance/user/u1', host, key: t.key })).status).toBe(200);
  const text = (await scrape(metricsPort)).body;
  expect(sample(text, `assent_http_requests_total{method="GET",route="/grievance/user/:user_id",status="200",org="${t.slug}"}`)).toBe(1);
  expect(await server.stop()).toBe(0);

  const plain = await startServer({ ...store.env }, 60_000);
  expect(plain.logs.some((l) => String(l.msg).includes('Prometheus metrics'))).toBe(false);
  await expect(scrape(metricsPort)).rejects.toThrow(/ECONNREFUSED/);
  expect(await plain.stop()).toBe(0);
});

// This machine's first address that is not loopback (the API on HOST=0.0.0.0 answers there), if it has one.
const outside = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

test.runIf(outside !== undefined)('metrics listen on 127.0.0.1 by default even when the API listens on every address; METRICS_HOST opens them', async () => {
  const metricsPort = await freePort();
  const server = await startServer({ ...store.env, HOST: '0.0.0.0', METRICS_PORT: String(metricsPort) }, 60_000);
  expect(server.logs.some((l) => String(l.msg) === `Prometheus metrics at http://127.0.0.1:${metricsPort}/metrics`)).toBe(true);
  expect((await scrape(metricsPort)).status).toBe(200);
  // The API is reachable from outside; the metrics are not.
  expect((await scrape(server.port, '/health', outside)).status).toBe(200);
  await expect(scrape(metricsPort, '/metrics', outside)).rejects.toThrow(/ECONNREFUSED/);
  expect(await server.stop()).toBe(0);

  const open = await startServer({ ...store.env, METRICS_PORT: String(metricsPort), METRICS_HOST: '0.0.0.0' }, 60_000);
  expect((await scrape(metricsPort, '/metrics', outside)).status).toBe(200);
  expect(await open.stop()).toBe(0);
});
