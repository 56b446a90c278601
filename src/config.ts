// Reads the process environment once into a validated, frozen Config that is passed down (never a global).
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseDomain: string;
  readonly publicUrl: URL;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  /** Whether any proxy is trusted (TRUST_PROXY set): X-Forwarded-Host and X-Forwarded-For are read. */
  readonly trustProxy: boolean;
  /**
   * Which proxies are trusted, as Fastify's `trustProxy` takes it: a number of hops (`TRUST_PROXY=1`)
   * or a list of proxy addresses and CIDR ranges (`TRUST_PROXY=10.0.0.0/8,127.0.0.1`); false for none.
   */
  readonly trustedProxies: false | number | string[];
  /** LOGIN_ADDRESS_DAILY_LIMIT: failed logins one address may make in 24 hours before it waits out the day (default 200). */
  readonly loginAddressDailyLimit: number;
  /** HTTP_REQUEST_TIMEOUT_MS: the longest a whole request may take to arrive (default 30000). */
  readonly requestTimeoutMs: number;
  /** HTTP_HEADERS_TIMEOUT_MS: the longest a request's headers may take to arrive (default 10000). */
  readonly headersTimeoutMs: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT_MS: how long an idle keep-alive connection stays open (default 72000, as Fastify; above common load balancers' 60 s idle timeout). */
  readonly keepAliveTimeoutMs: number;
  /** HTTP_MAX_CONNECTIONS: open connections this process accepts at once; more are closed (default 4096). */
  readonly maxConnections: number;
  readonly logLevel: string;
  readonly defaultCountryCode: string;
  readonly rls: boolean;
  /** PGlite's shared_buffers (PGLITE_SHARED_BUFFERS), e.g. "32MB"; the embedded store only. */
  readonly pgliteSharedBuffers: string;
  /** How queued SMS and email messages leave: `log` (server log, local use) or `http` (webhooks). */
  readonly messageProvider: 'log' | 'http';
  /** MESSAGE_PROVIDER was set (not the default): \`assent serve\` on PostgreSQL takes \`log\` only when asked for. */
  readonly messageProviderExplicit: boolean;
  readonly smsWebhookUrl: URL | null;
  readonly emailWebhookUrl: URL | null;
  /** METRICS_PORT: Prometheus metrics at GET /metrics on this port; null (the default) serves none. */
  readonly metricsPort: number | null;
  /** METRICS_HOST: the address the metrics port listens on; 127.0.0.1 (this machine only) by default. */
  readonly metricsHost: string;
  /** METRICS_PER_ORG=1: request metrics carry the organization's slug as a label. */
  readonly metricsPerOrg: boolean;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhook URLs may point at private, loopback or link-local addresses and at this service. */
  readonly webhookAllowPrivate: boolean;
  /** FULFILMENT_PART_MAX_BYTES: the largest file a system may attach to an access request (default 25 MiB). */
  readonly fulfilmentPartMaxBytes: number;
  /** REDIS_KEY_PREFIX: the prefix of this deployment's keys in Redis (default `assent:`). */
  readonly redisKeyPrefix: string;
  /** RATE_LIMIT_PER_KEY: requests per API key per window, where the organization set none (default 500). */
  readonly rateLimitPerKey: number;
  /** RATE_LIMIT_PER_ADDRESS: requests to the tenant API per client address per window (default 1000). */
  readonly rateLimitPerAddress: number;
  /** RATE_LIMIT_WINDOW_SECONDS: the rate limit window (default 60). */
  readonly rateLimitWindowSeconds: number;
  /**
   * ASSENT_SECRET_KEY (at least 32 characters): seals the organizations' receipt signing keys, and webhook
   * signing secrets. Unset: the embedded store keeps one in DATA_DIR/secret.key; PostgreSQL refuses to serve.
   */
  readonly secretKey: string | null;
  /** ASSENT_NEW_SECRET_KEY: read only by `assent secret rotate`, the key that replaces ASSENT_SECRET_KEY. */
  readonly newSecretKey: string | null;
  /**
   * TSA_URL: an RFC 3161 time-stamping authority (http:// or https://) that time-stamps every audit
   * checkpoint (issue 32 item 4, src/features/audit/tsa.ts); null (the default): checkpoints carry none.
   */
  readonly tsaUrl: URL | null;
}

export class ConfigError extends Error {}

/** The embedded store's shared_buffers unless PGLITE_SHARED_BUFFERS says otherwise (docs/operations.md). */
export const DEFAULT_PGLITE_SHARED_BUFFERS = '32MB';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer between 0 and 65535, got "${env.PORT}"`);
  }
  const baseDomain = (env.BASE_DOMAIN || 'localhost').toLowerCase();
  if (!/^[a-z0-9.-]+$/.test(baseDomain)) {
    throw new ConfigError(`BASE_DOMAIN must be a host name such as "localhost" or "privacy.example.com", got "${env.BASE_DOMAIN}"`);
  }
  let publicUrl: URL;
  try {
    publicUrl = new URL(env.PUBLIC_URL || `http://${baseDomain}:${port}`);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL such as "https://privacy.example.com", got "${env.PUBLIC_URL}"`);
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const databaseUrl = env.DATABASE_URL ? env.DATABASE_URL : null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const redisUrl = env.REDIS_URL ? env.REDIS_URL : null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
  const defaultCountryCode = env.DEFAULT_COUNTRY_CODE || '+91';
  if (!/^\+[1-9][0-9]{0,3}$/.test(defaultCountryCode)) {
    throw new ConfigError(`DEFAULT_COUNTRY_CODE must look like "+91", got "${env.DEFAULT_COUNTRY_CODE}"`);
  }
  const rlsSetting = (env.ASSENT_RLS || 'on').toLowerCase();
  if (rlsSetting !== 'on' && rlsSetting !== 'off') {
    throw new ConfigError(`ASSENT_RLS must be "on" or "off", got "${env.ASSENT_RLS}"`);
  }
  const pgliteSharedBuffers = env.PGLITE_SHARED_BUFFERS || DEFAULT_PGLITE_SHARED_BUFFERS;
  if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(pgliteSharedBuffers)) {
    throw new ConfigError(`PGLITE_SHARED_BUFFERS must be a size such as "32MB" (kB, MB or GB), got "${env.PGLITE_SHARED_BUFFERS}"`);
  }
  const messageProvider = (env.MESSAGE_PROVIDER || 'log').toLowerCase();
  if (messageProvider !== 'log' && messageProvider !== 'http') {
    throw new ConfigError(`MESSAGE_PROVIDER must be "log" or "http", got "${env.MESSAGE_PROVIDER}"`);
  }
  const smsWebhookUrl = webhookUrl(env, 'SMS_WEBHOOK_URL');
  const emailWebhookUrl = webhookUrl(env, 'EMAIL_WEBHOOK_URL');
  const tsaUrl = webhookUrl(env, 'TSA_URL');
  if (messageProvider === 'http' && !smsWebhookUrl) throw new ConfigError('MESSAGE_PROVIDER=http needs SMS_WEBHOOK_URL');
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : null;
  if (metricsPort !== null && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)) {
    throw new ConfigError(`METRICS_PORT must be an integer between 0 and 65535, got "${env.METRICS_PORT}"`);
  }
  // Metrics name routes, pools and queue depths: this machine only unless the operator says otherwise.
  const metricsHost = env.METRICS_HOST || '127.0.0.1';
  if (/\s|\//.test(metricsHost)) throw new ConfigError(`METRICS_HOST must be an address to listen on (e.g. 127.0.0.1 or 0.0.0.0), got "${env.METRICS_HOST}"`);
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive whole number`);
    return n;
  };
  if (env.ASSENT_SECRET_KEY && env.ASSENT_SECRET_KEY.length < 32) {
    throw new ConfigError('ASSENT_SECRET_KEY must be at least 32 characters: generate one with `assent secret generate`');
  }
  const rateLimitPerKey = positive('RATE_LIMIT_PER_KEY', 500);
  const rateLimitPerAddress = positive('RATE_LIMIT_PER_ADDRESS', 1000);
  const rateLimitWindowSeconds = positive('RATE_LIMIT_WINDOW_SECONDS', 60);
  const trustedProxies = parseTrustProxy(env.TRUST_PROXY);
  const headersTimeoutMs = positive('HTTP_HEADERS_TIMEOUT_MS', 10_000);
  const requestTimeoutMs = positive('HTTP_REQUEST_TIMEOUT_MS', 30_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(`HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be at least HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`);
  }
  return Object.freeze({
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'assent:',
    rateLimitPerKey,
    rateLimitPerAddress,
    rateLimitWindowSeconds,
    port,
    host: env.HOST || '0.0.0.0',
    baseDomain,
    publicUrl,
    dataDir: resolve(env.DATA_DIR || './data'),
    databaseUrl,
    redisUrl,
    trustProxy: trustedProxies !== false,
    trustedProxies,
    requestTimeoutMs,
    headersTimeoutMs,
    loginAddressDailyLimit: positive('LOGIN_ADDRESS_DAILY_LIMIT', 200),
    keepAliveTimeoutMs: positive('HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000),
    maxConnections: positive('HTTP_MAX_CONNECTIONS', 4096),
    logLevel,
    defaultCountryCode,
    rls: rlsSetting === 'on',
    pgliteSharedBuffers,
    messageProvider,
    messageProviderExplicit: Boolean(env.MESSAGE_PROVIDER),
    smsWebhookUrl,
    emailWebhookUrl,
    metricsPort,
    metricsHost,
    metricsPerOrg: ['1', 'true', 'yes', 'on'].includes((env.METRICS_PER_ORG || '').toLowerCase()),
    webhookAllowPrivate: ['1', 'true', 'yes', 'on'].includes((env.WEBHOOK_ALLOW_PRIVATE || '').toLowerCase()),
    fulfilmentPartMaxBytes: positive('FULFILMENT_PART_MAX_BYTES', 25 * 1024 * 1024),
    secretKey: env.ASSENT_SECRET_KEY ? env.ASSENT_SECRET_KEY : null,
    newSecretKey: env.ASSENT_NEW_SECRET_KEY ? env.ASSENT_NEW_SECRET_KEY : null,
    tsaUrl,
  });
}

const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: unset, empty, `0` or `false` trusts no proxy; a whole number is how many proxies stand
 * in front of the server (the client's address is that many entries from the right of X-Forwarded-For,
 * so a forged entry on the left changes nothing); a comma-separated list names the proxies' addresses
 * or CIDR ranges (and `loopback`, `linklocal`, `uniquelocal`). `true` is refused: trusting every hop
 * lets any client choose its address and escape the per-address limits.
 */
export function parseTrustProxy(raw: string | undefined): false | number | string[] {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === '0' || value === 'false' || value === 'no' || value === 'off') return false;
  if (/^[0-9]+$/.test(value)) {
    const hops = Number(value);
    if (hops > 20) throw new ConfigError(`TRUST_PROXY must be the number of proxies in front of the server (1 to 20), got "${raw}"`);
    return hops;
  }
  if (value === 'true' || value === 'yes' || value === 'on') {
    throw new ConfigError(
      `TRUST_PROXY=${raw} would trust every hop, so any client could forge its address with X-Forwarded-For: set the number of proxies in front of the server (TRUST_PROXY=1) or their addresses (TRUST_PROXY=10.0.0.0/8)`,
    );
  }
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e !== '');
  for (const entry of entries) {
    if (TRUST_PROXY_NAMES.has(entry)) continue;
    const [address, bits, ...rest] = entry.split('/');
    const version = isIP(address ?? '');
    const bitsOk = bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (version === 6 ? 128 : 32));
    if (version === 0 || !bitsOk || rest.length > 0) {
      throw new ConfigError(
        `TRUST_PROXY must be a number of proxy hops (1) or a comma-separated list of proxy addresses or CIDR ranges (10.0.0.0/8,127.0.0.1); "${entry}" is neither`,
      );
    }
  }
  return entries;
}

function webhookUrl(env: NodeJS.ProcessEnv, name: string): URL | null {
  const value = env[name];
  if (!value) return null;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // reported below
  }
  throw new ConfigError(`${name} must be an http:// or https:// URL, got "${value}"`);
}
