// Strict-Transport-Security (issue 35 item 4): the Rights Center, the consent page and the dashboard send
// it only over https: the connection's own, or X-Forwarded-Proto from a proxy that TRUST_PROXY names.
// Over plain http, and when an untrusted client claims https, they send none.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

const PAGES = ['/rights', '/rights/nowhere', `/c/${'A'.repeat(32)}`, '/', '/grievances'];
const HSTS = 'max-age=31536000; includeSubDomains';

describe('without TRUST_PROXY', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t?.close());

  test('no HSTS over http, and none when the client itself claims https', async () => {
    const a = await t.tenant();
    for (const url of PAGES) {
      for (const extra of [{}, { 'x-forwarded-proto': 'https' }]) {
        const res = await t.app.inject({ method: 'GET', url, headers: { host: a.host, ...extra } });
        expect(res.statusCode, url).toBeLessThan(500);
        expect(res.headers['strict-transport-security'], `${url} ${JSON.stringify(extra)}`).toBeUndefined();
      }
    }
  });
});

describe('behind a trusted proxy (TRUST_PROXY=1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { TRUST_PROXY: '1' } });
  });
  afterAll(async () => t?.close());

  test('HSTS when the proxy says the request came over https; none when it came over http', async () => {
    const a = await t.tenant();
    for (const url of PAGES) {
      const https = await t.app.inject({ method: 'GET', url, headers: { host: a.host, 'x-forwarded-proto': 'https' } });
      expect(https.headers['strict-transport-security'], url).toBe(HSTS);
      const http = await t.app.inject({ method: 'GET', url, headers: { host: a.host, 'x-forwarded-proto': 'http' } });
      expect(http.headers['strict-transport-security'], url).toBeUndefined();
    }
    // A form's answer too (the sign-in page again, 403 without CSRF).
    const post = await t.app.inject({ method: 'POST', url: '/rights/sign-in', headers: { host: a.host, 'x-forwarded-proto': 'https', 'content-type': 'application/x-www-form-urlencoded' }, payload: 'contact=x' });
    expect(post.statusCode).toBe(403);
    expect(post.headers['strict-transport-security']).toBe(HSTS);
  });
});
