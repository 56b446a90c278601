// Classes of hostile input (issue 21, classes 1-7), each tried on every route of the app's route table
// with valid credentials: deep JSON, integers past PostgreSQL's range, timestamps PostgreSQL refuses,
// NUL and lone surrogates, 255-character ids by path, empty query values, bodiless DELETE/GET announcing
// JSON. None may answer 5xx; where the class is refused, it is a 400 validation error.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';
import {
  authHeaders,
  credentials,
  isType,
  routes,
  sampleBody,
  schemaFields,
  setAt,
  stringLeaves,
  urlFor,
  type Credentials,
  type Route,
} from '../support/routes.js';

let t: TestApp;
let c: Credentials;
let all: Route[];
beforeAll(async () => {
  // The per-key and per-address rate limits are not under test here: thousands of requests on one key.
  t = await buildTestApp({ env: { RATE_LIMIT_PER_KEY: '10000000', RATE_LIMIT_PER_ADDRESS: '10000000' } });
  c = await credentials(t);
  // Routes that take only a data principal's token answer these credentials 401 before validation: the
  // fuzzing suite (test/fuzz) still sends them everything; here every route must reach validation.
  all = routes(t).filter((r) => r.access === 'public' || r.access.apiKey || r.access.bearer);
});
afterAll(async () => t?.close());

interface Sent {
  route: Route;
  url: string;
  body?: string;
  headers?: Record<string, string>;
}

async function send({ route, url, body, headers = {} }: Sent) {
  const res = await t.app.inject({
    method: route.method as 'GET',
    url,
    headers: { host: c.org.host, ...authHeaders(route, c), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: body }),
  });
  const label = `${route.method} ${url.slice(0, 120)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
  expect(res.statusCode, label).toBeLessThan(500);
  // The consent page and the dashboard answer a browser with an HTML page; every API answer is JSON.
  const html = /^text\/html/.test(String(res.headers['content-type'])) && !/^\/(api|auth|grievance|nominee)/.test(url);
  if (res.statusCode >= 400 && !html) {
    expect(res.headers['content-type'], label).toMatch(/^application\/json/);
    expect(typeof res.json().error, label).toBe('string');
  }
  return { status: res.statusCode, code: res.statusCode >= 400 && !html ? (res.json().code as string) : undefined, label, html };
}

const withBody = () => all.filter((r) => r.body && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));

test('the route table is the whole app (sanity: the walk covers many routes)', () => {
  expect(all.length).toBeGreaterThan(40);
  expect(withBody().length).toBeGreaterThan(15);
});

describe('class 1: deep JSON', () => {
  const deepArray = '['.repeat(2200) + ']'.repeat(2200);
  const deepObject = '{"a":'.repeat(2200) + '1' + '}'.repeat(2200);
  test('every route that takes a body refuses 2,200 levels with 400, without credentials too', async () => {
    for (const route of withBody()) {
      for (const body of [deepArray, deepObject]) {
        const r = await send({ route, url: urlFor(route), body });
        expect(r.status, r.label).toBe(400);
        // And without credentials: still never a 500.
        const res = await t.app.inject({ method: route.method as 'POST', url: urlFor(route), headers: { host: c.org.host, 'content-type': 'application/json' }, payload: body });
        expect(res.statusCode, `${route.method} ${route.url} anonymous`).toBeLessThan(500);
      }
    }
  });
  test('a deep value inside an otherwise valid body is refused by the shared rule', async () => {
    for (const route of withBody()) {
      const base = sampleBody(route);
      if (!base || typeof base !== 'object' || Array.isArray(base)) continue;
      const first = Object.keys(base)[0];
      if (!first) continue;
      let deep: unknown = 'x';
      for (let i = 0; i < 100; i++) deep = [deep];
      const r = await send({ route, url: urlFor(route), body: JSON.stringify(setAt(base, [first], deep)) });
      expect(r.status, r.label).toBe(400);
    }
  });
});

describe('class 2: integers past int4/int8 and non-finite numbers', () => {
  const hostile = ['2147483648', '-2147483649', '9223372036854775808', '1e308', 'Infinity', '-Infinity', 'NaN', '1.5'];
  test('every integer query parameter refuses them with 400', async () => {
    let tried = 0;
    for (const route of all) {
      for (const [name, schema] of Object.entries(route.query)) {
        if (!isType(schema, 'integer') && !isType(schema, 'number')) continue;
        for (const v of hostile) {
          const required = route.requiredQuery.filter((q) => q !== name).map((q) => `${q}=x`);
          const r = await send({ route, url: urlFor(route, {}, [...required, `${name}=${encodeURIComponent(v)}`].join('&')) });
          expect(r.status, r.label).toBe(400);
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThan(40);
  });
  test('every integer body field refuses numbers past the range with 400', async () => {
    for (const route of withBody()) {
      const base = sampleBody(route);
      for (const f of schemaFields(route.body)) {
        if (!isType(f.schema, 'integer') && !isType(f.schema, 'number')) continue;
        for (const v of ['2147483648', '9223372036854775808', '1e308', '-1e308']) {
          const text = JSON.stringify(setAt(base, f.path, 0)).replace(/(:\s*)0(?=[,}\]])/, `$1${v}`);
          const r = await send({ route, url: urlFor(route), body: text });
          expect(r.status, r.label).toBe(400);
        }
      }
    }
  });
});

describe('class 3: timestamps PostgreSQL refuses', () => {
  const hostile = ['0000-01-01T00:00:00Z', '0000-12-31T23:59:59-01:00', '9999-12-31T23:59:59-14:00', '2024-12-31T23:59:60Z', '-0001-01-01T00:00:00Z', '+275760-09-13T00:00:00Z'];
  test('every date-time query parameter and body field refuses them with 400', async () => {
    let tried = 0;
    for (const route of all) {
      for (const [name, schema] of Object.entries(route.query)) {
        if (schema.format !== 'date-time') continue;
        for (const v of hostile) {
          const required = route.requiredQuery.filter((q) => q !== name).map((q) => `${q}=x`);
          const r = await send({ route, url: urlFor(route, {}, [...required, `${name}=${encodeURIComponent(v)}`].join('&')) });
          expect(r.status, r.label).toBe(400);
          tried++;
        }
      }
      if (!route.body || !['POST', 'PUT', 'PATCH'].includes(route.method)) continue;
      const base = sampleBody(route);
      for (const f of schemaFields(route.body)) {
        if (f.schema.format !== 'date-time') continue;
        for (const v of hostile) {
          const r = await send({ route, url: urlFor(route), body: JSON.stringify(setAt(base, f.path, v)) });
          expect(r.status, r.label).toBe(400);
          tried++;
        }
      }
    }
    expect(tried).toBeGreaterThan(20);
  });
});

describe('classes 4 and 5: NUL and lone surrogates', () => {
  const hostile = ['a\u0000b', '\u0000', 'x\ud800y', '\udc00', 'ok\ud83d'];
  test('every path parameter refuses them with 400', async () => {
    for (const route of all) {
      for (const name of Object.keys(route.params)) {
        for (const v of hostile.slice(0, 2)) {
          const r = await send({ route, url: urlFor(route, { [name]: v }) });
          expect(r.status, r.label).toBe(400);
          if (!r.html) expect(r.code, r.label).toBe('validation_failed');
        }
      }
    }
  });
  test('every query parameter refuses NUL with 400', async () => {
    for (const route of all) {
      for (const name of Object.keys(route.query)) {
        const r = await send({ route, url: urlFor(route, {}, `${name}=a%00b`) });
        expect(r.status, r.label).toBe(400);
      }
    }
  });
  test('every string in every body (nested ones and field names included) refuses them with 400', async () => {
    let tried = 0;
    for (const route of withBody()) {
      const base = sampleBody(route);
      for (const leaf of stringLeaves(base)) {
        for (const v of hostile) {
          const r = await send({ route, url: urlFor(route), body: JSON.stringify(setAt(base, leaf, v)) });
          expect(r.status, r.label).toBe(400);
          if (!r.html) expect(r.code, r.label).toBe('validation_failed');
          tried++;
        }
      }
      if (base && typeof base === 'object' && !Array.isArray(base)) {
        const r = await send({ route, url: urlFor(route), body: JSON.stringify({ ...base, 'k\u0000': 1 }) });
        expect(r.status, r.label).toBe(400);
      }
    }
    expect(tried).toBeGreaterThan(100);
  });
});

describe('class 6: ids up to 255 characters by path', () => {
  test('no route refuses a 255-character path parameter as too long (ASCII and multi-byte)', async () => {
    for (const route of all) {
      for (const name of Object.keys(route.params)) {
        for (const v of ['a'.repeat(255), 'é'.repeat(255), '\u{1F600}'.repeat(127)]) {
          const r = await send({ route, url: urlFor(route, { [name]: v }) });
          expect(r.status, r.label).not.toBe(414);
        }
      }
    }
  });
  test('a ticket created with a 255-character user id is read back by path', async () => {
    const userId = 'u'.repeat(200) + 'é'.repeat(55);
    const created = await t.call({
      method: 'POST',
      url: '/grievance',
      org: c.org,
      key: c.org.key,
      body: { client_user_id: userId, subject: 'Hello', description: 'A description', category: (sampleBody(all.find((r) => r.method === 'POST' && r.url === '/grievance')!) as { category: string }).category },
    });
    if (created.statusCode !== 201) throw new Error(`create failed: ${created.body}`);
    const res = await t.call({ method: 'GET', url: `/grievance/user/${encodeURIComponent(userId)}`, org: c.org, key: c.org.key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()[0].client_user_id).toBe(userId);
  });
});

describe('class 7: empty values and bodiless requests announcing JSON', () => {
  test('every required query parameter sent empty is missing: 400', async () => {
    let tried = 0;
    for (const route of all) {
      for (const name of route.requiredQuery) {
        const r = await send({ route, url: urlFor(route, {}, `${name}=`) });
        expect(r.status, r.label).toBe(400);
        if (!r.html) expect(r.code, r.label).toBe('validation_failed');
        tried++;
      }
    }
    expect(tried).toBeGreaterThan(0);
  });
  test('every DELETE and GET with Content-Type: application/json and no body is answered as without', async () => {
    for (const route of all.filter((r) => r.method === 'DELETE' || r.method === 'GET')) {
      if (route.url === '/auth/browser/events' || route.url.includes('stream')) continue;
      const url = urlFor(route, Object.fromEntries(Object.keys(route.params).map((p) => [p, `missing-${p}`])));
      const plain = await send({ route, url });
      for (const ct of ['application/json', 'application/json; charset=utf-8']) {
        const r = await send({ route, url, headers: { 'content-type': ct, 'content-length': '0' } });
        expect(r.code, r.label).not.toBe('empty_body');
        expect(r.status, r.label).toBe(plain.status);
      }
    }
  });
});
