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

/** Access and refresh tokens: a recognisable prefix (for secret scanners) and 32 base62 characters. */
export const ACCESS_TOKEN_PREFIX = 'asa_';
export const REFRESH_TOKEN_PREFIX = 'asr_';
const TOKEN_PATTERN = /^as[ar]_[0-9A-Za-z]{32}$/;

export function newPrefixedToken(prefix: typeof ACCESS_TOKEN_PREFIX | typeof REFRESH_TOKEN_PREFIX): { token: string; hash: string } {
  const token = prefix + randomCode(BASE62, 32);
  return { token, hash: sha256Hex(token) };
}

export function looksLikeToken(value: string, prefix: string): boolean {
  return TOKEN_PATTERN.test(value) && value.startsWith(prefix);
}

/** A data principal's token (contract §7): `dpt_` and 32 base62 characters, stored only as its SHA-256. */
export const DP_TOKEN_PREFIX = 'dpt_';
const DP_TOKEN_PATTERN = /^dpt_[0-9A-Za-z]{32}$/;

export function newDpToken(): { token: string; hash: string } {
  const token = DP_TOKEN_PREFIX + randomCode(BASE62, 32);
  return { token, hash: sha256Hex(token) };
}

export function looksLikeDpToken(value: string): boolean {
  return DP_TOKEN_PATTERN.test(value);
}

/**
 * A Rights Center browser session (issue 35): `drs_` and 43 base62 characters (about 256 bits), in the
 * page's cookie only, stored only as its SHA-256. Not a dpt_ token: the API never accepts it.
 */
export const RIGHTS_SESSION_PREFIX = 'drs_';
const RIGHTS_SESSION_PATTERN = /^drs_[0-9A-Za-z]{43}$/;

export function newRightsSession(): { session: string; hash: string } {
  const session = RIGHTS_SESSION_PREFIX + randomCode(BASE62, 43);
  return { session, hash: sha256Hex(session) };
}

export function looksLikeRightsSession(value: string): boolean {
  return RIGHTS_SESSION_PATTERN.test(value);
}
