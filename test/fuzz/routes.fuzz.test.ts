// Schema-driven fuzzing of every route (issue 21): from the app's route table (every route with its
// declared schema, the consent page's form routes included), fast-check generates hostile values for a
// path parameter, a query parameter (also duplicated), a header, a body field, unknown fields, malformed
// JSON and wrong content types, sent with valid credentials so they reach validation and the store.
// Every answer is the operation's success or a 4xx with a JSON `error` (an HTML page on the browser
// pages), never 5xx, never over 2 s; no log line carries the personal data sent. A failure prints the
// seed and path: FUZZ_SEED=<seed> reproduces it. `npm run fuzz -- --minutes N` runs longer.
import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { buildApp } from '../../src/app.js';
import { manualClock } from '../../src/platform/clock.js';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, type TestApp } from '../support/app.js';
import { authHeaders, credentials, FUZZ_DP_ID, routes, sampleBody, setAt, stringLeaves, urlFor, type Credentials, type Route } from '../support/routes.js';

const MINUTES = Number(process.env.FUZZ_MINUTES ?? 0);
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
// Personal data in the requests, to look for in the log: an email and a phone number.
const PII_EMAIL = 'fuzz.person.piimark@example.com';
const PII_PHONE = '+919812345678';

let t: TestApp;
let c: Credentials;
let app: FastifyInstance;
const logLines: string[] = [];
let all: Route[];

beforeAll(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_PER_KEY: '10000000', RATE_LIMIT_PER_ADDRESS: '10000000' } });
  c = await credentials(t);
  // A second app on the same store, logging at info to memory: what a production log would hold.
  app = await buildApp({
    config: { ...t.config, logLevel: 'info' },
    db: t.db,
    clock: manualClock(),
    logStream: { write: (line: string) => void logLines.push(line) },
  });
  await app.ready();
  all = routes(t).filter((r) => !r.url.startsWith('/docs') && r.url !== '/openapi.json');
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const PERSON_PARAMS = new Set(['userId', 'user_id', 'dp_id', 'dpId']);

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const hostileText = fc.oneof(
  fc.constantFrom(
    '', ' ', '\t\n', 'a\u0000b', '\u0000', '\u0001\u001f\u007f', 'x\ud800', '\udfff', '\ud83d\ude00', 'é'.repeat(300), 'x'.repeat(256),
    'x'.repeat(100_000), "' or 1=1 --", '../../etc/passwd', '%00', '%', 'Infinity', 'NaN', '-1', '1.5', '2147483648', '-2147483649',
    '9223372036854775808', '1e308', '0000-01-01T00:00:00Z', '9999-12-31T23:59:60Z', 'null', 'true', '[]', '{}', PII_EMAIL, PII_PHONE,
    '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 63, -(2 ** 63), 1e308, -1, 0, -0, 1.5, true, false, null, [], {}, [1, 'a'], { a: { b: 1 } }, 'x'.repeat(300_000)),
  fc.integer(),
  fc.double(),
  fc.array(hostileText, { maxLength: 3 }),
  fc.dictionary(hostileText, hostileText, { maxKeys: 3 }),
);

type Mutation =
  | { kind: 'path'; value: string }
  | { kind: 'query'; name: string | null; value: string; twice: boolean }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'field'; pick: number; value: unknown }
  | { kind: 'unknown'; name: string; value: unknown }
  | { kind: 'raw'; body: string; contentType: string | null };

const headerValue = fc.oneof(fc.constantFrom('', 'x'.repeat(300), 'no-such-org', 'application/json; charset=latin1', 'text/plain', '*/*'), fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')));

function mutations(route: Route): fc.Arbitrary<Mutation> {
  const qNames = Object.keys(route.query);
  const options: fc.Arbitrary<Mutation>[] = [
    fc.record({ kind: fc.constant('query' as const), name: qNames.length ? fc.option(fc.constantFrom(...qNames), { nil: null }) : fc.constant(null), value: hostileText, twice: fc.boolean() }),
    fc.record({ kind: fc.constant('header' as const), name: fc.constantFrom('x-org-id', 'content-type', 'accept', 'x-request-id', 'origin'), value: headerValue }),
  ];
  if (Object.keys(route.params).length) options.push(fc.record({ kind: fc.constant('path' as const), value: hostileText }));
  if (route.body || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) {
    options.push(
      fc.record({ kind: fc.constant('field' as const), pick: fc.nat(), value: hostileJson }),
      fc.record({ kind: fc.constant('unknown' as const), name: hostileText, value: hostileJson }),
      fc.record({
        kind: fc.constant('raw' as const),
        body: fc.oneof(fc.constantFrom('', '{', '{"a":}', 'null', '[]', '"x"', '1', deep(3000), '{"__proto__":{"x":1}}', '{"a":1,"a":2}', 'x'.repeat(300_000)), fc.json({ maxDepth: 3 })),
        contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', null),
      }),
    );
  }
  return fc.oneof(...options);
}

async function sendMutation(route: Route, m: Mutation) {
  const headers: Record<string, string> = { host: c.org.host, ...authHeaders(route, c) };
  // A person's id where a route names one (the token's own person, so the request gets past the check).
  const params = Object.fromEntries(Object.keys(route.params).map((p) => [p, m.kind === 'path' ? m.value : PERSON_PARAMS.has(p) ? FUZZ_DP_ID : `id-${p}`]));
  const query = new URLSearchParams();
  for (const name of route.requiredQuery) query.append(name, 'x');
  if (m.kind === 'query') {
    const name = m.name ?? 'unknown_param';
    query.set(name, m.value);
    if (m.twice) query.append(name, m.value);
  }
  let url: string;
  try {
    url = urlFor(route, params, query.toString());
  } catch {
    return null; // a lone surrogate cannot be percent-encoded by a client either
  }
  let payload: string | undefined;
  const base = sampleBody(route);
  if (m.kind === 'field') {
    const leaves = [...stringLeaves(base), ...Object.keys((base ?? {}) as object).map((k) => [k])];
    payload = JSON.stringify(leaves.length ? setAt(base, leaves[m.pick % leaves.length]!, m.value) : m.value);
  } else if (m.kind === 'unknown') {
    payload = JSON.stringify({ ...((base && typeof base === 'object' ? base : {}) as object), [m.name]: m.value });
  } else if (m.kind === 'raw') {
    payload = m.body;
    if (m.contentType) headers['content-type'] = m.contentType;
  } else if (base !== undefined) {
    payload = JSON.stringify(base);
  }
  if (payload !== undefined && m.kind !== 'raw') headers['content-type'] = 'application/json';
  if (m.kind === 'header') headers[m.name] = m.value;
  const started = performance.now();
  const res = await app.inject({ method: route.method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });
  return { res, ms: performance.now() - started, url };
}

function check(route: Route, m: Mutation, out: Awaited<ReturnType<typeof sendMutation>>): void {
  if (!out) return;
  const { res, ms, url } = out;
  const label = `${route.method} ${url.slice(0, 150)} ${JSON.stringify(m).slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
  expect(res.statusCode, label).toBeLessThan(500);
  expect(ms, label).toBeLessThan(2000);
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode >= 400 && !type.startsWith('text/html')) {
    expect(type, label).toMatch(/^application\/json/);
    expect(typeof res.json().error, label).toBe('string');
  }
}

test('every route of the table: hostile input never gets a 5xx, a slow answer or personal data in the log', async () => {
  expect(all.length).toBeGreaterThan(40);
  const deadline = Date.now() + MINUTES * 60_000;
  let requests = 0;
  let rounds = 0;
  const reached = new Set<string>();
  do {
    for (const route of all) {
      await fc.assert(
        fc.asyncProperty(mutations(route), async (m) => {
          const out = await sendMutation(route, m);
          check(route, m, out);
          if (out && out.res.statusCode !== 401 && out.res.statusCode !== 403) reached.add(`${route.method} ${route.url}`);
          requests++;
        }),
        { numRuns: RUNS_PER_ROUTE, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
      );
    }
    rounds++;
  } while (Date.now() < deadline);
  // The credentials let the input through: no route with an access rule answered only 401 or 403 (a
  // person's routes got the person's token, the SDK's banner routes an `sdk` key).
  const guarded = all.filter((r) => r.access !== 'public');
  expect(guarded.filter((r) => r.access !== 'public' && r.access.dataPrincipal).length).toBeGreaterThan(10);
  expect(guarded.map((r) => `${r.method} ${r.url}`).filter((r) => !reached.has(r))).toEqual([]);
  const leaked = logLines.filter((l) => l.includes(PII_EMAIL) || l.includes(PII_PHONE) || l.includes('piimark'));
  expect(leaked.slice(0, 3)).toEqual([]);
  console.log(`fuzz: ${all.length} routes, ${rounds} round(s), ${requests} requests, ${logLines.length} log lines, no 5xx, none over 2 s, no personal data logged`);
}, Math.max(600_000, MINUTES * 60_000 + 600_000));
