// Browser tests: Debian's chromium (never a downloaded browser) started headless with the flags this
// machine's closed network needs, and a collector of what a page reports as broken.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

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
