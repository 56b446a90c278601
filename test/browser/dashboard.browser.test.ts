// The dashboard end to end: the built app (web/dist) served by a real server over real HTTP, driven in
// Debian's headless chromium (playwright-core). Sign in (by keyboard) and survive a reload; generate an
// API key and use it; resolve a ticket filed through the API; find an overdue ticket, read its conversation
// and reply; generate a consent link and find it in the history; a member's read-only view; a phone-sized screen. No CSP violation or script error anywhere.
// A screenshot of every page goes to test-results/screenshots/dashboard-*.png.
import { existsSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Clock } from '../../src/platform/clock.js';
import type { MessageProvider } from '../../src/platform/messaging/index.js';
import { DEFAULT_WEB_DIR } from '../../src/features/dashboard/index.js';
import { uniqueSlug } from '../support/app.js';
import { axeViolations, CHROMIUM, collectProblems, hasChromium, SHOTS, startBrowserServer, type BrowserServer } from '../support/browser.js';

const PASSWORD = 'correct horse battery staple';
const DAY = 86_400_000;
const built = existsSync(`${DEFAULT_WEB_DIR}/index.html`);

describe.skipIf(!hasChromium || !built)(
  `dashboard in a real browser (skipped when ${CHROMIUM} is missing: apt-get install -y chromium; or web/dist is not built: npm run build)`,
  () => {
    let server: BrowserServer;
    let app: FastifyInstance;
    let browser: Browser;
    let port: number;
    let slug: string;
    let adminKey: string;
    let origin: string;
    const owner = { email: '', id: '' };
    const member = { email: '' };
    // The seed is spread over the last 30 days; then the clock is the real one.
    let offsetMs = -30 * DAY;
    const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
    const provider: MessageProvider = { name: 'memory', send: async () => {} };

    /** Real HTTP to the organization's host (Node does not resolve *.localhost: the Host header names it). */
    function request(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
      return new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method,
            path,
            headers: { host: `${slug}.localhost:${port}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
          },
          (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, json: text ? JSON.parse(text) : null }));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    }
    const withKey = (key: string) => ({ 'x-api-key': key });

    async function seed() {
      const org = (await app.services.accounts.createOrganization({ slug, name: 'Acme Health' })).id;
      adminKey = (await app.services.accounts.createApiKey(slug, { scopes: ['admin'], name: 'seed' })).key;
      const o = await app.services.users.createUser({ email: `owner-${slug}@example.com`, password: PASSWORD });
      await app.services.users.addMember(org, o.id, 'owner');
      Object.assign(owner, { email: o.email, id: o.id });
      const mem = await app.services.users.createUser({ email: `member-${slug}@example.com`, password: PASSWORD });
      await app.services.users.addMember(org, mem.id, 'member');
      member.email = mem.email;

      const categories = ['data_access', 'erasure', 'rectification', 'consent_withdrawal', 'complaint', 'objection'];
      const statuses = ['in_progress', 'on_hold', 'resolved', 'closed'];
      for (let i = 0; i < 24; i++) {
        offsetMs += DAY / 2;
        const g = await request('POST', '/grievance', withKey(adminKey), {
          client_user_id: `user-${100 + (i % 7)}`,
          subject: ['Copy of my data', 'Delete my account', 'Wrong address on file', 'Stop marketing messages', 'Who did you share my data with?', 'Correct my name'][i % 6],
          description: 'Please act on this request within the time the law allows.',
          category: categories[i % categories.length],
        });
        expect(g.status).toBe(201);
        if (i % 3 !== 0) await request('PUT', `/grievance/${g.json.ticket_id}`, withKey(adminKey), { status: statuses[i % statuses.length] });
      }
      const relationships = ['spouse', 'parent', 'legal_guardian', 'power_of_attorney'];
      for (let i = 0; i < 8; i++) {
        const n = await request('POST', '/nominee', withKey(adminKey), {
          user_id: `user-${100 + i}`,
          nominee_name: ['Asha Rao', 'Vikram Mehta', 'Leela Iyer', 'Kabir Shah'][i % 4],
          nominee_email: `nominee${i}@example.com`,
          nominee_mobile: `98765432${10 + i}`,
          relationship: relationships[i % 4],
          purpose_of_appointment: 'Acts for the data principal if they cannot',
        });
        expect(n.status).toBe(201);
        if (i % 3 === 1) await request('PUT', `/nominee/${n.json.id}`, withKey(adminKey), { status: 'verified' });
      }
      const asset = await request('POST', '/api/v1/assets', withKey(adminKey), { name: 'Patient app', kind: 'mobile_app' });
      await request('POST', '/api/v1/assets', withKey(adminKey), { name: 'Clinic front desk', kind: 'offline' });
      const points = [];
      for (const [name, purposes] of [
        ['Registration', [{ name: 'Account', description: 'Create and run your account', required: true }, { name: 'Reminders', description: 'Appointment reminders by SMS' }]],
        ['Newsletter', [{ name: 'Health tips', description: 'A monthly email' }]],
      ] as const) {
        const cp = await request('POST', '/api/v1/collection-points', withKey(adminKey), { asset_id: asset.json.id, name, notice: `We use your details for ${name.toLowerCase()}.`, purposes });
        expect(cp.status).toBe(201);
        points.push(cp.json);
      }
      for (let i = 0; i < 30; i++) {
        offsetMs += DAY / 3;
        const point = points[i % 2];
        const link = await request('POST', '/api/v1/external/public/consent-link', withKey(adminKey), {
          asset_id: asset.json.id,
          collection_point_id: point.id,
          phone: `+9198765${String(43000 + i).padStart(5, '0')}`,
          dp_id: `user-${100 + i}`,
          expiry_hours: 12,
        });
        expect(link.status).toBe(201);
        if (i % 3 !== 2) {
          const consent = await request('POST', `/consent/${point.id}/consent`, withKey(adminKey), {
            dp_id: `user-${100 + i}`,
            event_id: link.json.event_id,
            purposes: point.purposes.map((p: { id: string }, k: number) => ({ id: p.id, granted: k === 0 || i % 2 === 0 })),
          });
          expect(consent.status).toBe(201);
        }
      }
      offsetMs = 0;
    }

    beforeAll(async () => {
      server = await startBrowserServer({ clock, messageProvider: provider });
      ({ app, browser, port } = server);
      slug = uniqueSlug('d');
      origin = `http://${slug}.localhost:${port}`;
      await seed();
    });
    afterAll(() => server?.close());

    interface Visit {
      context: BrowserContext;
      page: Page;
      problems: string[];
    }
    async function open(options: { width?: number; height?: number; locale?: string } = {}): Promise<Visit> {
      const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 860 }, locale: options.locale ?? 'en-GB', timezoneId: 'Asia/Kolkata' });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      const page = await context.newPage();
      // Fail on the step that is stuck, well before the test's own timeout.
      page.setDefaultTimeout(8_000);
      return { context, page, problems: collectProblems(page) };
    }
    async function signIn(v: Visit, email: string) {
      await v.page.goto(`${origin}/`);
      await v.page.getByLabel('Email').fill(email);
      await v.page.getByLabel('Password').fill(PASSWORD);
      await v.page.getByRole('button', { name: 'Sign in' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    }
    const shot = (v: Visit, name: string) => v.page.screenshot({ path: `${SHOTS}/dashboard-${name}.png`, fullPage: true });
    const heading = (v: Visit) => v.page.getByRole('heading', { level: 1 }).first().textContent();

    test('sign in with the keyboard; the session survives a reload; wrong password and sign-out', async () => {
      const v = await open();
      await v.page.goto(`${origin}/`);
      expect(await heading(v)).toBe(`Sign in to ${slug}`);
      await shot(v, '01-sign-in');
      // Keyboard only: the email field is the first stop.
      await v.page.keyboard.press('Tab');
      await v.page.keyboard.type(owner.email);
      await v.page.keyboard.press('Tab');
      await v.page.keyboard.type('not the password');
      await v.page.keyboard.press('Enter');
      await v.page.getByText('The email or the password is wrong.').waitFor();
      // The failure takes the focus, so a screen reader reads it and Tab continues from there (issue 30).
      expect(await v.page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
      expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('The email or the password is wrong.');
      expect(await axeViolations(v.page), 'axe on the failed sign-in').toEqual([]);
      await v.page.getByLabel('Password').fill(PASSWORD);
      await v.page.keyboard.press('Enter');
      await v.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      // The refresh token is HttpOnly: page scripts see only the CSRF cookie.
      expect(await v.page.evaluate(() => document.cookie)).toMatch(/^assent_csrf=[A-Za-z0-9_-]{43}$/);
      const cookies = await v.context.cookies();
      expect(cookies.find((c) => c.name === 'assent_refresh')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/auth/browser' });

      await v.page.getByRole('figure').first().waitFor();
      expect(await v.page.getByText('Open tickets').count()).toBeGreaterThan(0);
      // The stacked chart's legend names its series, with no empty values ("Day: Expired: …", issue 30).
      const legend = v.page.locator('.u-legend').first();
      await legend.waitFor();
      const legendText = (await legend.innerText()).replace(/\s+/g, ' ').trim();
      expect(legendText).not.toContain(':');
      expect(legendText).not.toContain('Day');
      expect(legendText.length).toBeGreaterThan(0);
      await shot(v, '02-overview');

      await v.page.reload();
      await v.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      expect(await v.page.getByText(owner.email).count()).toBe(1);

      await v.page.getByRole('button', { name: 'Sign out' }).click();
      await v.page.getByRole('button', { name: 'Sign in' }).waitFor();
      await v.page.reload();
      await v.page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('generate an API key (shown once, copied), use it over HTTP, revoke it after a confirmation', async () => {
      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'API keys' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await v.page.getByLabel('Name').fill('billing server');
      await v.page.getByLabel('grievances: grievance tickets').check();
      await v.page.getByRole('button', { name: 'Generate key' }).click();
      const key = (await v.page.getByTestId('new-api-key').textContent())!;
      expect(key).toMatch(/^ask_live_[0-9A-Za-z]{32}$/);
      expect(await v.page.getByText('Copy this key now: it will not be shown again.').count()).toBe(1);
      await v.page.getByRole('button', { name: 'Copy', exact: true }).click();
      await v.page.getByText('Copied to the clipboard.').waitFor();
      expect(await v.page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await shot(v, '03-api-key-generated');

      const used = await request('GET', '/grievance/user/user-100', withKey(key));
      expect(used.status).toBe(200);
      expect(used.json.length).toBeGreaterThan(0);
      expect((await request('GET', '/nominee/user/user-100', withKey(key))).status).toBe(403);

      await v.page.getByRole('button', { name: 'I have stored it' }).click();
      await v.page.getByRole('cell', { name: 'billing server', exact: true }).waitFor();
      expect(await v.page.getByText(key).count()).toBe(0);
      // The confirmation is a real modal: Escape cancels it and focus goes back to the button.
      const revoke = v.page.getByRole('button', { name: 'Revoke billing server' });
      await revoke.focus();
      await v.page.keyboard.press('Enter');
      const dialog = v.page.getByRole('dialog', { name: 'Revoke billing server?' });
      await dialog.waitFor();
      expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
      await v.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      expect(await revoke.evaluate((b) => b === document.activeElement)).toBe(true);
      expect((await request('GET', '/grievance/user/user-100', withKey(key))).status).toBe(200);
      await revoke.click();
      await dialog.waitFor();
      await shot(v, '04-api-key-revoke');
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await v.page.getByText('billing server was revoked.').waitFor();
      expect((await request('GET', '/grievance/user/user-100', withKey(key))).status).toBe(401);
      await shot(v, '05-api-keys');
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('a ticket filed through the API is resolved in the UI, with a note in its history', async () => {
      const filed = await request('POST', '/grievance', withKey(adminKey), {
        client_user_id: 'user-e2e',
        subject: 'Erase my records',
        description: 'I closed my account; erase what you hold about me.',
        category: 'erasure',
      });
      expect(filed.status).toBe(201);
      const ticketId: string = filed.json.ticket_id;

      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Grievances' }).waitFor();
      // Following a link moves focus to the new page's content, as a page load would.
      expect(await v.page.evaluate(() => document.activeElement?.id)).toBe('main');
      await shot(v, '06-grievances');
      await v.page.getByLabel('User').fill('user-e2e');
      await v.page.getByRole('button', { name: 'Apply filters' }).click();
      await v.page.getByText('1–1 of 1').waitFor();
      await v.page.getByRole('link', { name: ticketId }).click();
      await v.page.getByRole('heading', { level: 1, name: `${ticketId}: Erase my records` }).waitFor();
      await v.page.getByLabel('New status').selectOption('resolved');
      await v.page.getByLabel('Note for the history').fill('Records erased from the CRM and the mailing list.');
      await v.page.getByRole('button', { name: 'Change status' }).click();
      await v.page.getByText('The ticket is now Resolved.').waitFor();
      await v.page.getByText('Records erased from the CRM and the mailing list.').waitFor();
      await shot(v, '07-grievance');

      const history = await request('GET', `/grievance/${ticketId}/history`, withKey(adminKey));
      expect(history.json.at(-1)).toEqual({
        status: 'resolved',
        previous_status: 'open',
        changed_at: expect.any(String),
        actor: { type: 'user', id: owner.id },
        note: 'Records erased from the CRM and the mailing list.',
      });
      // Sorting is in the address bar and survives a reload.
      await v.page.goto(`${origin}/grievances`);
      await v.page.getByRole('button', { name: /Sort by Updated/ }).click();
      await v.page.waitForURL(/sort=updated_at&order=desc/);
      await v.page.reload();
      await v.page.getByRole('columnheader', { name: /Updated/ }).and(v.page.locator('[aria-sort="descending"]')).waitFor();
      expect(await v.page.getByRole('row').nth(1).getByRole('link').textContent()).toBe(ticketId);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test("an overdue ticket is marked, filtered and sorted by due date; a member reads its conversation and replies", async () => {
      // Filed 30.5 days ago (a 30-day period): half a day late now, which counts as a day.
      offsetMs = -30.5 * DAY;
      const filed = await request('POST', '/grievance', withKey(adminKey), {
        client_user_id: 'user-conversation',
        subject: 'Where did my data go?',
        description: 'Tell me who received my personal data.',
        category: 'data_access',
      });
      offsetMs = 0;
      expect(filed.status).toBe(201);
      const ticketId: string = filed.json.ticket_id;
      const token = await request('POST', '/api/v1/data-principals/user-conversation/tokens', withKey(adminKey), {});
      expect(token.status).toBe(201);
      const asked = await request('POST', `/api/v1/me/grievances/${ticketId}/messages`, { authorization: `Bearer ${token.json.access_token}` }, { message: 'Any news on my request?' });
      expect(asked.status).toBe(201);

      const v = await open();
      await signIn(v, member.email);
      await v.page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Grievances' }).waitFor();
      await v.page.getByLabel('Due date').selectOption('true');
      await v.page.getByRole('button', { name: 'Apply filters' }).click();
      await v.page.waitForURL(/overdue=true/);
      const row = v.page.getByRole('row').filter({ has: v.page.getByRole('link', { name: ticketId }) });
      await row.waitFor();
      expect(await row.getAttribute('class')).toBe('row-overdue');
      expect(await row.getByText('Overdue').count()).toBe(1);
      expect(await row.textContent()).toContain('1 day late');
      // Every row the filter shows is overdue.
      expect(await v.page.locator('tbody tr:not(.row-overdue)').count()).toBe(0);
      await v.page.getByRole('button', { name: /Sort by Due/ }).click();
      await v.page.waitForURL(/sort=due_at&order=asc/);
      await v.page.getByRole('columnheader', { name: /Due/ }).and(v.page.locator('[aria-sort="ascending"]')).waitFor();
      await shot(v, '07a-grievances-overdue');

      await v.page.getByRole('link', { name: ticketId }).click();
      await v.page.getByRole('heading', { level: 1, name: `${ticketId}: Where did my data go?` }).waitFor();
      await v.page.getByRole('heading', { level: 2, name: 'Conversation' }).waitFor();
      const conversation = v.page.locator('ol.conversation');
      await conversation.getByText('Any news on my request?').waitFor();
      expect(await conversation.locator('li').first().locator('strong').textContent()).toBe('Data principal');
      await v.page.getByLabel('Message').fill('We have asked our processors; expect the list this week.');
      await v.page.getByRole('button', { name: 'Send reply' }).click();
      await v.page.getByText('Your reply is on the ticket.').waitFor();
      await conversation.getByText('We have asked our processors; expect the list this week.').waitFor();
      expect(await conversation.locator('li').last().locator('strong').textContent()).toBe('Organization');
      await shot(v, '07b-grievance-conversation');

      const messages = await request('GET', `/grievance/${ticketId}/messages`, withKey(adminKey));
      expect(messages.json.map((x: { sender: string; message: string }) => [x.sender, x.message])).toEqual([
        ['user', 'Any news on my request?'],
        ['agent', 'We have asked our processors; expect the list this week.'],
      ]);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('generate a consent link, copy it, and find it in the history with the summaries', async () => {
      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Consent links' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Consent links' }).waitFor();
      await v.page.getByLabel('Asset').selectOption({ label: 'Patient app' });
      await v.page.getByRole('heading', { name: 'By collection point' }).waitFor();
      await shot(v, '08-consent-history');
      const before = Number((await v.page.locator('.stat', { hasText: 'Links' }).locator('.stat-value').textContent())!.replace(/\D/g, ''));

      await v.page.getByRole('link', { name: 'Generate a link' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Generate a link' }).waitFor();
      await v.page.getByLabel('Asset').selectOption({ label: 'Patient app' });
      await v.page.getByLabel('Collection point', { exact: true }).selectOption({ label: 'CP002 · Newsletter' });
      await v.page.getByLabel('Phone').fill('12345');
      await v.page.getByRole('button', { name: 'Generate link' }).click();
      // The API's details show next to the field.
      await v.page.getByText('must be E.164 (+ then 8-15 digits) or a 10-digit national number').waitFor();
      await v.page.getByLabel('Phone').fill('9123456789');
      await v.page.getByLabel('Data principal id').fill('user-link-e2e');
      await v.page.getByLabel('Valid for (hours)').fill('6');
      await v.page.getByRole('button', { name: 'Generate link' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'The link is ready' }).waitFor();
      const link = (await v.page.locator('code.link-value').textContent())!;
      expect(link).toMatch(new RegExp(`^http://${slug}\\.localhost:3000/c/[0-9A-Za-z]{32}$`));
      await v.page.getByRole('button', { name: 'Copy', exact: true }).click();
      expect(await v.page.evaluate(() => navigator.clipboard.readText())).toBe(link);
      await shot(v, '09-consent-link-generated');

      await v.page.getByRole('link', { name: 'See it in the history' }).click();
      await v.page.getByRole('cell', { name: '+********6789' }).waitFor();
      expect(await v.page.locator('.stat', { hasText: 'Links' }).locator('.stat-value').textContent()).toBe('1');
      await v.page.getByRole('button', { name: 'Clear' }).click();
      await v.page.getByText(`of ${(before + 1).toLocaleString('en')}`).waitFor();
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('every other page renders (nominees, assets, a collection point, members, audit log)', async () => {
      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Nominees' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Nominees' }).waitFor();
      await v.page.getByRole('button', { name: /^Verify Asha Rao/, disabled: false }).first().click();
      await v.page.getByText('Asha Rao is verified.').waitFor();
      await shot(v, '10-nominees');

      await v.page.getByRole('link', { name: 'Assets and collection points' }).click();
      await v.page.getByRole('link', { name: 'Patient app' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Patient app' }).waitFor();
      await shot(v, '11-asset');
      await v.page.getByRole('link', { name: 'CP001' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'CP001 · Registration' }).waitFor();
      await v.page.getByRole('button', { name: 'Add a purpose' }).click();
      await v.page.getByRole('group', { name: 'Purpose 3' }).getByLabel('Purpose', { exact: true }).fill('Research');
      await v.page.getByRole('button', { name: 'Save' }).click();
      await v.page.getByText('Notice version: 2').waitFor();
      await shot(v, '12-collection-point');

      await v.page.getByRole('link', { name: 'Members' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Members' }).waitFor();
      await shot(v, '13-members');
      await v.page.getByRole('link', { name: 'Audit log' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      await v.page.getByLabel('Action').selectOption('collection_point.updated');
      await v.page.getByRole('button', { name: 'Apply filters' }).click();
      await v.page.getByText('1–1 of 1').waitFor();
      await shot(v, '14-audit-log');
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test("a member's view is read-only: no keys, members or consent links; no status change", async () => {
      const v = await open();
      await signIn(v, member.email);
      expect(await v.page.getByText('Your role (member) can read everything here but change nothing.').count()).toBe(1);
      const nav = v.page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Grievances', 'Nominees', 'Fulfilment', 'Systems', 'Data categories', 'Assets and collection points']);
      await nav.getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('row').nth(1).getByRole('link').click();
      await v.page.getByRole('heading', { level: 2, name: 'History' }).waitFor();
      expect(await v.page.getByRole('button', { name: 'Change status' }).count()).toBe(0);
      await shot(v, '15-member-ticket');
      await v.page.goto(`${origin}/settings/api-keys`);
      await v.page.getByText('Your role does not allow this.').waitFor();
      await nav.getByRole('link', { name: 'Nominees' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Nominees' }).waitFor();
      expect(await v.page.getByRole('button', { name: /^Verify/ }).count()).toBe(0);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('at phone width the navigation is a menu, and table rows are cards that fit the screen', async () => {
      const v = await open({ width: 390, height: 844 });
      await signIn(v, owner.email);
      await shot(v, '16-phone-overview');
      const nav = v.page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.isVisible()).toBe(false);
      await v.page.getByRole('button', { name: 'Menu' }).click();
      // The next Tab goes to the menu's first link, not past it (issue 30).
      await v.page.keyboard.press('Tab');
      expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('Overview');
      await v.page.keyboard.press('Tab');
      expect(await v.page.evaluate(() => document.activeElement?.textContent)).toBe('Grievances');
      await nav.getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Grievances' }).waitFor();
      expect(await nav.isVisible()).toBe(false);
      // Nothing scrolls sideways; each cell is labelled with its column.
      expect(await v.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      const cell = v.page.getByRole('row').nth(1).locator('td').first();
      expect(await cell.evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Ticket"');
      // Sorting stays available: the sortable headers remain as buttons.
      expect(await v.page.getByRole('button', { name: /Sort by Created/ }).isVisible()).toBe(true);
      await shot(v, '17-phone-grievances');
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('until a contact person is set every page warns; Settings → Contact person sets it and the grievance period (axe clean)', async () => {
      const v = await open();
      await signIn(v, owner.email);
      const warning = v.page.getByTestId('no-contact-person');
      await warning.waitFor();
      expect(await warning.textContent()).toContain('No contact person is set.');
      await v.page.getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Grievances' }).waitFor();
      expect(await warning.isVisible()).toBe(true);
      await warning.getByRole('link', { name: 'Set the contact person' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Contact person' }).waitFor();
      expect(await axeViolations(v.page), 'axe on the empty contact person page').toEqual([]);
      await shot(v, '18-contact-person-empty');

      // The API's problems show beside the field.
      await v.page.getByLabel('Full name').fill('Meera Iyer');
      await v.page.getByLabel('Email').fill('not an email');
      await v.page.getByRole('button', { name: 'Save' }).first().click();
      await v.page.locator('.field-error').first().waitFor();
      expect(await v.page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
      await v.page.getByLabel('Email').fill('dpo@acme.example');
      await v.page.getByLabel('Phone').fill('+919811111111');
      await v.page.getByLabel('Working hours').fill('Mon-Fri 09:00-17:00 IST');
      await v.page.getByLabel('Response time').fill('Within 7 days');
      await v.page.getByRole('button', { name: 'Save' }).first().click();
      await v.page.getByText('The contact person is saved.').waitFor();
      await warning.waitFor({ state: 'detached' });
      const dpo = await request('GET', '/dpo', withKey(adminKey));
      expect(dpo.json).toMatchObject({ full_name: 'Meera Iyer', email: 'dpo@acme.example', phone: '+919811111111', working_hours: 'Mon-Fri 09:00-17:00 IST', response_time: 'Within 7 days', qualifications: null });

      await v.page.getByLabel('Days to answer').fill('45');
      await v.page.getByRole('button', { name: 'Save' }).nth(1).click();
      await v.page.getByText('The grievance period is saved.').waitFor();
      expect((await request('GET', '/api/v1/organization', withKey(adminKey))).json.grievance_period_days).toBe(45);
      await v.page.getByLabel('Days to answer').fill('91');
      await v.page.getByRole('button', { name: 'Save' }).nth(1).click();
      await v.page.locator('.field-error').waitFor();
      expect((await request('GET', '/api/v1/organization', withKey(adminKey))).json.grievance_period_days).toBe(45);
      expect(await axeViolations(v.page), 'axe on the contact person page').toEqual([]);
      await shot(v, '19-contact-person');
      // Set back to the default for the other tests' due dates.
      await request('PATCH', '/api/v1/organization', withKey(adminKey), { grievance_period_days: 30 });
      await v.page.reload();
      await v.page.getByRole('heading', { level: 1, name: 'Contact person' }).waitFor();
      expect(await v.page.getByLabel('Full name').inputValue()).toBe('Meera Iyer');
      expect(await warning.count()).toBe(0);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('Settings → Signing keys lists and rotates; audit actions have labels; wide tables fit at 1280 px (axe clean)', async () => {
      // A token minted and a contact recorded for a data principal: two audit actions with their labels.
      expect((await request('PUT', '/api/v1/data-principals/user-audit', withKey(adminKey), { phone: '+919812345678' })).status).toBeLessThan(300);
      expect((await request('POST', '/api/v1/data-principals/user-audit/tokens', withKey(adminKey), {})).status).toBe(201);
      const before = (await request('GET', '/api/v1/organization/signing-keys', withKey(adminKey))).json as { kid: string; current: boolean }[];

      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Signing keys' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Signing keys' }).waitFor();
      const current = before.find((k) => k.current)!.kid;
      await v.page.getByRole('cell', { name: current }).waitFor();
      expect(await v.page.getByRole('row').filter({ hasText: current }).getByText('Current').count()).toBe(1);
      expect(await axeViolations(v.page), 'axe on signing keys').toEqual([]);
      await v.page.getByRole('button', { name: 'Rotate the key' }).click();
      const dialog = v.page.getByRole('dialog', { name: 'Rotate the signing key?' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Rotate the key' }).click();
      await v.page.getByText(/^Receipts are now signed with key /).waitFor();
      const after = (await request('GET', '/api/v1/organization/signing-keys', withKey(adminKey))).json as { kid: string; current: boolean }[];
      expect(after).toHaveLength(before.length + 1);
      const fresh = after.find((k) => k.current)!.kid;
      expect(fresh).not.toBe(current);
      await v.page.getByRole('row').filter({ hasText: fresh }).getByText('Current').waitFor();
      expect(await v.page.getByRole('row').filter({ hasText: current }).getByText('Retired').count()).toBe(1);
      expect(await axeViolations(v.page), 'axe after rotating').toEqual([]);
      await shot(v, '20-signing-keys');

      await v.page.getByRole('link', { name: 'Audit log' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      for (const [action, text] of [
        ['data_principal.token_issued', 'Access token issued to a data principal'],
        ['data_principal.contact_created', "Data principal's contact details added"],
      ] as const) {
        await v.page.getByLabel('Action').selectOption(action);
        expect(await v.page.getByLabel('Action').locator('option:checked').textContent()).toBe(text);
        await v.page.getByRole('button', { name: 'Apply filters' }).click();
        await v.page.waitForURL(new RegExp(`action=${action.replace('.', '\\.')}`));
        await v.page.getByRole('cell', { name: text }).first().waitFor();
        expect(await v.page.getByRole('cell', { name: action, exact: true }).count()).toBe(0);
      }
      await v.page.getByRole('button', { name: 'Clear' }).click();
      await v.page.getByText(/of \d+/).first().waitFor();

      // At 1280 px every wide table shows all its columns: nothing overflows its frame or the page.
      const fits = async (name: string) => {
        const frames = await v.page.locator('.table-frame').evaluateAll((els) => els.map((el) => ({ scroll: el.scrollWidth, client: el.clientWidth })));
        expect(frames.length, name).toBeGreaterThan(0);
        for (const f of frames) expect(f.scroll, `${name}: a table wider than its frame`).toBeLessThanOrEqual(f.client + 1);
        expect(await v.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: the page scrolls sideways`).toBe(true);
        expect(await axeViolations(v.page), `axe on ${name}`).toEqual([]);
      };
      await fits('audit log');
      await shot(v, '21-audit-1280');
      await v.page.getByRole('link', { name: 'Grievances' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Grievances' }).waitFor();
      await v.page.getByRole('row').nth(1).waitFor();
      await fits('grievances');
      await shot(v, '22-grievances-1280');
      await v.page.getByRole('link', { name: 'Consent links' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Consent links' }).waitFor();
      await v.page.getByLabel('Asset').selectOption({ label: 'Patient app' });
      await v.page.getByRole('heading', { name: 'By collection point' }).waitFor();
      await v.page.getByRole('cell', { name: /^\+\*+/ }).first().waitFor();
      await fits('consent link history');
      await shot(v, '23-history-1280');
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('Fulfilment lists the tasks per request and per system with what blocks them; a failed task is retried (axe clean)', async () => {
      // A data map, an access request fanning out to its systems, and one task failed by its system.
      const category = (await request('POST', '/api/v1/data-categories', withKey(adminKey), { key: 'records', name: 'Health records' })).json as { id: string };
      const crm = (await request('POST', '/api/v1/systems', withKey(adminKey), { name: 'Patient CRM', owner: 'Front desk', category_ids: [category.id], can_access: true })).json as { id: string };
      await request('POST', '/api/v1/systems', withKey(adminKey), { name: 'Paper files', owner: 'Records room', category_ids: [category.id] });
      const ticket = (await request('POST', '/grievance', withKey(adminKey), { client_user_id: 'user-fulfil', subject: 'Copy of my data', description: 'Please send a copy.', category: 'data_access' })).json as { ticket_id: string };
      const claimed = (await request('POST', '/api/v1/fulfilment/tasks/claim', withKey(adminKey), { system_id: crm.id })).json as { data: { id: string; lease_id: string }[] };
      expect((await request('POST', `/api/v1/fulfilment/tasks/${claimed.data[0]!.id}/fail`, withKey(adminKey), { lease_id: claimed.data[0]!.lease_id, reason: 'CRM export timed out' })).status).toBe(200);

      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Fulfilment' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Fulfilment' }).waitFor();
      const failedRow = v.page.getByRole('row').filter({ hasText: 'Patient CRM' }).filter({ hasText: ticket.ticket_id });
      await failedRow.waitFor();
      expect(await failedRow.textContent()).toContain('CRM export timed out');
      const manualRow = v.page.getByRole('row').filter({ hasText: 'Paper files' }).filter({ hasText: ticket.ticket_id });
      expect(await manualRow.textContent()).toContain('Waits for a member to do it in Paper files');
      expect(await axeViolations(v.page), 'axe on fulfilment').toEqual([]);
      await shot(v, '24-fulfilment');
      await failedRow.getByRole('button', { name: /Retry/ }).click();
      await v.page.getByText(`The Patient CRM task of ${ticket.ticket_id} is back in the queue.`).waitFor();
      await failedRow.getByText('Queued').waitFor();
      expect(await axeViolations(v.page), 'axe after the retry').toEqual([]);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('the data map: declare a category, register a system that holds it, make its key, archive it; a member reads both (axe clean)', async () => {
      const v = await open();
      await signIn(v, owner.email);
      await v.page.getByRole('link', { name: 'Data categories' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Data categories' }).waitFor();
      await v.page.getByLabel('Key', { exact: true }).fill('billing_data');
      await v.page.getByLabel('Name', { exact: true }).fill('Billing data');
      await v.page.getByLabel('Purposes').fill('Invoicing\nRefunds');
      await v.page.getByLabel('Kept for (days)').fill('2920');
      await v.page.getByLabel('Why it is kept').fill('Income Tax Act s.44AA');
      await v.page.getByRole('button', { name: 'Declare the category' }).click();
      await v.page.getByText('The category Billing data is declared.').waitFor();
      expect(await v.page.getByRole('row').filter({ hasText: 'billing_data' }).textContent()).toContain('2920 days: Income Tax Act s.44AA');
      expect(await axeViolations(v.page), 'axe on data categories').toEqual([]);
      await shot(v, '25-data-categories');
      // Edit: the form is filled with the category; the key stays.
      await v.page.getByRole('button', { name: /^Edit\s*the category Billing data$/ }).click();
      await v.page.getByRole('heading', { level: 2, name: 'Edit Billing data' }).waitFor();
      await v.page.getByLabel('Name', { exact: true }).fill('Billing records');
      await v.page.getByRole('button', { name: 'Save changes' }).click();
      await v.page.getByText('The category Billing records is saved.').waitFor();
      expect(await axeViolations(v.page), 'axe after an edit').toEqual([]);

      await v.page.getByRole('link', { name: 'Systems' }).click();
      await v.page.getByRole('heading', { level: 1, name: 'Systems' }).waitFor();
      await v.page.getByLabel('Name', { exact: true }).fill('Ledger');
      await v.page.getByLabel('Owner', { exact: true }).fill('Finance');
      await v.page.getByLabel('Billing records').check();
      await v.page.getByLabel('Processors').fill('PayCo');
      await v.page.getByLabel('Access requests').check();
      await v.page.getByRole('button', { name: 'Register the system' }).click();
      await v.page.getByText('The system Ledger is registered.').waitFor();
      const ledger = v.page.getByRole('row').filter({ hasText: 'Ledger' });
      expect(await ledger.textContent()).toContain('Billing records');
      expect(await axeViolations(v.page), 'axe on systems').toEqual([]);
      await shot(v, '26-systems');
      await ledger.getByRole('button', { name: /^Create a key\s*for the system Ledger$/ }).click();
      const key = await v.page.getByTestId('system-key').textContent();
      expect(key).toMatch(/^ask_live_/);
      expect(await axeViolations(v.page), 'axe with the key shown').toEqual([]);
      // The key is the system's: it claims that system's tasks only.
      expect((await request('POST', '/api/v1/fulfilment/tasks/claim', withKey(key!), {})).status).toBe(200);
      await v.page.getByRole('button', { name: 'I have stored it' }).click();
      await ledger.getByRole('button', { name: /^Archive\s*the system Ledger$/ }).click();
      await v.page.getByRole('dialog', { name: 'Archive Ledger?' }).getByRole('button', { name: 'Archive' }).click();
      await v.page.getByText('The system Ledger is archived: it gets no new tasks.').waitFor();
      await ledger.getByText('Archived').waitFor();
      expect(await axeViolations(v.page), 'axe after archiving').toEqual([]);
      expect(v.problems).toEqual([]);
      await v.context.close();

      const m = await open();
      await signIn(m, member.email);
      await m.page.getByRole('link', { name: 'Systems' }).click();
      await m.page.getByRole('row').filter({ hasText: 'Ledger' }).waitFor();
      expect(await m.page.getByRole('button', { name: /Register|Edit|Archive|Create a key/ }).count()).toBe(0);
      expect(await axeViolations(m.page), "axe on a member's systems page").toEqual([]);
      await m.page.getByRole('link', { name: 'Data categories' }).click();
      await m.page.getByRole('row').filter({ hasText: 'billing_data' }).waitFor();
      expect(await m.page.getByRole('button', { name: /Declare|Edit|Delete/ }).count()).toBe(0);
      expect(m.problems).toEqual([]);
      await m.context.close();

      // A browser that asks for Hindi gets the dashboard in Hindi (html lang="hi"), these pages included.
      const h = await open({ locale: 'hi-IN' });
      await h.page.goto(`${origin}/`);
      await h.page.getByLabel('ईमेल').fill(owner.email);
      await h.page.getByLabel('पासवर्ड').fill(PASSWORD);
      await h.page.getByRole('button', { name: 'साइन इन' }).click();
      await h.page.getByRole('heading', { level: 1, name: 'सारांश' }).waitFor();
      expect(await h.page.evaluate(() => document.documentElement.lang)).toBe('hi');
      await h.page.getByRole('link', { name: 'सिस्टम' }).click();
      await h.page.getByRole('heading', { level: 1, name: 'सिस्टम' }).waitFor();
      expect(await h.page.getByRole('row').filter({ hasText: 'Ledger' }).textContent()).toContain('संग्रहित');
      await h.page.getByRole('heading', { level: 2, name: 'सिस्टम पंजीकृत करें' }).waitFor();
      expect(await axeViolations(h.page), 'axe on the systems page in Hindi').toEqual([]);
      await shot(h, '26a-systems-hi');
      await h.page.getByRole('link', { name: 'डेटा श्रेणियाँ' }).click();
      await h.page.getByRole('heading', { level: 1, name: 'डेटा श्रेणियाँ' }).waitFor();
      expect(await h.page.getByRole('row').filter({ hasText: 'billing_data' }).textContent()).toContain('2920 दिन: Income Tax Act s.44AA');
      expect(await axeViolations(h.page), 'axe on the data categories page in Hindi').toEqual([]);
      expect(h.problems).toEqual([]);
      await h.context.close();
    });

    test("a request's tasks and transitions on its ticket page, with what blocks each; a failed task is retried there (axe clean)", async () => {
      const category = (await request('POST', '/api/v1/data-categories', withKey(adminKey), { key: 'orders', name: 'Order history' })).json as { id: string };
      const shop = (await request('POST', '/api/v1/systems', withKey(adminKey), { name: 'Shop database', owner: 'Commerce', category_ids: [category.id], can_access: true })).json as { id: string };
      await request('POST', '/api/v1/systems', withKey(adminKey), { name: 'Call recordings', owner: 'Support', category_ids: [category.id] });
      const ticket = (await request('POST', '/grievance', withKey(adminKey), { client_user_id: 'user-panel', subject: 'My order history', description: 'Please send a copy.', category: 'data_access' })).json as { ticket_id: string };
      const claimed = (await request('POST', '/api/v1/fulfilment/tasks/claim', withKey(adminKey), { system_id: shop.id })).json as { data: { id: string; lease_id: string }[] };
      expect((await request('POST', `/api/v1/fulfilment/tasks/${claimed.data[0]!.id}/fail`, withKey(adminKey), { lease_id: claimed.data[0]!.lease_id, reason: 'Shop export timed out' })).status).toBe(200);

      const v = await open();
      await signIn(v, owner.email);
      // The organization lets verified nominees act for the person (off by default).
      await v.page.getByRole('link', { name: 'Fulfilment' }).click();
      await v.page.getByLabel(/A verified nominee may act for the person/).check();
      await v.page.getByRole('form', { name: 'Fulfilment settings' }).getByRole('button', { name: 'Save' }).click();
      await v.page.getByText('Saved.').waitFor();
      expect((await request('GET', '/api/v1/fulfilment/settings', withKey(adminKey))).json).toEqual({ erase_on_withdrawal: false, nominees_may_act: true });
      await v.page.goto(`${origin}/grievances/${ticket.ticket_id}`);
      await v.page.getByRole('heading', { level: 2, name: 'Fulfilment of this request' }).waitFor();
      const tasks = v.page.getByRole('table', { name: 'Tasks of this request' });
      const failed = tasks.getByRole('row').filter({ hasText: 'Shop database' });
      await failed.waitFor();
      expect(await failed.textContent()).toContain('Failed: Shop export timed out. Retry it once the cause is fixed.');
      expect(await tasks.getByRole('row').filter({ hasText: 'Call recordings' }).textContent()).toContain('Waits for a member to do it in Call recordings');
      const steps = v.page.getByRole('table', { name: 'Task transitions of this request, oldest first' });
      expect(await steps.getByRole('row').filter({ hasText: 'Shop export timed out' }).textContent()).toContain('Failed');
      expect(await axeViolations(v.page), 'axe on the ticket with its tasks').toEqual([]);
      await shot(v, '27-ticket-fulfilment');
      await failed.getByRole('button', { name: /Retry/ }).click();
      await v.page.getByText(`The Shop database task of ${ticket.ticket_id} is back in the queue.`).waitFor();
      await failed.getByText('Queued').waitFor();
      await steps.getByRole('row').filter({ hasText: 'Retried' }).waitFor();
      expect(await axeViolations(v.page), 'axe after the retry').toEqual([]);
      expect(v.problems).toEqual([]);
      await v.context.close();
    });

    test('the bare domain asks which organization, and sends you there', async () => {
      const v = await open();
      await v.page.goto(`http://localhost:${port}/`);
      expect(await heading(v)).toBe('Which organization?');
      await v.page.getByLabel('Organization').fill(slug);
      await v.page.getByRole('button', { name: 'Continue' }).click();
      await v.page.waitForURL(`${origin}/`);
      await v.page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(v.problems).toEqual([]);
      await v.context.close();
    });
  },
);
