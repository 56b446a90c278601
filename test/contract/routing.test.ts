// Unknown paths and wrong methods (issue 20 item 6), over the app's whole route table: a path that
// exists under other methods answers 405 with `Allow`, and an API client (an API key, an Authorization
// header, or JSON preferred to HTML) never gets the dashboard's HTML: for it the pages are the JSON 404.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DASHBOARD_PAGES } from '../../src/features/dashboard/index.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const INDEX = '<!doctype html><html><head><title>Assent</title>\n  </head><body><div id="root"></div></body></html>';
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

let dir: string;
let t: TestApp;
let org: Awaited<ReturnType<TestApp['tenant']>>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'assent-routing-'));
  mkdirSync(join(dir, '_app'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  t = await buildTestApp({ webDir: dir });
  org = await t.tenant(['admin']);
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A concrete path for a route pattern: every parameter and wildcard a value no static route uses. */
const sample = (url: string) => url.replace(/:[A-Za-z0-9_]+(\([^)]*\))?/g, 'x1y2').replace(/\*$/, 'x1y2.js');
const allowOf = (header: unknown) => new Set(String(header).split(', '));

describe('API clients never get the dashboard', () => {
  const clients: [string, () => Record<string, string>][] = [
    ['a valid API key', () => ({ 'x-api-key': org.key })],
    ['a wrong API key', () => ({ 'x-api-key': 'ask_live_wrong' })],
    ['a Bearer token', () => ({ authorization: 'Bearer not-a-token' })],
    ['Accept: application/json', () => ({ accept: 'application/json' })],
    ['Accept preferring JSON', () => ({ accept: 'text/html;q=0.5, application/json' })],
  ];
  test.each(clients)('with %s, every dashboard page on the organization host is the JSON 404', async (_, headers) => {
    for (const page of DASHBOARD_PAGES) {
      const path = sample(page);
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await t.call({ method, url: `${path}?x=1`, org: org.host, headers: headers() });
        expect(res.statusCode, `${method} ${path}`).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        if (method === 'GET') expect(res.json()).toEqual({ error: `No such endpoint: GET ${path}`, code: 'route_not_found' });
      }
      // Other methods on a page path: still 404 for an API client (the page is not there for it).
      const post = await t.call({ method: 'POST', url: path, org: org.host, headers: headers(), body: {} });
      expect(post.statusCode, `POST ${path}`).toBe(404);
      expect(post.json().code).toBe('route_not_found');
    }
  });

  test('the issue\'s case: GET /grievances with the key is the JSON 404, not the dashboard with 200', async () => {
    const res = await t.call({ method: 'GET', url: '/grievances', org: org.host, key: org.key });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No such endpoint: GET /grievances', code: 'route_not_found' });
  });

  test.each([
    ['no Accept header (curl)', {}],
    ['Accept: */*', { accept: '*/*' }],
    ['a browser', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }],
    ['JSON and HTML alike', { accept: 'application/json, text/html' }],
  ])('with %s, the pages are the dashboard', async (_, headers: Record<string, string>) => {
    for (const page of DASHBOARD_PAGES) {
      const res = await t.call({ method: 'GET', url: sample(page), org: org.host, headers });
      expect(res.statusCode, page).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="root">');
    }
  });
});

describe('405 with Allow, walked over the route table', () => {
  test('the table holds the app: API routes, pages and their HEAD routes', () => {
    const urls = new Set(t.app.routeIndex.routes.map((r) => r.url));
    for (const url of ['/grievance', '/grievance/:ticket_id', '/api/v1/api-keys', '/health', ...DASHBOARD_PAGES]) expect(urls, url).toContain(url);
    expect(t.app.routeIndex.routes.filter((r) => r.page).map((r) => r.url).sort()).toEqual(
      DASHBOARD_PAGES.flatMap((p) => [p, p]).sort(), // GET and HEAD
    );
  });

  test('every path answers each method it does not take with 405, Allow naming exactly the methods routed there; API clients leave pages out', async () => {
    // What the router has at each sample path: the methods of every route whose pattern matches it
    // (patterns overlap: GET /rights/:page also matches /rights/otp, which POST /rights/otp names).
    const byPath = new Map<string, { all: Set<string>; api: Set<string> }>();
    for (const path of new Set(t.app.routeIndex.routes.map((r) => sample(r.url)))) {
      const matching = t.app.routeIndex.routes.filter((r) => r.pattern.test(path));
      byPath.set(path, { all: new Set(matching.map((r) => r.method)), api: new Set(matching.filter((r) => !r.page).map((r) => r.method)) });
    }
    expect(byPath.size).toBeGreaterThan(40);
    let checked = 0;
    for (const [path, { all, api }] of byPath) {
      for (const method of METHODS) {
        // A browser-like request (no credentials, no Accept).
        const res = await t.call({ method, url: path, org: org.host });
        if (all.has(method)) {
          expect(res.statusCode, `${method} ${path}`).not.toBe(405);
          // (A wildcard's file that does not exist is a 404 of its own: /_app/*, /docs/static/*; the
          // consent page answers an unknown link with its HTML 404.)
          // (HEAD carries no body to read: a 404 of a record, such as an organization's first checkpoint, is checked on GET.)
          if (res.statusCode === 404 && method !== 'HEAD' && /json/.test(String(res.headers['content-type'])) && !path.endsWith('x1y2.js')) {
            expect(res.json().code, `${method} ${path}`).not.toBe('route_not_found');
          }
        } else {
          expect(res.statusCode, `${method} ${path}`).toBe(405);
          expect(allowOf(res.headers.allow), `${method} ${path}`).toEqual(all);
          if (method !== 'HEAD') expect(res.json()).toEqual({ error: `${method} is not allowed on ${path}: it takes ${String(res.headers.allow)}`, code: 'method_not_allowed' });
          checked++;
        }
        // An API client (a wrong key: it gets no further than the router or the access check).
        if (all.has(method)) continue;
        const asApi = await t.call({ method, url: path, org: org.host, key: 'ask_live_wrong' });
        if (api.size === 0) {
          expect(asApi.statusCode, `API ${method} ${path}`).toBe(404);
        } else {
          expect(asApi.statusCode, `API ${method} ${path}`).toBe(405);
          expect(allowOf(asApi.headers.allow)).toEqual(api);
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  test('the examples of the docs: DELETE /grievance takes POST; an unknown path stays 404', async () => {
    const del = await t.call({ method: 'DELETE', url: '/grievance', org: org.host, key: org.key });
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('POST');
    expect(del.json()).toEqual({ error: 'DELETE is not allowed on /grievance: it takes POST', code: 'method_not_allowed' });
    const put = await t.call({ method: 'PUT', url: '/grievance/user/u-1?x=1', org: org.host, key: org.key, body: {} });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD');
    const unknown = await t.call({ method: 'GET', url: '/grievance/user/u-1/tickets', org: org.host, key: org.key });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('route_not_found');
  });
});
