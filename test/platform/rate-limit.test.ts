// The window counters behind login throttling: in memory (expiry by the injected clock, bounded size)
// and in Redis (against a real server when TEST_REDIS_URL is set).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { manualClock } from '../../src/platform/clock.js';
import { createMemoryCounter, createRedisCounter } from '../../src/platform/rate-limit.js';

const WINDOW_MS = 15 * 60_000;

describe('memory counter', () => {
  test('counts within the window; the window starts with the first count and does not slide', async () => {
    const clock = manualClock();
    const counter = createMemoryCounter({ windowMs: WINDOW_MS, clock });
    expect(await counter.peek('a')).toEqual({ count: 0, resetInMs: 0 });
    expect(await counter.increment('a')).toEqual({ count: 1, resetInMs: WINDOW_MS });
    clock.advance(60_000);
    expect(await counter.increment('a')).toEqual({ count: 2, resetInMs: WINDOW_MS - 60_000 });
    expect(await counter.peek('a')).toEqual({ count: 2, resetInMs: WINDOW_MS - 60_000 });
    expect(await counter.peek('b')).toEqual({ count: 0, resetInMs: 0 });
  });

  test('an entry expires with its window, then counts from 1 again', async () => {
    const clock = manualClock();
    const counter = createMemoryCounter({ windowMs: WINDOW_MS, clock });
    for (let i = 0; i < 5; i++) await counter.increment('a');
    clock.advance(WINDOW_MS - 1);
    expect((await counter.peek('a')).count).toBe(5);
    clock.advance(1);
    expect(await counter.peek('a')).toEqual({ count: 0, resetInMs: 0 });
    expect(await counter.increment('a')).toEqual({ count: 1, resetInMs: WINDOW_MS });
  });

  test('reset forgets a key at once', async () => {
    const counter = createMemoryCounter({ windowMs: WINDOW_MS, clock: manualClock() });
    await counter.increment('a');
    await counter.increment('b');
    await counter.reset('a');
    expect((await counter.peek('a')).count).toBe(0);
    expect((await counter.peek('b')).count).toBe(1);
  });

  test('bounded: with maxKeys 3 a 4th key evicts the oldest live one', async () => {
    const counter = createMemoryCounter({ windowMs: WINDOW_MS, clock: manualClock(), maxKeys: 3 });
    for (const k of ['a', 'b', 'c']) await counter.increment(k);
    await counter.increment('d');
    expect((await counter.peek('a')).count).toBe(0);
    for (const k of ['b', 'c', 'd']) expect((await counter.peek(k)).count).toBe(1);
  });

  test('bounded: expired entries make room before any live one is evicted', async () => {
    const clock = manualClock();
    const counter = createMemoryCounter({ windowMs: WINDOW_MS, clock, maxKeys: 3 });
    await counter.increment('old');
    clock.advance(WINDOW_MS);
    await counter.increment('b');
    await counter.increment('c');
    await counter.increment('d'); // 'old' has expired: it goes, b and c stay
    for (const k of ['b', 'c', 'd']) expect((await counter.peek(k)).count).toBe(1);
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL;

describe.skipIf(!REDIS_URL)('Redis counter (needs TEST_REDIS_URL, e.g. redis://127.0.0.1:6379)', () => {
  const prefix = `assent-test:${randomBytes(6).toString('hex')}:`;
  const made: ReturnType<typeof createRedisCounter>[] = [];
  const counter = (windowMs = WINDOW_MS) => {
    const c = createRedisCounter({ url: REDIS_URL!, windowMs, prefix });
    made.push(c);
    return c;
  };

  afterAll(async () => {
    await Promise.all(made.map((c) => c.close()));
    const redis = new Redis(REDIS_URL!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  test('counts under the prefix, with the time left within the window', async () => {
    const c = counter();
    expect(await c.peek('a')).toEqual({ count: 0, resetInMs: 0 });
    const first = await c.increment('a');
    expect(first.count).toBe(1);
    expect(first.resetInMs).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(first.resetInMs).toBeLessThanOrEqual(WINDOW_MS);
    expect((await c.increment('a')).count).toBe(2);
    const peeked = await c.peek('a');
    expect(peeked.count).toBe(2);
    expect(peeked.resetInMs).toBeGreaterThan(0);
    expect(peeked.resetInMs).toBeLessThanOrEqual(first.resetInMs);
    const redis = new Redis(REDIS_URL!);
    expect(await redis.get(`${prefix}a`)).toBe('2');
    await redis.quit();
  });

  test('shared: two counters on the same prefix (two processes) see one count', async () => {
    const [one, two] = [counter(), counter()];
    await one.increment('shared');
    await two.increment('shared');
    expect((await one.peek('shared')).count).toBe(2);
  });

  test('reset deletes the key', async () => {
    const c = counter();
    await c.increment('r');
    await c.reset('r');
    expect(await c.peek('r')).toEqual({ count: 0, resetInMs: 0 });
  });

  test('the window is not extended by later counts, and the key expires with it', async () => {
    const c = counter(300);
    await c.increment('w');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await c.increment('w');
    expect(second.count).toBe(2);
    expect(second.resetInMs).toBeLessThanOrEqual(220);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await c.peek('w')).toEqual({ count: 0, resetInMs: 0 });
  });
});
