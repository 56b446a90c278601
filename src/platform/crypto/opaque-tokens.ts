// Random opaque tokens (consent links, and later sessions and codes) and the hash they are stored as.
import { createHash } from 'node:crypto';
import { BASE62, randomCode } from '../ids.js';

/** SHA-256, hex. The tokens carry 128+ random bits, so a fast hash is enough; only the hash is stored. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** 32 base62 characters: about 190 bits. */
export function newOpaqueToken(): { token: string; hash: string } {
  const token = randomCode(BASE62, 32);
  return { token, hash: sha256Hex(token) };
}
