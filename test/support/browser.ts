// Browser tests: Debian's chromium (never a downloaded browser) started headless with the flags this
// machine's closed network needs, a real server for it to drive, and a collector of what a page
// reports as broken.
import { UNLIMITED } from './app.js';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createScratchStore } from './store.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = 'test-results/screenshots';
export const hasChromium = existsSync(CHROMIUM);

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/** Script errors and console errors (a CSP violation among them) of a page, as they happen. */
export function collectProblems(page: Page): string[] {
  const problems: string[] = [];
  // Status codes the page handles (a 409, a 401 it recovers from) show as "Failed to load resource": not a problem.
  page.on('console', (msg) => msg.type() === 'error' && !msg.text().startsWith('Failed to load resource') && problems.push(msg.text()));
  page.on('pageerror', (err) => problems.push(err.message));
  return problems;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's violations on the page as it is now. Evaluated through the DevTools protocol, which the
 * hosted pages' CSP (no script at all) does not govern, and which works with JavaScript disabled too.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const violations = (await page.evaluate(`${AXE}\n;axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as AxeViolation[];
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export interface BrowserServer {
  app: FastifyInstance;
  /** The server's port on 127.0.0.1; organizations answer at http://<slug>.localhost:<port>. */
  port: number;
  browser: Browser;
  close(): Promise<void>;
}

/** The real app on a fresh scratch store, listening on a free port, and chromium to drive it. */
export async function startBrowserServer(deps: Pick<AppDeps, 'clock' | 'messageProvider'> = {}): Promise<BrowserServer> {
  const store = await createScratchStore();
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', ...UNLIMITED }), db: await store.open(), logger: false, ...deps });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
  return {
    app,
    port: (app.server.address() as AddressInfo).port,
    browser,
    async close() {
      await browser.close();
      await app.close();
      await store.drop();
    },
  };
}
