// Process entry for the server: loadConfig -> open store (migrates) -> buildApp -> listen; on SIGTERM or
// SIGINT stop accepting, finish in-flight requests, flush key usage, close the store (PGlite must be
// closed cleanly), release the data directory. On the embedded store it also listens on the control
// socket (DATA_DIR/assent.sock, src/cli/control-socket.ts): the `assent` command hands its commands to
// this process while it holds the data directory, and `assent stop` stops it.
import { buildApp } from './app.js';
import { ConfigError, type Config } from './config.js';
import { openStore } from './platform/db/store.js';
import { autovacuumProblem } from './platform/db/maintenance.js';
import { tuneHeap } from './platform/heap.js';
import { POOL_SIZE, READ_LANES } from './platform/db/open.js';
import { createMetrics } from './platform/metrics.js';
import { MissingSecretKeyError, resolveSecretKey } from './platform/crypto/secret-key.js';
import { sealedKeyProblem } from './platform/crypto/secret-rotation.js';
import { listenControl, type ControlServer } from './cli/control-socket.js';
import { assertPortFree } from './platform/http/port-check.js';
import { messageProviderProblem } from './platform/messaging/index.js';

export async function serve(config: Config): Promise<void> {
  // Before the store is opened (nothing to undo): on the embedded store opening creates DATA_DIR,
  // migrates it and (below) a secret key.
  const messages = messageProviderProblem(config);
  if (messages) throw new ConfigError(messages);
  await assertPortFree(config.port, config.host);
  tuneHeap(config);
  const store = await openStore(config, 'server');
  // ASSENT_SECRET_KEY seals the receipt signing keys: required on PostgreSQL; on the embedded store a
  // development key is kept in DATA_DIR/secret.key (warned about below).
  let secret;
  try {
    secret = resolveSecretKey(config);
    if (!secret) throw new MissingSecretKeyError();
    // A secret that does not open the keys would fail every consent with a 500: refuse to start instead.
    const problem = await sealedKeyProblem(store.db, secret.secret);
    if (problem) throw new ConfigError(problem);
  } catch (e) {
    await store.close();
    throw e;
  }
  // Off unless METRICS_PORT is set: then the store is counted (operations in flight per pool) too.
  const metrics =
    config.metricsPort === null
      ? null
      : createMetrics({
          db: store.db,
          perOrg: config.metricsPerOrg,
          poolSizes: config.databaseUrl ? { system: POOL_SIZE, tenant: POOL_SIZE, read: READ_LANES } : { system: 1, tenant: 1, read: 1 },
        });
  let app;
  let control: ControlServer | null = null;
  try {
    app = await buildApp({ config, db: metrics ? metrics.instrumentDatabase(store.db) : store.db, metrics: metrics ?? undefined, signingSecret: secret.secret });
    if (secret.source === 'data_dir') {
      app.log.warn(
        { secret_key_file: secret.path, created: secret.created === true },
        'ASSENT_SECRET_KEY is not set: the signing keys are sealed with a development key kept in the data directory. Set ASSENT_SECRET_KEY (assent secret generate) for production; see docs/operations.md',
      );
    }
    // A PostgreSQL that never analyzes its tables slows down as they grow (src/platform/db/maintenance.ts).
    const upkeep = await autovacuumProblem(store.db);
    if (upkeep) app.log.warn({ setting: 'autovacuum' }, upkeep);
    // Organizations older than their signing key (created before migration 0018) get one now.
    const made = await app.services.accounts.ensureSigningKeys();
    if (made > 0) app.log.info({ organizations: made }, 'created receipt signing keys for existing organizations');
    await app.listen({ port: config.port, host: config.host });
    if (metrics) {
      const port = await metrics.listen(config.metricsPort!, config.metricsHost);
      app.log.info({ metrics_port: port, metrics_host: config.metricsHost }, `Prometheus metrics at http://${config.metricsHost}:${port}/metrics`);
    }
    // Stopped by app.close() (an onClose hook), before the store is closed.
    app.outbox.start();
    app.grievanceReminders.start();
    app.grievanceOverdue.start();
    app.webhooks.start();
    app.sequencer.start();
    app.idempotencyPurge.start();
    app.receiptBackfill.start();
    app.packageErasure.start();
    if (!config.databaseUrl) {
      const served = app;
      control = await listenControl({
        dataDir: config.dataDir,
        context: () => ({ db: store.db, accounts: served.services.accounts, users: served.services.users, config, migration: store.migration, receipts: () => served.services.receipts, sequencer: () => served.sequencer }),
        onStop: () => void stop('assent stop'),
        log: app.log,
      });
    }
  } catch (e) {
    await control?.close().catch(() => {});
    await app?.close().catch(() => {});
    await metrics?.close();
    await store.close();
    throw e;
  }
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  app.log.info(
    { store: where, migrations: store.migration.applied, ...(control ? { control_socket: control.path } : {}) },
    `Assent listening: organizations (API and dashboard) at ${config.publicUrl.protocol}//<slug>.${config.publicUrl.host}/, API reference at ${config.publicUrl.origin}/docs`,
  );

  let stopping = false;
  const stop = async (signal: NodeJS.Signals | 'assent stop') => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took over 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    // Connections kept alive (a load balancer's, a client pool's) that go idle once their request in
    // flight is answered are closed as they do: Node closes only those idle when the close starts, and
    // the rest would hold the close until the 10 s limit (the store then not closed cleanly).
    const idle = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await control?.close();
      await app.close();
      clearInterval(idle);
      await metrics?.close();
      await store.close();
      app.log.info('stopped cleanly');
      process.exitCode = 0;
    } catch (err) {
      clearInterval(idle);
      app.log.error({ err }, 'shutdown failed');
      process.exitCode = 1;
    }
  };
  process.once('SIGTERM', (s) => void stop(s));
  process.once('SIGINT', (s) => void stop(s));
}
