// buildApp: the one composition root. Platform plugins first, then each feature's routes, wired by hand.
import { createReminderScheduler } from './features/grievances/reminders.js';
import { createOverdueScheduler } from './features/grievances/overdue.js';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './platform/db/types.js';
import { systemClock, type Clock } from './platform/clock.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './platform/http/error-handler.js';
import { installValidation } from './platform/http/validation.js';
import { installRequestId, requestIdFrom } from './platform/http/request-id.js';
import { installOpenApi } from './platform/http/openapi.js';
import { createOriginPolicy, installCors, isCorsPath } from './platform/http/cors.js';
import { installHealth } from './platform/http/health.js';
import { counts as rateLimited, installRateLimits } from './platform/http/rate-limits.js';
import { createIdempotencyPurge, idempotencyAwareDatabase, installIdempotency, type IdempotencyPurge } from './platform/http/idempotency.js';
import { installAccessControl, type RouteAccessEntry } from './platform/auth/access.js';
import { createOrganizationDirectory } from './platform/auth/tenant-host.js';
import { createApiKeyVerifier } from './platform/auth/api-key-verifier.js';
import { createBearerVerifier } from './platform/auth/bearer-verifier.js';
import { followAuthChanges } from './platform/auth/auth-changes.js';
import { createDpTokenVerifier } from './platform/auth/dp-token-verifier.js';
import { createMemoryCounter, createRedisCounter, type WindowCounter } from './platform/rate-limit.js';
import {
  authRoutes,
  browserSessionRoutes,
  createAccountsService,
  createMemberService,
  createSessionService,
  createUserService,
  ADDRESS_BACKOFF_MS,
  LOGIN_WINDOW_MS,
  memberRoutes,
  organizationRoutes,
  type SessionService,
  type UserService,
} from './features/accounts/index.js';
import { registerGrievances } from './features/grievances/index.js';
import { registerNominees } from './features/nominees/index.js';
import { registerFulfilment, type FulfilmentService } from './features/fulfilment/index.js';
import { registerCollectionPoints } from './features/collection-points/index.js';
import { registerConsentLinks, type ConsentLinkService } from './features/consent-links/index.js';
import { registerConsents } from './features/consents/index.js';
import { createReceiptBackfillJob, registerReceipts, type ReceiptService } from './features/receipts/index.js';
import { createIntervalJob, type IntervalJob } from './platform/jobs.js';
import { createSigningKeyring, deriveKey } from './platform/crypto/signing-keys.js';
import { generateSecretKey } from './platform/crypto/secret-key.js';
import { registerAudit } from './features/audit/index.js';
import { registerExport } from './features/export/index.js';
import { checkpointHooks, createSequencer, registerTransparency, type Sequencer } from './features/transparency/index.js';
import { registerConsentPage } from './features/consent-page/index.js';
import { registerDashboard } from './features/dashboard/index.js';
import { registerRightsCenter } from './features/rights-center/index.js';
import type { Metrics } from './platform/metrics.js';
import { registerDataPrincipals, type DataPrincipalService } from './features/data-principals/index.js';
import { registerSdkSurface } from './features/sdk-surface/index.js';
import { createOutboxWorker, providerFromConfig, type MessageProvider, type OutboxWorker } from './platform/messaging/index.js';
import { registerWebhooks } from './features/webhooks/index.js';
import { createWebhookWorker, type WebhookWorker } from './platform/webhooks/worker.js';
import { secretBox } from './platform/webhooks/secrets.js';
import type { AddressPolicy } from './platform/webhooks/address-guard.js';

export interface AppDeps {
  config: Config;
  db: Database;
  clock?: Clock;
  /** false silences request logs (tests). */
  logger?: boolean;
  /** Where the log goes (default: standard output); the fuzzing suite reads it back. */
  logStream?: { write(line: string): void };
  /** Delivers outbound SMS and email; default: the one MESSAGE_PROVIDER names. */
  messageProvider?: MessageProvider;
  /** The built dashboard (default: web/dist of this checkout). */
  webDir?: string;
  /** Prometheus metrics (METRICS_PORT): the app adds its request metrics to them. */
  metrics?: Metrics;
  /** The secret that seals signing keys, when not ASSENT_SECRET_KEY (the embedded store's DATA_DIR/secret.key). */
  signingSecret?: string;
}

export const BODY_LIMIT_BYTES = 256 * 1024;
export const MAX_PARAM_LENGTH = 255 * 12;
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  // Inside an idempotent request, the services' tenant work joins the request's transaction.
  const db = idempotencyAwareDatabase(deps.db);
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    logger:
      deps.logger === false
        ? false
        : {
            level: config.logLevel,
            redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
            // The route's pattern, never the path or query as sent: they carry user ids, emails, phones.
            serializers: {
              req: (req: { method: string; routeOptions?: { url?: string }; hostname?: string; ip?: string; id?: string }) => ({
                method: req.method,
                route: req.routeOptions?.url ?? '(no route)',
                host: req.hostname,
                remoteAddress: req.ip,
              }),
            },
            ...(deps.logStream ? { stream: deps.logStream } : {}),
          },
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustedProxies),
    genReqId: requestIdFrom,
    requestIdHeader: false,
    return503OnClosing: true,
    // Plugins (swagger-ui reads its files) may take more than avvio's 10 s default on a loaded machine; a
    // slow start is better than none (seen: the bench's server failed to start at a load average of 20).
    pluginTimeout: 60_000,
    // Slow clients (issue 21, class 11): a request's headers must arrive within HTTP_HEADERS_TIMEOUT_MS and
    // the whole request within HTTP_REQUEST_TIMEOUT_MS (checked every second, not Node's default 30 s);
    // an idle keep-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS. The connection cap is set on
    // the server below.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    // Ids are up to 255 characters (contract §4): room for all of them percent-encoded (up to 12 bytes each).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    // Node's parser's refusals (431, a malformed request: 400, 408): the contract's body and headers, Connection: close.
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: false } },
  });

  // HTTP_MAX_CONNECTIONS: past it, new connections are closed at once (the process keeps its file
  // descriptors and memory for the connections it serves).
  app.server.maxConnections = config.maxConnections;

  // Only JSON bodies: Fastify's default text/plain parser would let a non-JSON body through to validation.
  app.removeContentTypeParser('text/plain');
  // A GET or DELETE announcing JSON but sending nothing (Content-Length: 0) is a request without a body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && BODYLESS_METHODS.has(request.method)) return done(null, undefined);
    return parseJson(request, body as string, done);
  });

  installErrorHandling(app);
  // Answers carry personal data: never stored by a cache, never sniffed into another type. A route that
  // chooses its own caching (the dashboard's fingerprinted files) keeps it.
  // Hooks that run on every request and rarely wait are written in Fastify's callback style: an async
  // hook costs a promise and a turn of the microtask queue even when it has nothing to wait for (issue
  // 31; docs/performance.md, "The afternoon of 2026-11-29").
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    if (!reply.hasHeader('x-content-type-options')) reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
  installValidation(app);
  installRequestId(app);
  deps.metrics?.instrumentApp(app);
  await installOpenApi(app, { publicUrl: config.publicUrl, rateLimited, cors: (route) => isCorsPath(route.url) });

  const organizations = createOrganizationDirectory(db, clock);
  const apiKeys = createApiKeyVerifier(db, clock);
  const bearer = createBearerVerifier(db, clock);
  // Other processes' revocations (PostgreSQL LISTEN/NOTIFY); this process's own also call the caches below.
  const authChanges = await followAuthChanges({ db, apiKeys, bearer, log: app.log });
  if (authChanges) app.addHook('onClose', () => authChanges.close());
  const dpTokens = createDpTokenVerifier(db, clock);
  const counter = (prefix: string, windowMs = LOGIN_WINDOW_MS): WindowCounter =>
    config.redisUrl
      ? createRedisCounter({ url: config.redisUrl, windowMs, prefix: `${config.redisKeyPrefix}${prefix}:` })
      : createMemoryCounter({ windowMs, clock });
  // Keyed by a hash of the email with the address (loginPairKey): no email in plain text in Redis.
  const failuresByEmail = counter('login-pair');
  const failuresByAddress = counter('login-address');
  const failuresByAddressDaily = counter('login-address-day', ADDRESS_BACKOFF_MS);
  app.addHook('onClose', async () => {
    await Promise.all([apiKeys.close(), failuresByEmail.close(), failuresByAddress.close(), failuresByAddressDaily.close()]);
  });
  // Per address before the credentials are checked (so a flood of wrong keys is counted), per key after.
  const rateLimits = installRateLimits(app, {
    db,
    clock,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisKeyPrefix,
    perKey: config.rateLimitPerKey,
    perAddress: config.rateLimitPerAddress,
    windowSeconds: config.rateLimitWindowSeconds,
    log: app.log,
  });
  app.addHook('onClose', () => rateLimits.limits.close());
  // A nominee's token is checked against the nominees service's rule on every request (the service is
  // registered below; the hook runs only once requests arrive).
  const routeAccess = installAccessControl(app, {
    baseDomain: config.baseDomain,
    trustProxy: config.trustProxy,
    organizations,
    apiKeys,
    bearer,
    dpTokens,
    nomineeActing: (orgId, nomineeId, dpId) => nominees.checkActing(orgId, nomineeId, dpId),
  });
  rateLimits.afterAccess();
  const origins = createOriginPolicy(db, clock);
  installCors(app, { policy: origins, organizations, baseDomain: config.baseDomain, trustProxy: config.trustProxy, routes: app.routeIndex });
  installIdempotency(app, { db: deps.db, clock });
  // Started by main.ts (tests call runOnce); stopped with the app.
  const idempotencyPurge = createIdempotencyPurge(deps.db, clock, app.log);
  app.addHook('onClose', () => idempotencyPurge.stop());
  app.decorate('idempotencyPurge', idempotencyPurge);

  installHealth(app, db, { tenantRole: config.rls });
  // The organizations' receipt signing keys, sealed with ASSENT_SECRET_KEY (serve() resolves it; see
  // src/platform/crypto/secret-key.ts). Without one (tests, tools that build an app), a secret for this
  // app alone: keys it creates cannot be opened by another process.
  const sealingSecret = deps.signingSecret ?? config.secretKey ?? generateSecretKey();
  const signingKeyring = createSigningKeyring(sealingSecret);
  const accounts = createAccountsService({ db, clock, onKeyRevoked: (id) => apiKeys.invalidate(id), keyring: signingKeyring });
  const users = createUserService({
    db,
    clock,
    onUserChanged: (id) => bearer.forgetUser(id),
    onMembershipChanged: (orgId, userId) => bearer.forgetMembership(orgId, userId),
  });
  const sessions = createSessionService({ db, clock, failuresByEmail, failuresByAddress, failuresByAddressDaily, maxFailuresPerAddressPerDay: config.loginAddressDailyLimit, onSessionEnded: (id) => bearer.forgetSession(id) });
  authRoutes(app, sessions);
  browserSessionRoutes(app, {
    sessions,
    roleIn: (orgId, userId) => bearer.roleIn(orgId, userId),
    organizations,
    baseDomain: config.baseDomain,
    trustProxy: config.trustProxy,
    secureCookie: config.publicUrl.protocol === 'https:',
  });
  organizationRoutes(app, accounts, {
    onChanged: (orgId) => {
      rateLimits.limits.forgetOrganization(orgId);
      origins.forget(orgId);
    },
    defaultRateLimit: config.rateLimitPerKey,
  });
  memberRoutes(app, createMemberService({ db, clock, users, onMembershipChanged: (orgId, userId) => bearer.forgetMembership(orgId, userId) }));
  // Fulfilment and tickets call each other inside one transaction: a filed request creates its tasks,
  // and the tasks move the ticket's status.
  const fulfilment = registerFulfilment(app, {
    db,
    clock,
    tickets: () => grievances,
    signer: () => receipts.signer,
    sealingKey: deriveKey(sealingSecret),
    partMaxBytes: config.fulfilmentPartMaxBytes,
  });
  const grievances = registerGrievances(app, { db, clock, publicUrl: config.publicUrl, onFiled: (tx, ctx, ticket, at) => fulfilment.startForTicket(tx, ctx, ticket, at) });
  const nominees = registerNominees(app, { db, clock, defaultCountryCode: config.defaultCountryCode });
  const collectionPoints = registerCollectionPoints(app, { db, clock });
  const consentLinks = registerConsentLinks(app, { db, clock, publicUrl: config.publicUrl, defaultCountryCode: config.defaultCountryCode });
  const receipts = registerReceipts(app, { db, clock, keyring: signingKeyring, publicUrl: config.publicUrl, organizations, baseDomain: config.baseDomain, trustProxy: config.trustProxy });
  const consents = registerConsents(app, { db, clock, receipts: receipts.signer, publicUrl: config.publicUrl, onWithdrawn: (tx, ctx, w, at) => fulfilment.startForWithdrawal(tx, ctx, w, at) });
  // Started by main.ts: late receipts for records written before receipts existed (at start, then hourly).
  const receiptBackfill = createReceiptBackfillJob(receipts, app.log);
  app.addHook('onClose', () => receiptBackfill.stop());
  app.decorate('receiptBackfill', receiptBackfill);
  // Started by main.ts: the content of access packages past their 14 days is erased (hourly, and at start).
  const packageErasure = createIntervalJob({
    name: 'access package erasure',
    run: async () => {
      // One organization's failure is logged and retried next hour; the others were erased all the same.
      const run = await fulfilment.eraseExpiredPackages();
      for (const f of run.failed) app.log.error({ err: f.error, org_id: f.org_id }, 'access package erasure failed for an organization');
    },
    intervalMs: 3_600_000,
    log: app.log,
    runAtStart: true,
  });
  app.addHook('onClose', () => packageErasure.stop());
  app.decorate('packageErasure', packageErasure);
  const dataPrincipals = registerDataPrincipals(app, {
    db,
    clock,
    nominees,
    defaultCountryCode: config.defaultCountryCode,
    publicUrl: config.publicUrl,
    organizations,
    baseDomain: config.baseDomain,
    trustProxy: config.trustProxy,
  });
  registerSdkSurface(app, { db, clock, collectionPoints, consents, dataPrincipals, grievances, nominees });
  await registerConsentPage(app, {
    db,
    clock,
    consents,
    contactPerson: (orgId) => dataPrincipals.contactPersonOrNull(orgId),
    organizations,
    baseDomain: config.baseDomain,
    trustProxy: config.trustProxy,
    secureCookie: config.publicUrl.protocol === 'https:',
  });
  await registerRightsCenter(app, {
    consents,
    dataPrincipals,
    grievances,
    nominees,
    fulfilment,
    organizations,
    baseDomain: config.baseDomain,
    trustProxy: config.trustProxy,
    secureCookie: config.publicUrl.protocol === 'https:',
  });
  // Started by main.ts after listen (tests call runOnce); stopped before the store closes.
  const outbox = createOutboxWorker({ db, clock, provider: deps.messageProvider ?? providerFromConfig(config, app.log), log: app.log });
  app.addHook('onClose', () => outbox.stop());
  app.decorate('outbox', outbox);
  // Started by main.ts with the outbox; each organization is reminded once a day whichever process runs it.
  const grievanceReminders = createReminderScheduler({ db, clock, log: app.log });
  app.addHook('onClose', () => grievanceReminders.stop());
  app.decorate('grievanceReminders', grievanceReminders);
  // Started by main.ts likewise: grievance.overdue events, each lateness once whichever process sees it.
  const grievanceOverdue = createOverdueScheduler({ db, clock, log: app.log });
  app.addHook('onClose', () => grievanceOverdue.stop());
  app.decorate('grievanceOverdue', grievanceOverdue);
  // Seals audit entries into the chain and the Merkle tree and signs checkpoints (started by main.ts; tests call runOnce).
  const sequencer = createSequencer({
    db,
    clock,
    signer: receipts.signer,
    log: app.log,
    ...checkpointHooks(config, clock), // issue 32: checkpoint.published to witnesses, TSA_URL time-stamps
  });
  app.addHook('onClose', () => sequencer.stop());
  app.decorate('sequencer', sequencer);
  registerAudit(app, { db, clock, beforeRead: sequencer.catchUp });
  registerTransparency(app, { db, sequencer, organizations, baseDomain: config.baseDomain, trustProxy: config.trustProxy });
  registerExport(app, { db, clock, signer: receipts.signer, sequencer });
  // Webhooks: endpoints through the API; deliveries sent by their own worker (started by main.ts like the outbox).
  const webhookSecrets = secretBox(config.secretKey);
  const webhookPolicy: AddressPolicy = {
    allowPrivate: config.webhookAllowPrivate,
    ownHosts: [...new Set([config.baseDomain, config.publicUrl.hostname.toLowerCase()])],
  };
  registerWebhooks(app, { db, clock, secrets: webhookSecrets, policy: webhookPolicy });
  const webhooks = createWebhookWorker({ db, clock, secrets: webhookSecrets, policy: webhookPolicy, log: app.log });
  app.addHook('onClose', () => webhooks.stop());
  app.decorate('webhooks', webhooks);
  await registerDashboard(app, { webDir: deps.webDir, baseDomain: config.baseDomain });

  app.decorate('services', { accounts, apiKeys, consentLinks, users, sessions, dataPrincipals, receipts, fulfilment });
  app.decorate('routeAccess', routeAccess);
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: {
      accounts: ReturnType<typeof createAccountsService>;
      fulfilment: FulfilmentService;
      apiKeys: ReturnType<typeof createApiKeyVerifier>;
      consentLinks: ConsentLinkService;
      users: UserService;
      sessions: SessionService;
      dataPrincipals: DataPrincipalService;
      receipts: ReceiptService;
    };
    /** Deletes Idempotency-Key answers older than 24 hours (hourly once started). */
    idempotencyPurge: IdempotencyPurge;
    /** Delivers the outbox (outbound_messages) through the message provider. */
    outbox: OutboxWorker;
    /** The daily grievance reminders (features/grievances/reminders.ts). */
    grievanceReminders: ReturnType<typeof createReminderScheduler>;
    /** Late receipts for consent records written before receipts existed (features/receipts/backfill.ts). */
    receiptBackfill: IntervalJob;
    /** Erases the content of access packages past their 14 days (features/fulfilment). */
    packageErasure: IntervalJob;
    /** The grievance.overdue events (features/grievances/overdue.ts). */
    grievanceOverdue: ReturnType<typeof createOverdueScheduler>;
    /** Sends pending webhook deliveries. */
    webhooks: WebhookWorker;
    /** Seals audit entries and signs checkpoints (features/transparency/sequencer.ts). */
    sequencer: Sequencer;
    /** Every route registered after the access hook, with its declared access rule. */
    routeAccess: RouteAccessEntry[];
  }
}

/**
 * Fastify's `trustProxy` from TRUST_PROXY: a list of proxy addresses as is; a number of hops as a
 * function (Fastify 5 reads a bare number as "trust nothing"): the socket's peer and the next hops-1
 * entries of X-Forwarded-For from the right are proxies, the entry after them is the client.
 */
function trustProxyOption(trusted: false | number | string[]): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trusted === 'number') return (_address, hop) => hop < trusted;
  return trusted;
}
