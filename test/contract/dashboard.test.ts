// Serving the dashboard: index.html on every page path of any host (with the base domain named in it),
// hashed bundles from /_app/ cached for a year and pre-compressed, a strict CSP on these responses only,
// nothing outside web/dist reachable, and a clear 503 when the dashboard was never built.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DASHBOARD_PAGES } from '../../src/features/dashboard/index.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const INDEX = '<!doctype html><html><head><title>Assent</title>\n  </head><body><div id="root"></div><script type="module" src="/_app/index-abc123.js"></script></body></html>';
const BUNDLE = `console.log(${JSON.stringify('x'.repeat(4000))});`;

let dir: string;
let t: TestApp;
let unbuilt: TestApp;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'assent-web-'));
  mkdirSync(join(dir, '_app'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, '_app', 'index-abc123.js'), BUNDLE);
  writeFileSync(join(dir, '_app', 'index-abc123.js.br'), brotliCompressSync(BUNDLE));
  writeFileSync(join(dir, '_app', 'index-abc123.js.gz'), gzipSync(BUNDLE));
  writeFileSync(join(dir, 'secret.txt'), 'not for the web');
  t = await buildTestApp({ webDir: dir });
  unbuilt = await buildTestApp({ webDir: join(dir, 'missing') });
});
afterAll(async () => {
  await t?.close();
  await unbuilt?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (app: TestApp, url: string, host?: string, headers: Record<string, string> = {}) => app.call({ method: 'GET', url, org: host, headers });
const samplePath = (p: string) => p.replace(/:[a-z_]+/g, 'GRV-ABCD1234');

describe('pages', () => {
  test('every page path answers index.html, revalidated, naming the base domain; on an organization host and the bare domain', async () => {
    for (const path of DASHBOARD_PAGES) {
      for (const host of ['acme.localhost', undefined]) {
        const res = await get(t, samplePath(path), host);
        expect(res.statusCode, `${path} on ${host ?? 'the bare domain'}`).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['cache-control']).toBe('no-cache');
        expect(res.body).toBe(INDEX.replace('</head>', '  <meta name="assent-base-domain" content="localhost" />\n  </head>'));
        expect(res.headers['x-request-id']).toBeTruthy();
      }
    }
  });

  test('a strict Content-Security-Policy: own scripts, styles and API only, no framing', async () => {
    const res = await get(t, '/grievances', 'acme.localhost');
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';font-src 'self';object-src 'none';form-action 'self';frame-ancestors 'none';base-uri 'none'",
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
  });

  test("the API's responses do not carry the dashboard's headers", async () => {
    const res = await get(t, '/health');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBeUndefined();
  });

  test('a path that is neither a page nor an endpoint is the JSON 404', async () => {
    const res = await get(t, '/no-such-page', 'acme.localhost');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No such endpoint: GET /no-such-page', code: 'route_not_found' });
  });
});

describe('bundles under /_app/', () => {
  test('cached for a year as immutable; brotli or gzip when the browser takes it', async () => {
    const plain = await get(t, '/_app/index-abc123.js', 'acme.localhost');
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toBe(BUNDLE);
    expect(plain.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await get(t, '/_app/index-abc123.js', 'acme.localhost', { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(Number(br.headers['content-length'])).toBeLessThan(BUNDLE.length / 10);
    const gz = await get(t, '/_app/index-abc123.js', 'acme.localhost', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
  });

  test('an unknown bundle is a 404; nothing outside _app/ is reachable through it', async () => {
    expect((await get(t, '/_app/nope.js')).statusCode).toBe(404);
    for (const url of ['/_app/../secret.txt', '/_app/..%2fsecret.txt', '/_app/%2e%2e/secret.txt', '/secret.txt', '/_app/../index.html']) {
      const res = await get(t, url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.body).not.toContain('not for the web');
    }
  });
});

describe('not built', () => {
  test('pages answer 503 saying how to build it; the API works as ever', async () => {
    const res = await get(unbuilt, '/', 'acme.localhost');
    expect(res.statusCode).toBe(503);
    expect(res.body).toBe('The dashboard is not built: run `npm run build` in the Assent checkout, then restart.\n');
    expect((await get(unbuilt, '/health')).statusCode).toBe(200);
    expect((await get(unbuilt, '/_app/index-abc123.js')).statusCode).toBe(404);
  });
});
