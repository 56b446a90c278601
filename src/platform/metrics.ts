// Prometheus metrics (prom-client) on a port of their own (METRICS_PORT; off by default): requests by
// route pattern, status and duration; database use by pool; outbox depth and oldest age; webhook
// deliveries when that table exists; the process's own metrics (event-loop lag, memory, GC). Labels
// never carry personal data or an organization's slug, unless METRICS_PER_ORG=1 adds `org`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database, Queryable } from './db/types.js';

export interface MetricsOptions {
  /** The store the gauges read at scrape time (outbox, webhook deliveries), uninstrumented. */
  db: Database;
  /** METRICS_PER_ORG: add the organization's slug as a label to the request metrics. */
  perOrg: boolean;
  /** Connections per pool, for the pool-size gauge. */
  poolSizes: Record<string, number>;
}

export interface Metrics {
  readonly registry: Registry;
  /** Adds the request metrics' hook to the app. */
  instrumentApp(app: FastifyInstance): void;
  /** The same store, counting operations in flight and their time per pool. */
  instrumentDatabase(db: Database): Database;
  /** Serves GET /metrics on the port (0: any free port); resolves to the port. */
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics({ db, perOrg, poolSizes }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requestLabels = perOrg ? (['method', 'route', 'status', 'org'] as const) : (['method', 'route', 'status'] as const);
  const requests = new Counter({
    name: 'assent_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: requestLabels,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'assent_http_request_duration_seconds',
    help: 'Time from receiving a request to answering it, by method, route pattern and status',
    labelNames: requestLabels,
    buckets: SECONDS,
    registers: [registry],
  });
  const dbInFlight = new Gauge({
    name: 'assent_db_operations_in_flight',
    help: 'Database operations (statements or transactions) started and not finished, by pool',
    labelNames: ['pool'],
    registers: [registry],
  });
  const dbSeconds = new Histogram({
    name: 'assent_db_operation_duration_seconds',
    help: 'Time of database operations, queueing for a connection included, by pool',
    labelNames: ['pool'],
    buckets: SECONDS,
    registers: [registry],
  });
  const poolSize = new Gauge({
    name: 'assent_db_pool_connections',
    help: 'Connections each pool may open',
    labelNames: ['pool'],
    registers: [registry],
  });
  for (const [pool, size] of Object.entries(poolSizes)) poolSize.set({ pool }, size);

  // Read at scrape time, from the database: the same figures whichever process is scraped.
  new Gauge({
    name: 'assent_outbox_queued_messages',
    help: 'Outbound messages (SMS, email) waiting to be delivered, all organizations',
    registers: [registry],
    async collect() {
      const [row] = await db.system.query<{ n: number }>("select count(*)::int as n from outbound_messages where status = 'queued'");
      this.set(row?.n ?? 0);
    },
  });
  new Gauge({
    name: 'assent_outbox_oldest_queued_age_seconds',
    help: 'Age of the oldest outbound message still waiting (0 when none)',
    registers: [registry],
    async collect() {
      const [row] = await db.system.query<{ age: number | null }>(
        "select extract(epoch from now() - min(created_at))::float8 as age from outbound_messages where status = 'queued'",
      );
      this.set(Math.max(0, row?.age ?? 0));
    },
  });
  new Gauge({
    name: 'assent_outbox_failed_messages',
    help: 'Outbound messages given up after their last attempt, all organizations',
    registers: [registry],
    async collect() {
      const [row] = await db.system.query<{ n: number }>("select count(*)::int as n from outbound_messages where status = 'failed'");
      this.set(row?.n ?? 0);
    },
  });
  registerWebhookGauges(registry, db.system);

  let server: http.Server | null = null;

  return {
    registry,
    instrumentApp(app) {
      app.addHook('onResponse', async (request, reply) => {
        const labels: Record<string, string> = {
          method: request.method,
          // The pattern (/grievance/:ticket_id), never the URL: ids and slugs stay out of the labels.
          route: request.routeOptions.url ?? 'unmatched',
          status: String(reply.statusCode),
        };
        if (perOrg) labels.org = request.tenant?.slug ?? '';
        requests.inc(labels);
        duration.observe(labels, reply.elapsedTime / 1000);
      });
    },
    instrumentDatabase(inner) {
      const timed = async <T>(pool: string, run: () => Promise<T>): Promise<T> => {
        dbInFlight.inc({ pool });
        const end = dbSeconds.startTimer({ pool });
        try {
          return await run();
        } finally {
          end();
          dbInFlight.dec({ pool });
        }
      };
      return {
        ...inner,
        kind: inner.kind,
        system: {
          query: (text, params) => timed('system', () => inner.system.query(text, params)),
          transaction: (fn) => timed('system', () => inner.system.transaction(fn)),
          exec: (script) => timed('system', () => inner.system.exec(script)),
        },
        tenantTransaction: (orgId, fn) => timed('tenant', () => inner.tenantTransaction(orgId, fn)),
        tenantQuery: (orgId, text, params) => timed('read', () => inner.tenantQuery(orgId, text, params)),
        close: () => inner.close(),
        ...(inner.listen ? { listen: inner.listen.bind(inner) } : {}),
      } as Database;
    },
    async listen(port, host) {
      server = http.createServer((req, res) => {
        if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at GET /metrics\n');
          return;
        }
        registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
          (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
        );
      });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, host, () => resolve());
      });
      return (server.address() as AddressInfo).port;
    },
    async close() {
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = null;
    },
  };
}

/**
 * Webhook delivery lag and failures, read from the `webhook_deliveries` table when a migration has
 * made one (its columns as the webhooks feature defines them: status, created_at). Without the table
 * the gauges are absent.
 */
function registerWebhookGauges(registry: Registry, db: Queryable): void {
  const exists = async () =>
    (await db.query<{ ok: boolean }>("select to_regclass('webhook_deliveries') is not null as ok"))[0]?.ok === true;
  // A gauge that cannot be read is left out of this scrape rather than failing the others.
  const read = async (query: string): Promise<number | null> => {
    try {
      if (!(await exists())) return null;
      const [row] = await db.query<{ v: number | null }>(query);
      return Math.max(0, row?.v ?? 0);
    } catch {
      return null;
    }
  };
  new Gauge({
    name: 'assent_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet delivered nor given up, all organizations',
    registers: [registry],
    async collect() {
      const v = await read("select count(*)::float8 as v from webhook_deliveries where status = 'pending'");
      if (v !== null) this.set(v);
    },
  });
  new Gauge({
    name: 'assent_webhook_delivery_lag_seconds',
    help: 'Age of the oldest webhook delivery still pending (0 when none)',
    registers: [registry],
    async collect() {
      const v = await read("select extract(epoch from now() - min(created_at))::float8 as v from webhook_deliveries where status = 'pending'");
      if (v !== null) this.set(v);
    },
  });
  new Gauge({
    name: 'assent_webhook_deliveries_failed',
    help: 'Webhook deliveries given up, all organizations',
    registers: [registry],
    async collect() {
      const v = await read("select count(*)::float8 as v from webhook_deliveries where status = 'failed'");
      if (v !== null) this.set(v);
    },
  });
}
