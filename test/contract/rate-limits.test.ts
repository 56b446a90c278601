// Rate limits (contract §9): per API key (the organization's limit, default 500 per 60 s) and per client
// address, with RateLimit-* on every tenant answer and 429 rate_limited with Retry-After; counted in
// memory, and in Redis (TEST_REDIS_URL) shared by two servers.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.js';

const redisUrl = process.env.TEST_REDIS_URL;

async function exhaust(t: TestApp, a: { host: string; key: string }, n: number) {
  const answers = [];
  for (let i = 0; i < n; i++) answers.push(await t.call({ method: 'GET', url: '/api/v1/organization', org: a, key: a.key }));
  return answers;
}

describe('in memory (one process)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_PER_KEY: '500', RATE_LIMIT_PER_ADDRESS: '40' } });
  });
  afterAll(async () => t?.close());

  test('every tenant answer carries RateLimit-Limit, -Remaining and -Reset for its key (default 500)', async () => {
    const a = await t.tenant();
    const [first, second] = await exhaust(t, a, 2);
    expect(first!.statusCode).toBe(200);
    expect(first!.headers['ratelimit-limit']).toBe('500');
    expect(first!.headers['ratelimit-remaining']).toBe('499');
    expect(Number(first!.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(Number(first!.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    expect(second!.headers['ratelimit-remaining']).toBe('498');
    expect(first!.json()).toMatchObject({ api_rate_limit: 500, api_rate_limit_default: true });
    // Error answers of tenant routes carry them too.
    const notFound = await t.call({ method: 'GET', url: '/api/v1/grievances/GRV-NOPE0000', org: a, key: a.key });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['ratelimit-limit']).toBe('500');
  });

  test("an organization's own limit: past it 429 rate_limited with Retry-After; each key has its own count", async () => {
    const a = await t.tenant();
    const set = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: a.key, body: { api_rate_limit: 3 } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ api_rate_limit: 3, api_rate_limit_default: false });

    // The PATCH itself was the key's first request under the new limit's window.
    const answers = await exhaust(t, a, 2);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(answers.map((r) => r.headers['ratelimit-remaining'])).toEqual(['1', '0']);
    const over = await t.call({ method: 'GET', url: '/api/v1/organization', org: a, key: a.key });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toEqual({ error: 'Rate limit exceeded', code: 'rate_limited' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    // A write over the limit changes nothing.
    const post = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'u', subject: 's', description: 'd', category: 'other' } });
    expect(post.statusCode).toBe(429);

    const other = { ...a, key: await t.key(a) };
    const fresh = await t.call({ method: 'GET', url: '/api/v1/organization', org: a, key: other.key });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['ratelimit-limit']).toBe('3');

    // Back to the default.
    const reset = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: other.key, body: { api_rate_limit: null } });
    expect(reset.json()).toMatchObject({ api_rate_limit: 500, api_rate_limit_default: true });
  });

  test('the setting is validated and takes an admin key or an owner/admin token', async () => {
    const a = await t.tenant();
    for (const bad of [{ api_rate_limit: 0 }, { api_rate_limit: 1.5 }, { api_rate_limit: '10' }, {}, { other: 1 }]) {
      const res = await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: a.key, body: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
    const narrow = await t.key(a, ['grievances']);
    expect((await t.call({ method: 'PATCH', url: '/api/v1/organization', org: a, key: narrow, body: { api_rate_limit: 5 } })).statusCode).toBe(403);
  });

  test('per client address, wrong keys included; public routes are not counted', async () => {
    const b = await t.tenant();
    // Earlier tests used this address too; count down what is left.
    let last = await t.call({ method: 'GET', url: '/api/v1/organization', org: b, key: 'ask_live_' + 'x'.repeat(32) });
    expect(last.statusCode).toBe(401);
    expect(last.headers['ratelimit-limit']).toBe('40');
    let left = Number(last.headers['ratelimit-remaining']);
    while (left > 0) {
      last = await t.call({ method: 'GET', url: '/api/v1/organization', org: b, key: 'ask_live_' + 'x'.repeat(32) });
      left--;
    }
    const over = await t.call({ method: 'GET', url: '/api/v1/organization', org: b, key: b.key });
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('rate_limited');
    const health = await t.call({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe.runIf(Boolean(redisUrl))('in Redis (REDIS_URL): shared by every process', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    // Two servers (each with its own store), one Redis; a prefix of this run's own keeps other runs out.
    const env = { REDIS_URL: redisUrl!, REDIS_KEY_PREFIX: `assent-test-${randomBytes(4).toString('hex')}:`, RATE_LIMIT_PER_KEY: '4', RATE_LIMIT_PER_ADDRESS: '10' };
    one = await buildTestApp({ env });
    two = await buildTestApp({ env });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  test("a key's count is kept in Redis: past the limit 429", async () => {
    const a = await one.tenant();
    const answers = await exhaust(one, a, 5);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 429]);
    expect(answers.map((r) => r.headers['ratelimit-remaining'])).toEqual(['3', '2', '1', '0', '0']);
    expect(answers[4]!.headers['retry-after']).toBeDefined();
  });

  test("an address's count is shared by both servers", async () => {
    const b = await two.tenant();
    // The first test spent 5 of this address's 10 on server one.
    const onTwo = await exhaust(two, b, 5);
    expect(onTwo.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 429]);
    expect(onTwo[0]!.headers['ratelimit-limit']).toBe('4');
    const c = await one.tenant();
    const onOne = await one.call({ method: 'GET', url: '/api/v1/organization', org: c, key: c.key });
    expect(onOne.statusCode).toBe(429);
    expect(onOne.headers['ratelimit-limit']).toBe('10');
  });
});
