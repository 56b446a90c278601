// The access package's content: parts encrypted in chunks under a data key of their own (the data key
// sealed with the ASSENT_SECRET_KEY-derived key), and the package streamed as a gzipped tar: summary.json,
// each system's parts, manifest.json and manifest.jws (the manifest signed with the organization's key).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { CompactSign } from 'jose';
import tar from 'tar-stream';
import { seal, unseal, type SigningPrivateKey } from '../../platform/crypto/signing-keys.js';

export const PACKAGE_FORMAT = 'assent-access-package/1';
export const PACKAGE_TYP = 'assent-access-package+jws';
/** Plaintext bytes per stored chunk: a download holds one chunk (and a few queued) at a time. */
export const CHUNK_BYTES = 256 * 1024;
/** How long the person can download their package (issue 33): then the content is erased. */
export const PACKAGE_DAYS = 14;

export interface SealedContent {
  keyEnc: string;
  chunks: Buffer[];
  sha256: string;
  size: number;
}

/** Encrypts content under a fresh data key, CHUNK_BYTES at a time (AES-256-GCM, iv || tag || ciphertext each). */
export function sealContent(sealingKey: Buffer, content: Buffer): SealedContent {
  const dataKey = randomBytes(32);
  const count = Math.max(1, Math.ceil(content.length / CHUNK_BYTES));
  const chunks = Array.from({ length: count }, (_, i) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
    const data = Buffer.concat([cipher.update(content.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES)), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]);
  });
  return { keyEnc: seal(sealingKey, dataKey), chunks, sha256: createHash('sha256').update(content).digest('hex'), size: content.length };
}

export function openDataKey(sealingKey: Buffer, keyEnc: string): Buffer {
  return unseal(sealingKey, keyEnc);
}

export function openChunk(dataKey: Buffer, stored: Buffer | Uint8Array): Buffer {
  const b = Buffer.from(stored);
  const decipher = createDecipheriv('aes-256-gcm', dataKey, b.subarray(0, 12));
  decipher.setAuthTag(b.subarray(12, 28));
  return Buffer.concat([decipher.update(b.subarray(28)), decipher.final()]);
}

export const sha256Of = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** A folder name for a system in the package: its name made path-safe, with its id's start to keep it unique. */
export function systemFolder(name: string, id: string): string {
  return `systems/${name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '') || 'system'}-${id.slice(0, 8)}`;
}

export function signPackageManifest(manifest: string, key: { kid: string; privateKey: SigningPrivateKey }): Promise<string> {
  return new CompactSign(new TextEncoder().encode(manifest)).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: PACKAGE_TYP }).sign(key.privateKey);
}

export interface PackageEntry {
  path: string;
  size: number;
  /** The entry's bytes, produced a slice at a time. */
  content: () => AsyncIterable<Buffer>;
}

/** The package as a gzipped tar, produced as it is read (backpressure from the consumer). */
export function packageStream(root: string, entries: PackageEntry[], mtime: Date): Readable {
  const pack = tar.pack();
  const out = new PassThrough();
  const gzip = createGzip();
  pack.pipe(gzip).pipe(out);
  void (async () => {
    try {
      for (const e of entries) {
        await new Promise<void>((resolve, reject) => {
          const sink = pack.entry({ name: `${root}/${e.path}`, size: e.size, mtime, mode: 0o644 }, (err) => (err ? reject(err) : resolve()));
          void (async () => {
            try {
              for await (const slice of e.content()) if (!sink.write(slice)) await new Promise<void>((r) => sink.once('drain', () => r()));
              sink.end(Buffer.alloc(0));
            } catch (err) {
              sink.destroy(err as Error);
              reject(err as Error);
            }
          })();
        });
      }
      pack.finalize();
    } catch (err) {
      out.destroy(err as Error);
      pack.destroy(err as Error);
    }
  })();
  return out;
}
