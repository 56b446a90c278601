// Organizations' Ed25519 signing keys (consent receipts): generation, the sealed form of the private
// part, and a per-process cache of opened keys.
//
// Sealing: AES-256-GCM with a key derived from ASSENT_SECRET_KEY by HKDF-SHA256 (info
// "assent signing keys v1"), stored as `enc:v1:<iv>.<tag>.<ciphertext>` (base64), the ciphertext being
// the PKCS#8 DER of the private key. GCM's tag makes a wrong ASSENT_SECRET_KEY an error, never a wrong key.
// The secret itself comes from resolveSecretKey (src/platform/crypto/secret-key.ts).
import { createCipheriv, createDecipheriv, createHash, generateKeyPairSync, hkdfSync, randomBytes, webcrypto } from 'node:crypto';

/** A WebCrypto key: jose signs with one faster than with a KeyObject (it converts a KeyObject on every call). */
export type SigningPrivateKey = webcrypto.CryptoKey;

export const SEALED_PREFIX = 'enc:v1:';

/** An Ed25519 public key as a JWK, as /.well-known/jwks.json lists it. */
export interface SigningPublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export interface NewSigningKey {
  kid: string;
  public_jwk: SigningPublicJwk;
  private_key_enc: string;
}

export interface SigningKeyring {
  /** A fresh key pair, its private part sealed. */
  generate(): NewSigningKey;
  /** The private key of a stored row, opened once per process and kept (keyed by kid). */
  open(kid: string, sealed: string): Promise<SigningPrivateKey>;
}

export class SealedKeyError extends Error {}

/** RFC 7638 thumbprint of an OKP public key, base64url: the key's id. */
export function jwkThumbprint(jwk: { crv: string; x: string }): string {
  return createHash('sha256').update(`{"crv":"${jwk.crv}","kty":"OKP","x":"${jwk.x}"}`).digest('base64url');
}

/** The AES-256-GCM key that seals signing keys, from ASSENT_SECRET_KEY. */
export function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), 'assent signing keys v1', 32));
}

export function seal(key: Buffer, plain: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return `${SEALED_PREFIX}${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${data.toString('base64')}`;
}

export function unseal(key: Buffer, sealed: string): Buffer {
  if (!sealed.startsWith(SEALED_PREFIX)) throw new SealedKeyError('a signing key is not in the sealed form');
  const [iv, tag, data] = sealed.slice(SEALED_PREFIX.length).split('.');
  if (!iv || !tag || data === undefined) throw new SealedKeyError('a sealed signing key is malformed');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]);
  } catch {
    throw new SealedKeyError('a signing key could not be opened: ASSENT_SECRET_KEY is not the one it was sealed with');
  }
}

export function createSigningKeyring(secret: string): SigningKeyring {
  const key = deriveKey(secret);
  const opened = new Map<string, Promise<SigningPrivateKey>>();
  const importPkcs8 = (der: Buffer) => webcrypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, ['sign']);
  return {
    generate() {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
      const kid = jwkThumbprint({ crv: 'Ed25519', x });
      const der = privateKey.export({ format: 'der', type: 'pkcs8' });
      return { kid, public_jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' }, private_key_enc: seal(key, der) };
    },
    open(kid, sealed) {
      let k = opened.get(kid);
      if (!k) {
        k = Promise.resolve().then(() => importPkcs8(unseal(key, sealed)));
        // One entry per key in use; a bound against a process serving a great many organizations.
        if (opened.size >= 50_000) opened.clear();
        opened.set(kid, k);
        k.catch(() => opened.delete(kid));
      }
      return k;
    },
  };
}
