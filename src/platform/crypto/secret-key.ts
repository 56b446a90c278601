// ASSENT_SECRET_KEY: the key that seals organizations' signing keys (and, when set, webhook secrets).
//
// - Set: used as it is (at least 32 characters; `assent secret generate` prints one).
// - Unset, embedded store (no DATABASE_URL): development mode. The key is kept in DATA_DIR/secret.key
//   (created once, mode 0600) and the server warns at start: the sealed keys and the key that opens
//   them then sit in one directory, which protects a copied database file but not a copied directory.
// - Unset, PostgreSQL: the server refuses to start (several processes must share the key, and a
//   database dump must not carry what opens it). docs/operations.md says so.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../../config.js';

export const SECRET_KEY_FILE = 'secret.key';
export const MIN_SECRET_KEY_LENGTH = 32;

/** A new ASSENT_SECRET_KEY: 32 random bytes, base64url (43 characters). */
export function generateSecretKey(): string {
  return randomBytes(32).toString('base64url');
}

export interface ResolvedSecretKey {
  secret: string;
  /** env: ASSENT_SECRET_KEY; data_dir: DATA_DIR/secret.key (development); memory: an in-memory store's own. */
  source: 'env' | 'data_dir' | 'memory';
  /** The file, for data_dir. */
  path?: string;
  /** true when this call created the file. */
  created?: boolean;
}

export class MissingSecretKeyError extends ConfigError {
  constructor() {
    super(
      'ASSENT_SECRET_KEY is not set: with DATABASE_URL (PostgreSQL) it is required, because it seals the organizations\' ' +
        'signing keys and every process must share it. Generate one with `assent secret generate` and set it in every process\'s environment.',
    );
  }
}

/**
 * The secret for this process, or null on PostgreSQL without ASSENT_SECRET_KEY (the caller decides:
 * the server refuses, a CLI command that needs no key goes on). Call after the store is open (the
 * embedded store's data directory exists then).
 */
export function resolveSecretKey(config: Pick<Config, 'secretKey' | 'databaseUrl' | 'dataDir'>): ResolvedSecretKey | null {
  if (config.secretKey) return { secret: config.secretKey, source: 'env' };
  if (config.databaseUrl) return null;
  if (config.dataDir.startsWith('memory://')) return { secret: generateSecretKey(), source: 'memory' };
  const path = join(config.dataDir, SECRET_KEY_FILE);
  if (existsSync(path)) {
    const secret = readFileSync(path, 'utf8').trim();
    if (secret.length < MIN_SECRET_KEY_LENGTH) throw new Error(`${path} holds no usable key (under ${MIN_SECRET_KEY_LENGTH} characters): restore it, or set ASSENT_SECRET_KEY to the key it held`);
    return { secret, source: 'data_dir', path };
  }
  const secret = generateSecretKey();
  writeFileSync(path, secret + '\n', { mode: 0o600, flag: 'wx' });
  return { secret, source: 'data_dir', path, created: true };
}
