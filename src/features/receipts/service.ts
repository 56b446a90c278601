// Receipts: the organization's signing keys seen from a tenant (the current key, the public keys,
// rotation) and the signing step the consents service runs inside its own transaction.
import type { Database } from '../../platform/db/types.js';
import { tenantReads, withTenant, isUniqueViolation, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import type { SigningKeyring, SigningPrivateKey } from '../../platform/crypto/signing-keys.js';
import { recordAudit } from '../audit/index.js';
import { buildReceipt, publishedKey, signReceipt, type PublishedJwk, type ReceiptInput } from './document.js';
import { signingKeyRepo } from './repo.js';
import { createReceiptBackfill } from './backfill.js';

export interface ReceiptServiceDeps {
  db: Database;
  clock: Clock;
  keyring: SigningKeyring;
  /** PUBLIC_URL: the organization's address in the receipt is <slug>.<its host>. */
  publicUrl: URL;
}

/** What signing one record needs, read in the record's transaction before its insert (see prepare). */
export interface SigningContext {
  controller: ReceiptInput['controller'];
  previousRecordId: string | null;
  key: Promise<{ kid: string; privateKey: SigningPrivateKey }>;
}

/** Signs records: the one signing path of every receipt, at the record's write and late (backfill.ts). */
export interface ReceiptSigner {
  prepare(tx: TenantTx, previousOf: { collectionPoint: string; dpId: string } | null): Promise<SigningContext>;
  sign(context: SigningContext, input: Omit<ReceiptInput, 'controller'>): Promise<string>;
}

/** The organization's public keys with their validity, as /.well-known/jwks.json serves them (also the export's jwks.json and `audit verify`'s). */
export async function publishedKeysOf(tx: TenantTx): Promise<{ keys: PublishedJwk[] }> {
  const keys = await signingKeyRepo(tx).list();
  return { keys: keys.map(publishedKey) };
}

export function createReceiptService({ db, clock, keyring, publicUrl }: ReceiptServiceDeps) {
  const orgUrl = (slug: string) => `${publicUrl.protocol}//${slug}.${publicUrl.host}`;

  const signer: ReceiptSigner = {
    /**
     * One statement, to be sent beside the record's other lookups (it waits for none of them): the
     * organization, its current key (created here on first use, for organizations older than their
     * key) and, with previousOf, the data principal's previous record at that collection point.
     */
    async prepare(tx: TenantTx, previousOf: { collectionPoint: string; dpId: string } | null): Promise<SigningContext> {
      const repo = signingKeyRepo(tx);
      const row = await repo.context(previousOf);
      const current =
        row.kid !== null && row.private_key_enc !== null
          ? Promise.resolve({ kid: row.kid, private_key_enc: row.private_key_enc })
          : repo.addFirst(keyring.generate(), clock.now());
      const key = current.then(async (k) => ({ kid: k.kid, privateKey: await keyring.open(k.kid, k.private_key_enc) }));
      key.catch(() => {}); // awaited by sign(); a failure surfaces there
      return { controller: { id: tx.orgId, slug: row.slug, name: row.name, url: orgUrl(row.slug) }, previousRecordId: row.previous_id, key };
    },

    /** The receipt of one record: the document, signed with the context's key. */
    async sign(context: SigningContext, input: Omit<ReceiptInput, 'controller'>): Promise<string> {
      return signReceipt(buildReceipt({ ...input, controller: context.controller }), await context.key);
    },
  };

  const backfill = createReceiptBackfill({ db, clock, signer });

  return {
    signer,

    /**
     * Late receipts for records written before receipts existed: one organization (the CLI names it)
     * or all. wait: wait for an organization another process is signing (the CLI) rather than skip it
     * (the job, backfill.ts).
     */
    backfill: backfill.run,

    /** The organization's public keys, current and retired, oldest first: the JWKS. */
    jwks(orgId: string) {
      return publishedKeysOf(tenantReads(db, orgId));
    },

    /** Every key with its dates (public parts only). */
    async list(ctx: { orgId: string }) {
      const keys = await signingKeyRepo(tenantReads(db, ctx.orgId)).list();
      return keys.map((k) => ({ kid: k.kid, alg: 'EdDSA' as const, created_at: k.created_at, retired_at: k.retired_at, current: k.retired_at === null, public_jwk: k.public_jwk }));
    },

    /**
     * A new current key; the old one is retired and stays in the JWKS. Audited (signing_key.rotated)
     * when a caller of the API did it; the CLI (`assent signing-key rotate`) passes its organization id
     * alone, and like the CLI's other changes it is not in the audit log.
     */
    rotate(ctx: TenantContext | { orgId: string }) {
      const at = clock.now();
      const key = keyring.generate();
      return withTenant(db, ctx.orgId, async (tx) => {
        let rotated;
        try {
          rotated = await signingKeyRepo(tx).rotate(key, at);
        } catch (e) {
          if (isUniqueViolation(e)) throw new AppError('conflict', 'Another rotation of the signing key is in progress; try again');
          throw e;
        }
        if ('actor' in ctx) await recordAudit(tx, ctx, at, {
          action: 'signing_key.rotated',
          targetType: 'signing_key',
          targetId: rotated.added.kid,
          details: { kid: rotated.added.kid, retired_kid: rotated.retired },
        });
        return {
          kid: rotated.added.kid,
          alg: 'EdDSA' as const,
          created_at: rotated.added.created_at,
          retired_at: null,
          current: true,
          public_jwk: rotated.added.public_jwk,
          retired_kid: rotated.retired,
        };
      });
    },
  };
}

export type ReceiptService = ReturnType<typeof createReceiptService>;
