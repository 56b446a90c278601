// Identifiers: UUIDv7 for internal ids (time-ordered, good index locality) and random human-readable codes.
import { randomFillSync, randomInt } from 'node:crypto';

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let lastMs = 0;
let counter = 0;

// Random bits for ids, drawn 4 KiB at a time (as Node's own randomUUID caches its entropy): one call
// into the CSPRNG per 256 ids instead of one per id, which showed in the write path's CPU profile
// (randomFillSync, issue 31). Each id takes its own 16 bytes; none is used twice.
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

function random16(): Buffer {
  if (poolAt + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolAt, poolAt + 16));
  poolAt += 16;
  return bytes;
}

/**
 * RFC 9562 UUIDv7: 48-bit Unix milliseconds, a 12-bit counter (method 1: monotonic within this process,
 * so ids made in the same millisecond still sort in creation order), then 62 random bits.
 */
export function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    counter++;
    if (counter > 0xfff) {
      ms = ++lastMs;
      counter = 0;
    }
  } else {
    counter = randomInt(0x800);
  }
  lastMs = ms;
  const bytes = random16();
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** `length` characters drawn uniformly from `alphabet` with a cryptographic source. */
export function randomCode(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
