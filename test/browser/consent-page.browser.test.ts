// The consent page in a real browser (Debian chromium driven by playwright-core): a phone-sized window
// walks the flow (open, switch language, send code, enter it with the keyboard, choose, confirmation)
// against a real server, with and without JavaScript, in English and Hindi; the organization's contact
// person is in the footer of every state; axe-core finds nothing on any page; no CSP violation; and
// screenshots are saved under test-results/screenshots/.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import type { MessageProvider, OutgoingMessage } from '../../src/platform/messaging/index.js';
import { uniqueSlug } from '../support/app.js';
import { axeViolations, CHROMIUM, collectProblems, hasChromium, SHOTS, startBrowserServer, type BrowserServer } from '../support/browser.js';

const PERSON = { full_name: 'Meera Iyer', email: 'dpo@acme.example', phone: '+919811111111', working_hours: 'Mon-Fri 09:00-17:00 IST', response_time: 'Within 7 days' };

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

  /** An organization (with its contact person unless told) and a consent link for patient-7. */
  async function linkOf(o: { person?: boolean } = {}) {
    const slug = uniqueSlug('b');
    await app.services.accounts.createOrganization({ slug, name: 'Acme Health' });
    const key = (await app.services.accounts.createApiKey(slug, { scopes: ['admin'] })).key;
    const call = async (method: 'POST' | 'PUT', url: string, payload: object) => {
      const res = await app.inject({ method, url, headers: { host: `${slug}.localhost`, 'x-api-key': key }, payload });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json();
    };
    if (o.person !== false) await call('PUT', '/api/v1/organization/dpo', PERSON);
    const asset = await call('POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' });
    const point = await call('POST', '/api/v1/collection-points', {
      asset_id: asset.id,
      name: 'Registration',
      notice: 'We process your name and phone number to create your health account.',
      purposes: [
        { name: 'Account', description: 'Create and run your account', required: true },
        { name: 'Reminders', description: 'Appointment reminders by SMS' },
      ],
    });
    const link = await call('POST', '/api/v1/external/public/consent-link', { asset_id: asset.id, collection_point_id: point.id, phone: '+919876543210', dp_id: 'patient-7' });
    return `http://${slug}.localhost:${port}/c/${(link.consent_link as string).split('/c/')[1]}`;
  }

  /**
   * axe on the page as it is: directly, or (JavaScript disabled, where the DevTools protocol cannot
   * evaluate either) on the same document loaded into a page that runs scripts (its stylesheet is
   * inline, so it renders the same).
   */
  async function axeOn(page: Page, javaScriptEnabled: boolean): Promise<string[]> {
    if (javaScriptEnabled) return axeViolations(page);
    const copy = await browser.newPage({ viewport: page.viewportSize() ?? undefined });
    try {
      await copy.setContent(await page.content());
      return await axeViolations(copy);
    } finally {
      await copy.close();
    }
  }

  /** The footer names the contact person with every field; axe finds nothing; a screenshot is kept. */
  async function look(page: Page, name: string, heading: string, javaScriptEnabled = true) {
    const footer = page.getByRole('contentinfo');
    expect(await footer.getByRole('heading', { level: 2 }).textContent(), name).toBe(heading);
    const text = await footer.textContent();
    for (const value of Object.values(PERSON)) expect(text, `${name}: ${value}`).toContain(value);
    expect(await axeOn(page, javaScriptEnabled), `axe on ${name}`).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  }

  const newPage = async (javaScriptEnabled: boolean) => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-IN', javaScriptEnabled });
    const page = await context.newPage();
    return { context, page, problems: collectProblems(page) };
  };

  const lastCode = async () => {
    await app.outbox.runOnce();
    expect(sent.at(-1)!.recipient).toBe('+919876543210');
    return /\b(\d{6})\b/.exec(sent.at(-1)!.body)![1]!;
  };

  test('walks the flow on a phone-sized screen; the contact person on every state; axe clean', async () => {
    const url = await linkOf();
    const { context, page, problems } = await newPage(true);
    const h1 = () => page.getByRole('heading', { level: 1 }).textContent();

    await page.goto(url);
    expect(await h1()).toBe('Acme Health asks for your consent');
    await look(page, '01-open', 'Who to contact');

    await page.getByRole('link', { name: 'हिन्दी' }).click();
    expect(await page.locator('html').getAttribute('lang')).toBe('hi');
    await look(page, '02-hindi', 'किससे संपर्क करें');
    await page.getByRole('link', { name: 'English' }).click();

    await page.getByRole('button', { name: 'Send code' }).click();
    const code = await lastCode();
    await look(page, '03-code-sent', 'Who to contact');

    // Keyboard only: type the code in its labelled field and press Enter.
    await page.getByLabel('6-digit code').focus();
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await page.waitForSelector('legend');
    await page.getByRole('checkbox', { name: /Account/ }).check();
    await look(page, '04-choices', 'Who to contact');
    await page.getByRole('button', { name: 'Submit my choices' }).click();

    expect(await h1()).toBe('Your choices are recorded');
    expect(await page.getByRole('status').textContent()).toBe('You agreed to some purposes.');
    expect(await page.locator('dd code').textContent()).toMatch(/^[0-9a-f-]{36}$/);
    await look(page, '05-confirmation', 'Who to contact');

    await page.goto(url);
    expect(await h1()).toBe('Already done');
    await look(page, '06-completed', 'Who to contact');

    // No CSP violation (the inline stylesheet is admitted by its hash), no script error.
    expect(problems).toEqual([]);
    await context.close();
  });

  test('without JavaScript, in Hindi: every state shows the contact person; axe clean', async () => {
    const url = await linkOf();
    const { context, page, problems } = await newPage(false);
    const h1 = () => page.getByRole('heading', { level: 1 }).textContent();

    await page.goto(`${url}?lang=hi`);
    expect(await h1()).toBe('Acme Health आपकी सहमति माँग रहा है');
    await look(page, 'nojs-01-open-hi', 'किससे संपर्क करें', false);
    await page.getByRole('button', { name: 'कोड भेजें' }).click();
    const code = await lastCode();
    await look(page, 'nojs-02-code-sent-hi', 'किससे संपर्क करें', false);
    await page.getByLabel('6 अंकों का कोड').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'पुष्टि करें' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('यह कोड सही नहीं है');
    await look(page, 'nojs-03-wrong-code-hi', 'किससे संपर्क करें', false);
    await page.getByLabel('6 अंकों का कोड').fill(code);
    await page.getByRole('button', { name: 'पुष्टि करें' }).click();
    await page.waitForSelector('legend');
    await look(page, 'nojs-04-choices-hi', 'किससे संपर्क करें', false);
    await page.getByRole('button', { name: 'मेरे विकल्प जमा करें' }).click();
    expect(await h1()).toBe('आपके विकल्प दर्ज हो गए हैं');
    await look(page, 'nojs-05-confirmation-hi', 'किससे संपर्क करें', false);
    await page.goto(`${url}?lang=hi`);
    expect(await h1()).toBe('पहले ही पूरा हो चुका है');
    await look(page, 'nojs-06-completed-hi', 'किससे संपर्क करें', false);
    expect(problems).toEqual([]);
    await context.close();
  });

  test('with no contact person set, the page points to the Rights Center; axe clean', async () => {
    const url = await linkOf({ person: false });
    const { context, page, problems } = await newPage(false);
    await page.goto(url);
    const footer = page.getByRole('contentinfo');
    expect(await footer.textContent()).toContain('Acme Health has not named a contact person yet. You can reach them through their Rights Center.');
    await footer.getByRole('link', { name: "Open Acme Health's Rights Center" }).click();
    await page.waitForURL(/\/rights\?lang=en$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    await page.goBack();
    expect(await axeOn(page, false)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/07-no-contact.png`, fullPage: true });
    expect(problems).toEqual([]);
    await context.close();
  });
});
