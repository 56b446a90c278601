// The consent page in a real browser (Debian chromium driven by playwright-core): a phone-sized window
// walks the flow (open, switch language, send code, enter it with the keyboard, choose, confirmation)
// against a real server, with no CSP violation, and saves screenshots under test-results/screenshots/.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import type { MessageProvider, OutgoingMessage } from '../../src/platform/messaging/index.js';
import { uniqueSlug } from '../support/app.js';
import { CHROMIUM, collectProblems, hasChromium, SHOTS, startBrowserServer, type BrowserServer } from '../support/browser.js';


describe.skipIf(!hasChromium)(`consent page in a real browser (skipped when ${CHROMIUM} is missing: apt-get install -y chromium)`, () => {
  let server: BrowserServer;
  let app: FastifyInstance;
  let browser: Browser;
  let port: number;
  const sent: OutgoingMessage[] = [];
  const provider: MessageProvider = { name: 'memory', send: async (m) => void sent.push(m) };

  beforeAll(async () => {
    server = await startBrowserServer({ messageProvider: provider });
    ({ app, browser, port } = server);
  });
  afterAll(() => server?.close());

  test('walks the flow on a phone-sized screen', async () => {
    const slug = uniqueSlug('b');
    await app.services.accounts.createOrganization({ slug, name: 'Acme Health' });
    const key = (await app.services.accounts.createApiKey(slug, { scopes: ['admin'] })).key;
    const call = async (url: string, payload: object) => {
      const res = await app.inject({ method: 'POST', url, headers: { host: `${slug}.localhost`, 'x-api-key': key }, payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    const asset = await call('/api/v1/assets', { name: 'App', kind: 'mobile_app' });
    const point = await call('/api/v1/collection-points', {
      asset_id: asset.id,
      name: 'Registration',
      notice: 'We process your name and phone number to create your health account.',
      purposes: [
        { name: 'Account', description: 'Create and run your account', required: true },
        { name: 'Reminders', description: 'Appointment reminders by SMS' },
      ],
    });
    const link = await call('/api/v1/external/public/consent-link', { asset_id: asset.id, collection_point_id: point.id, phone: '+919876543210', dp_id: 'patient-7' });
    const token = (link.consent_link as string).split('/c/')[1];

    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-IN' });
    const page = await context.newPage();
    const problems = collectProblems(page);

    await page.goto(`http://${slug}.localhost:${port}/c/${token}`);
    await expect(page.getByRole('heading', { level: 1 })).toBeTruthy();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Acme Health asks for your consent');
    await page.screenshot({ path: `${SHOTS}/01-open.png`, fullPage: true });

    await page.getByRole('link', { name: 'हिन्दी' }).click();
    expect(await page.locator('html').getAttribute('lang')).toBe('hi');
    await page.screenshot({ path: `${SHOTS}/02-hindi.png`, fullPage: true });
    await page.getByRole('link', { name: 'English' }).click();

    await page.getByRole('button', { name: 'Send code' }).click();
    await app.outbox.runOnce();
    const code = /\b(\d{6})\b/.exec(sent.at(-1)!.body)![1]!;
    expect(sent.at(-1)!.recipient).toBe('+919876543210');
    await page.screenshot({ path: `${SHOTS}/03-code-sent.png`, fullPage: true });

    // Keyboard only: type the code in its labelled field and press Enter.
    await page.getByLabel('6-digit code').focus();
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await page.waitForSelector('legend');
    await page.getByRole('checkbox', { name: /Account/ }).check();
    await page.screenshot({ path: `${SHOTS}/04-choices.png`, fullPage: true });
    await page.getByRole('button', { name: 'Submit my choices' }).click();

    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your choices are recorded');
    expect(await page.getByRole('status').textContent()).toBe('You agreed to some purposes.');
    expect(await page.locator('dd code').textContent()).toMatch(/^[0-9a-f-]{36}$/);
    await page.screenshot({ path: `${SHOTS}/05-confirmation.png`, fullPage: true });

    await page.goto(`http://${slug}.localhost:${port}/c/${token}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Already done');
    await page.screenshot({ path: `${SHOTS}/06-completed.png`, fullPage: true });

    // No CSP violation (the inline stylesheet is admitted by its hash), no script error.
    expect(problems).toEqual([]);
    await context.close();
  });
});
