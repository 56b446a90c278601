// API key format (ask_live_ + 32 base62 characters, about 190 bits), its display prefix and its stored hash.
import { BASE62, randomCode } from '../ids.js';
import { sha256Hex } from './opaque-tokens.js';

export const API_KEY_PREFIX = 'ask_live_';
const API_KEY_PATTERN = /^ask_live_[0-9A-Za-z]{32}$/;

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + randomCode(BASE62, 32);
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

/** SHA-256, hex: keys carry 190 random bits, so a fast hash is enough; only the hash is stored. */
export const hashApiKey = sha256Hex;

/** Cheap shape check before any lookup: a string that cannot be a key is never looked up. */
export function looksLikeApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}
