// Fixed-window counters for throttling (login failures): in memory, bounded, entries expiring; or in
// Redis when REDIS_URL is set, so every process of a deployment shares them.
import { Redis } from 'ioredis';
import type { Clock } from './clock.js';

export interface WindowCount {
  count: number;
  /** Milliseconds until the window (and the count) resets; 0 when nothing is counted. */
  resetInMs: number;
}

export interface WindowCounter {
  peek(key: string): Promise<WindowCount>;
  /** Atomic: concurrent increments each see their own count. */
  increment(key: string): Promise<WindowCount>;
  /** Takes one count back (never below 0, never starting a window). */
  decrement(key: string): Promise<void>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export function createMemoryCounter(options: { windowMs: number; clock: Clock; maxKeys?: number }): WindowCounter {
  const maxKeys = options.maxKeys ?? 100_000;
  const entries = new Map<string, { count: number; resetAt: number }>();
  const now = () => options.clock.now().getTime();
  const live = (key: string) => {
    const e = entries.get(key);
    if (e && e.resetAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return e;
  };
  const makeRoom = () => {
    if (entries.size < maxKeys) return;
    const t = now();
    for (const [k, e] of entries) if (e.resetAt <= t) entries.delete(k);
    // Still full of live windows: forget the oldest (a Map iterates in insertion order).
    for (const k of entries.keys()) {
      if (entries.size < maxKeys) break;
      entries.delete(k);
    }
  };
  return {
    async peek(key) {
      const e = live(key);
      return e ? { count: e.count, resetInMs: e.resetAt - now() } : { count: 0, resetInMs: 0 };
    },
    async increment(key) {
      let e = live(key);
      if (!e) {
        makeRoom();
        e = { count: 0, resetAt: now() + options.windowMs };
        entries.set(key, e);
      }
      e.count++;
      return { count: e.count, resetInMs: e.resetAt - now() };
    },
    async decrement(key) {
      const e = live(key);
      if (e && e.count > 0) e.count--;
    },
    async reset(key) {
      entries.delete(key);
    },
    async close() {
      entries.clear();
    },
  };
}

export function createRedisCounter(options: { url: string; windowMs: number; prefix: string }): WindowCounter {
  const redis = new Redis(options.url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  const k = (key: string) => `${options.prefix}${key}`;
  const ttl = (ms: number) => (ms > 0 ? ms : 0);
  return {
    async peek(key) {
      const [[, count], [, pttl]] = (await redis.multi().get(k(key)).pttl(k(key)).exec()) as [[null, string | null], [null, number]];
      return { count: Number(count ?? 0), resetInMs: ttl(pttl) };
    },
    async increment(key) {
      // The window starts with the first count: the expiry is set only when there is none (NX).
      const [[, count], , [, pttl]] = (await redis.multi().incr(k(key)).pexpire(k(key), options.windowMs, 'NX').pttl(k(key)).exec()) as [
        [null, number],
        unknown,
        [null, number],
      ];
      return { count, resetInMs: ttl(pttl) };
    },
    async decrement(key) {
      // Never below 0 (a success after the window reset), never starting a window.
      await redis.eval("if tonumber(redis.call('get', KEYS[1]) or '0') > 0 then return redis.call('decr', KEYS[1]) else return 0 end", 1, k(key));
    },
    async reset(key) {
      await redis.del(k(key));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
