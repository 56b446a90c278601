// buildTestApp: the real app on a fresh store with an injected clock, plus factories for organizations
// and keys and a small HTTP helper. Each test makes its own tenants, so tests never depend on each other.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { manualClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/types.js';
import { createScratchStore, type ScratchStore } from './store.js';

export interface TestOrg {
  id: string;
  slug: string;
  host: string;
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  store: ScratchStore;
  config: Config;
  clock: ReturnType<typeof manualClock>;
  org(): Promise<TestOrg>;
  key(org: TestOrg, scopes?: string[]): Promise<string>;
  /** An organization with a key of the given scopes. */
  tenant(scopes?: string[]): Promise<TestOrg & { key: string }>;
  call(options: CallOptions): Promise<LightMyRequestResponse & { body: string; json<T = any>(): T }>;
  close(): Promise<void>;
}

export interface CallOptions {
  method: InjectOptions['method'];
  url: string;
  /** Organization host (slug.localhost); omit for the bare base domain. */
  org?: { host: string } | string;
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export function uniqueSlug(prefix = 't'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** Rate limits high enough never to be met by a suite. */
export const UNLIMITED = { RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000' } as const;

export interface BuildTestAppOptions {
  env?: NodeJS.ProcessEnv;
  rls?: boolean;
  /** Wraps the store before the app sees it (e.g. to count round trips). */
  wrapDb?: (db: Database) => Database;
  /** The built dashboard to serve (default: web/dist). */
  webDir?: string;
}

export async function buildTestApp(options: BuildTestAppOptions = {}): Promise<TestApp> {
  const store = await createScratchStore();
  const opened = await store.open({ rls: options.rls });
  const db = options.wrapDb ? options.wrapDb(opened) : opened;
  // Suites send thousands of requests from one address in a minute: the limits are raised unless a
  // test sets them (test/contract/rate-limits.test.ts does).
  const config = loadConfig({ LOG_LEVEL: 'silent', ...UNLIMITED, ...options.env });
  const clock = manualClock();
  const app = await buildApp({ config, db, clock, logger: false, webDir: options.webDir });
  await app.ready();

  const t: TestApp = {
    app,
    db,
    store,
    config,
    clock,
    async org() {
      const org = await app.services.accounts.createOrganization({ slug: uniqueSlug() });
      return { id: org.id, slug: org.slug, host: `${org.slug}.${config.baseDomain}` };
    },
    async key(org, scopes = ['admin']) {
      return (await app.services.accounts.createApiKey(org.slug, { scopes })).key;
    },
    async tenant(scopes = ['admin']) {
      const org = await t.org();
      return { ...org, key: await t.key(org, scopes) };
    },
    async call({ method, url, org, key, body, headers }) {
      const host = typeof org === 'string' ? org : org?.host ?? config.baseDomain;
      const all: Record<string, string> = { host, ...headers };
      if (key !== undefined) all['x-api-key'] = key;
      const res = await app.inject({
        method,
        url,
        headers: all,
        ...(body === undefined ? {} : typeof body === 'string' ? { payload: body } : { payload: body as object }),
      });
      return res as LightMyRequestResponse & { body: string; json<T = any>(): T };
    },
    async close() {
      await app.close();
      await store.drop();
    },
  };
  return t;
}
