// Webhook signing secrets: `whsec_` + base64 of 24 random bytes (the Standard Webhooks form the
// `standardwebhooks` library reads). They must be stored so they can sign, so not as a hash: with
// ASSENT_SECRET_KEY set they are stored encrypted (AES-256-GCM, key = SHA-256 of ASSENT_SECRET_KEY) as
// `enc:v1:<iv>.<tag>.<ciphertext>`; without it, as they are (docs/operations.md says so).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export interface SecretBox {
  seal(secret: string): string;
  open(stored: string): string;
}

const PREFIX = 'enc:v1:';

export function secretBox(secretKey: string | null): SecretBox {
  const key = secretKey ? createHash('sha256').update(secretKey).digest() : null;
  return {
    seal(secret) {
      if (!key) return secret;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${PREFIX}${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${data.toString('base64')}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      if (!key) throw new Error('a webhook secret is stored encrypted and ASSENT_SECRET_KEY is not set');
      const [iv, tag, data] = stored.slice(PREFIX.length).split('.') as [string, string, string];
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}
