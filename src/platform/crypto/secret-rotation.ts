// `assent secret rotate`: a new ASSENT_SECRET_KEY. Every value sealed with the secret is opened with the
// current one and sealed again with the new one, in one transaction of the owner connection:
// - every organization's signing keys (signing_keys.private_key_enc, current and retired: a retired
//   key signs nothing more, but a later secret must still open it if it is ever needed),
// - every webhook endpoint's signing secret stored sealed (`enc:v1:`; secrets stored as they are,
//   without a secret at the time, stay so).
// A value the current secret does not open but the new one does was sealed again already (a rotation
// run twice, or a key made by a server that had been restarted with the new secret): it is left as it
// is. A value neither opens stops the rotation, naming the organization and the key, and nothing is
// changed (the transaction is rolled back). Each organization's rows are read and written with its
// tenant set (app.org_id), so row-level security admits them on an owner without BYPASSRLS.
import type { Database } from '../db/types.js';
import { MIN_SECRET_KEY_LENGTH } from './secret-key.js';
import { deriveKey, seal, SealedKeyError, unseal } from './signing-keys.js';
import { secretBox } from '../webhooks/secrets.js';

/** The rotation was refused; nothing was changed. The message says why. */
export class SecretRotationError extends Error {}

export interface SecretRotationReport {
  organizations: number;
  /** Signing keys sealed again with the new secret. */
  signing_keys: number;
  /** Webhook signing secrets sealed again. */
  webhook_secrets: number;
  /** Data keys of access-package parts (issue 33), re-sealed; the content they encrypt is never touched. */
  part_keys: number;
  /** Values already sealed with the new secret, left as they were. */
  already_new: number;
}

export async function rotateSecret(db: Database, current: string, next: string): Promise<SecretRotationReport> {
  if (next.length < MIN_SECRET_KEY_LENGTH) throw new SecretRotationError(`the new key must be at least ${MIN_SECRET_KEY_LENGTH} characters: generate one with \`assent secret generate\``);
  if (next === current) throw new SecretRotationError('the new key is the current one: nothing to rotate');
  const [oldKey, newKey] = [deriveKey(current), deriveKey(next)];
  const [oldBox, newBox] = [secretBox(current), secretBox(next)];
  const opens = (open: () => unknown) => {
    try {
      open();
      return true;
    } catch {
      return false;
    }
  };
  return db.system.transaction(async (tx) => {
    const report: SecretRotationReport = { organizations: 0, signing_keys: 0, webhook_secrets: 0, part_keys: 0, already_new: 0 };
    // No key or endpoint is added meanwhile (a server still running with the current secret would seal it with that one).
    await tx.query('lock table signing_keys, webhook_endpoints, fulfilment_parts in share row exclusive mode');
    const orgs = await tx.query<{ id: string; slug: string }>('select id, slug from organizations order by slug');
    for (const org of orgs) {
      report.organizations += 1;
      await tx.query("select set_config('app.org_id', $1, true)", [org.id]);
      const keys = await tx.query<{ kid: string; private_key_enc: string }>(
        'select kid, private_key_enc from signing_keys where org_id = $1::uuid order by created_at, kid for update',
        [org.id],
      );
      for (const key of keys) {
        let plain: Buffer;
        try {
          plain = unseal(oldKey, key.private_key_enc);
        } catch (e) {
          if (!(e instanceof SealedKeyError)) throw e;
          if (opens(() => unseal(newKey, key.private_key_enc))) {
            report.already_new += 1;
            continue;
          }
          throw new SecretRotationError(
            `ASSENT_SECRET_KEY does not open the signing key ${key.kid} of ${org.slug}: it is not the secret the keys were sealed with. Nothing was changed; set ASSENT_SECRET_KEY to the secret the servers run with.`,
          );
        }
        await tx.query('update signing_keys set private_key_enc = $3 where org_id = $1::uuid and kid = $2', [org.id, key.kid, seal(newKey, plain)]);
        report.signing_keys += 1;
      }
      const endpoints = await tx.query<{ id: string; secret: string }>(
        "select id, secret from webhook_endpoints where org_id = $1::uuid and secret like 'enc:v1:%' order by id for update",
        [org.id],
      );
      for (const endpoint of endpoints) {
        let plain: string;
        try {
          plain = oldBox.open(endpoint.secret);
        } catch {
          if (opens(() => newBox.open(endpoint.secret))) {
            report.already_new += 1;
            continue;
          }
          throw new SecretRotationError(
            `ASSENT_SECRET_KEY does not open the signing secret of webhook endpoint ${endpoint.id} of ${org.slug}: it is not the secret it was sealed with. Nothing was changed.`,
          );
        }
        await tx.query('update webhook_endpoints set secret = $3 where org_id = $1::uuid and id = $2::uuid', [org.id, endpoint.id, newBox.seal(plain)]);
        report.webhook_secrets += 1;
      }
      const parts = await tx.query<{ id: string; key_enc: string }>(
        'select id, key_enc from fulfilment_parts where org_id = $1::uuid and key_enc is not null order by id for update',
        [org.id],
      );
      for (const part of parts) {
        let plain: Buffer;
        try {
          plain = unseal(oldKey, part.key_enc);
        } catch (e) {
          if (!(e instanceof SealedKeyError)) throw e;
          if (opens(() => unseal(newKey, part.key_enc))) {
            report.already_new += 1;
            continue;
          }
          throw new SecretRotationError(`ASSENT_SECRET_KEY does not open the data key of access-package part ${part.id} of ${org.slug}: it is not the secret it was sealed with. Nothing was changed.`);
        }
        await tx.query('update fulfilment_parts set key_enc = $3 where org_id = $1::uuid and id = $2::uuid', [org.id, part.id, seal(newKey, plain)]);
        report.part_keys += 1;
      }
    }
    return report;
  });
}

/**
 * At a server's start: whether its secret opens the current signing key of the newest organization
 * that has one (a wrong secret is wrong for every key, so one key tells). null when it does, or when
 * no organization has a key yet; else a sentence saying what is wrong and what to do.
 */
export async function sealedKeyProblem(db: Database, secret: string): Promise<string | null> {
  const key = deriveKey(secret);
  const orgs = await db.system.query<{ id: string; slug: string }>('select id, slug from organizations order by created_at desc, id desc limit 20');
  for (const org of orgs) {
    const [row] = await db.system.transaction(async (tx) => {
      await tx.query("select set_config('app.org_id', $1, true)", [org.id]);
      return tx.query<{ kid: string; private_key_enc: string }>('select kid, private_key_enc from signing_keys where org_id = $1::uuid and retired_at is null', [org.id]);
    });
    if (!row) continue;
    try {
      unseal(key, row.private_key_enc);
      return null;
    } catch (e) {
      if (!(e instanceof SealedKeyError)) throw e;
      return (
        `ASSENT_SECRET_KEY does not open the signing keys in the store (tried ${org.slug}'s current key ${row.kid}): it is not the secret they were sealed with. ` +
        'If `assent secret rotate` replaced it, start with the new key (docs/operations.md, "The secret key").'
      );
    }
  }
  return null;
}
