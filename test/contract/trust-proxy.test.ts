// Behind proxies (issue 21, class 9): TRUST_PROXY is a number of hops or a list of proxy addresses, never
// "trust everything". A client that forges X-Forwarded-For entries cannot reset the per-address limits:
// the address counted is the one our own proxy appended, and a peer that is not a listed proxy is
// counted by its own address whatever it sends.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, parseTrustProxy } from '../../src/config.js';
import { buildTestApp, type TestApp } from '../support/app.js';

const PASSWORD = 'a long enough password';

describe('TRUST_PROXY values', () => {
  test('a number of hops, a list of addresses and ranges, or nothing', () => {
    for (const off of [undefined, '', '0', 'false', 'no', 'off']) expect(parseTrustProxy(off)).toBe(false);
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'loopback']);
    expect(loadConfig({ TRUST_PROXY: '1' })).toMatchObject({ trustProxy: true, trustedProxies: 1 });
    expect(loadConfig({})).toMatchObject({ trustProxy: false, trustedProxies: false });
  });

  test('"true" (every hop) and anything that is not an address is refused with what to set', () => {
    for (const bad of ['true', 'yes', 'on']) {
      expect(() => parseTrustProxy(bad)).toThrow(ConfigError);
      expect(() => parseTrustProxy(bad)).toThrow(/TRUST_PROXY=1.*TRUST_PROXY=10\.0\.0\.0\/8/);
    }
    for (const bad of ['proxy.internal', '10.0.0.0/33', '300.1.1.1', '10.0.0.1/8/9', '21']) {
      expect(() => parseTrustProxy(bad)).toThrow(ConfigError);
    }
    expect(() => parseTrustProxy('proxy.internal')).toThrow(/"proxy.internal" is neither/);
  });
});

const org = (t: TestApp, a: { host: string; key: string }, remoteAddress: string, forwardedFor?: string, extra: Record<string, string> = {}) =>
  t.app.inject({
    method: 'GET',
    url: '/api/v1/organization',
    remoteAddress,
    headers: { host: a.host, 'x-api-key': a.key, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}), ...extra },
  });

describe('TRUST_PROXY=1 (one proxy in front)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { TRUST_PROXY: '1', RATE_LIMIT_PER_ADDRESS: '5' } });
  });
  afterAll(async () => t?.close());

  test('forged entries on the left of X-Forwarded-For do not reset the per-address limit', async () => {
    const a = await t.tenant();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await org(t, a, '127.0.0.1', `198.51.100.${i + 1}, 203.0.113.7`)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // The client our proxy saw next is another address, with its own count.
    expect((await org(t, a, '127.0.0.1', '198.51.100.1, 203.0.113.8')).statusCode).toBe(200);
  });

  test('login failures are counted for the address the proxy appended, not a forged one', async () => {
    const email = `proxy-${Date.now()}@example.com`;
    await t.app.services.users.createUser({ email, password: PASSWORD });
    const login = (forwardedFor: string, password: string) =>
      t.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '127.0.0.1', headers: { host: 'localhost', 'x-forwarded-for': forwardedFor }, payload: { email, password } });
    for (let i = 0; i < 10; i++) expect((await login(`192.0.2.${i + 1}, 203.0.113.20`, 'wrong password')).statusCode).toBe(401);
    expect((await login('192.0.2.99, 203.0.113.20', PASSWORD)).statusCode).toBe(429);
    // The owner, from another address, is not held back.
    expect((await login('203.0.113.21', PASSWORD)).statusCode).toBe(200);
  });

  test('X-Forwarded-Host: the entry our proxy set (the last) names the organization', async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/organization',
      remoteAddress: '127.0.0.1',
      headers: { host: 'proxy.internal', 'x-api-key': a.key, 'x-forwarded-for': '203.0.113.30', 'x-forwarded-host': `${b.host}, ${a.host}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().slug).toBe(a.slug);
  });
});

describe('TRUST_PROXY=10.9.0.0/16 (a list of proxies)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { TRUST_PROXY: '10.9.0.0/16', RATE_LIMIT_PER_ADDRESS: '3' } });
  });
  afterAll(async () => t?.close());

  test('a peer that is not a listed proxy is counted by its own address, whatever X-Forwarded-For says', async () => {
    const a = await t.tenant();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await org(t, a, '192.0.2.50', `198.51.100.${i + 1}`)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  test('through a listed proxy, the client before it is counted; forged entries before that are not trusted', async () => {
    const a = await t.tenant();
    const statuses: number[] = [];
    // Two proxies of the list (10.9.0.1 the peer, 10.9.0.2 before it): the client is 203.0.113.40.
    for (let i = 0; i < 4; i++) statuses.push((await org(t, a, '10.9.0.1', `198.51.100.${i + 1}, 203.0.113.40, 10.9.0.2`)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await org(t, a, '10.9.0.1', '203.0.113.41, 10.9.0.2')).statusCode).toBe(200);
  });

  test('X-Forwarded-Host is read from a listed proxy only', async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const call = (remoteAddress: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/organization', remoteAddress, headers: { host: a.host, 'x-api-key': a.key, 'x-forwarded-host': b.host } });
    // From a peer that is not a proxy the header is ignored: a's host, a's key.
    const direct = await call('192.0.2.60');
    expect(direct.statusCode).toBe(200);
    expect(direct.json().slug).toBe(a.slug);
    // From a listed proxy it names the host: b's host with a's key is refused.
    const proxied = await call('10.9.0.1');
    expect(proxied.statusCode).toBe(401);
  });
});
