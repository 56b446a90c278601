// The consent receipt: an ISO/IEC TS 27560-shaped JSON document, signed as a compact JWS (EdDSA over
// Ed25519) with the organization's key. This module is pure (no database): building the document,
// signing it, and verifying a receipt with nothing but a JWKS (what a regulator, the export's verifier
// or a data principal does offline).
import { createHash } from 'node:crypto';
import { CompactSign, compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { SigningPrivateKey, SigningPublicJwk } from '../../platform/crypto/signing-keys.js';

export const RECEIPT_VERSION = 'assent-consent-receipt/1';
/** The JWS `typ` of a receipt. */
export const RECEIPT_TYP = 'consent-receipt+jws';

export type ReceiptAction = 'approved' | 'partial_consent' | 'declined' | 'revoked';
export type ReceiptChannel = 'api' | 'link' | 'rights_center' | 'sdk';

/** What a receipt says (docs/api.md, "Consent receipts"). Field order is the signed order. */
export interface ConsentReceipt {
  version: typeof RECEIPT_VERSION;
  /** The standard whose consent record this follows. */
  schema: 'ISO/IEC TS 27560:2023';
  /** The consent record's id (consent_id). */
  record_id: string;
  /** The previous record of this data principal at this collection point, or null for the first. */
  previous_record_id: string | null;
  /** The PII controller: the organization. */
  controller: { id: string; slug: string; name: string; url: string; jwks_uri: string };
  /** The PII principal: the organization's own identifier for them. */
  principal: { dp_id: string };
  collection_point: { id: string; display_id: string; name: string };
  /**
   * The notice shown: its version and the SHA-256 (hex) of its text in UTF-8. null only in a late
   * receipt whose notice version's text was never kept (a version replaced before migration 0019).
   */
  notice: { version: number; sha256: string | null };
  /**
   * Every purpose of the collection point, in its order, with its state after this record. In a late
   * receipt, the record's own purposes; name and required null only when no kept notice version or
   * the point as it is now knows the purpose any more.
   */
  purposes: { id: string; name: string | null; required: boolean | null; granted: boolean; state: 'given' | 'refused' | 'withdrawn' }[];
  /** approved | partial_consent | declined (giving or changing), revoked (withdrawal). */
  action: ReceiptAction;
  /** When the record was made (ISO 8601 UTC, milliseconds). */
  time: string;
  /** How it was made: api, link (a consent link's page), rights_center (the data principal), sdk. */
  channel: ReceiptChannel;
  /** The consent link request and link instance it completed, when it did. */
  request_id: string | null;
  event_id: string | null;
  /**
   * Only in a late receipt (signed by the backfill for a record written before receipts existed):
   * true, and when the receipt was signed. `time` stays the record's own time; the signing key may be
   * younger than the record. A receipt without these was signed in the record's own transaction.
   */
  issued_late?: true;
  issued_at?: string;
}

export interface ReceiptInput {
  recordId: string;
  previousRecordId: string | null;
  controller: { id: string; slug: string; name: string; url: string };
  dpId: string;
  /** notice null, a purpose's name and required null: not known any more (late receipts only). */
  collectionPoint: {
    id: string;
    display_id: string;
    name: string;
    notice: string | null;
    notice_version: number;
    purposes: { id: string; name: string | null; required: boolean | null }[];
  };
  choices: { id: string; granted: boolean }[];
  action: ReceiptAction;
  at: Date;
  channel: ReceiptChannel;
  requestId: string | null;
  eventId: string | null;
  /** Set for a late receipt (the backfill): when it is signed, later than `at`. */
  issuedLateAt?: Date;
}

export function noticeSha256(notice: string): string {
  return createHash('sha256').update(notice, 'utf8').digest('hex');
}

export function buildReceipt(i: ReceiptInput): ConsentReceipt {
  const granted = new Map(i.choices.map((c) => [c.id, c.granted]));
  const refusedState = i.action === 'revoked' ? 'withdrawn' : 'refused';
  return {
    version: RECEIPT_VERSION,
    schema: 'ISO/IEC TS 27560:2023',
    record_id: i.recordId,
    previous_record_id: i.previousRecordId,
    controller: { ...i.controller, jwks_uri: `${i.controller.url}/.well-known/jwks.json` },
    principal: { dp_id: i.dpId },
    collection_point: { id: i.collectionPoint.id, display_id: i.collectionPoint.display_id, name: i.collectionPoint.name },
    notice: { version: i.collectionPoint.notice_version, sha256: i.collectionPoint.notice === null ? null : noticeSha256(i.collectionPoint.notice) },
    purposes: i.collectionPoint.purposes.map((p) => {
      const g = granted.get(p.id) === true;
      return { id: p.id, name: p.name, required: p.required, granted: g, state: g ? 'given' : refusedState };
    }),
    action: i.action,
    time: i.at.toISOString(),
    channel: i.channel,
    request_id: i.requestId,
    event_id: i.eventId,
    ...(i.issuedLateAt ? { issued_late: true as const, issued_at: i.issuedLateAt.toISOString() } : {}),
  };
}

const encoder = new TextEncoder();

/** The compact JWS of a receipt: header {alg: EdDSA, kid, typ}, payload the document's JSON. */
export function signReceipt(receipt: ConsentReceipt, key: { kid: string; privateKey: SigningPrivateKey }): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(receipt))).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: RECEIPT_TYP }).sign(key.privateKey);
}

export class ReceiptVerificationError extends Error {}

/**
 * A signing key as the JWKS publishes it (/.well-known/jwks.json, an export's jwks.json): the public
 * JWK with its validity, `not_before` (when it became the current key) and `not_after` (when a
 * rotation retired it; absent while it is current). A receipt signed outside its key's validity does
 * not verify: a receipt back-dated to last year and signed with today's key is refused.
 */
export interface PublishedJwk extends SigningPublicJwk {
  not_before: string;
  not_after?: string;
}

export function publishedKey(k: { public_jwk: SigningPublicJwk; created_at: Date; retired_at: Date | null }): PublishedJwk {
  return { ...k.public_jwk, not_before: k.created_at.toISOString(), ...(k.retired_at ? { not_after: k.retired_at.toISOString() } : {}) };
}

/**
 * How far a receipt's signing time may fall outside its key's validity and still verify: the clocks of
 * several server processes differ a little, and a rotation may commit between the moment a record took
 * its time and the moment it read the current key. A minute is far below any back-dating that matters.
 */
export const KEY_VALIDITY_SKEW_MS = 60_000;

/** The receipt's signing time (a late receipt's `issued_at`, otherwise its `time`) against its key's validity. */
function validityProblem(receipt: ConsentReceipt, kid: string, jwks: JSONWebKeySet): string | null {
  const signedAt = Date.parse(receipt.issued_late ? (receipt.issued_at ?? '') : receipt.time);
  if (Number.isNaN(signedAt)) return `receipt has no valid ${receipt.issued_late ? 'issued_at' : 'time'}`;
  if (receipt.issued_late && Date.parse(receipt.time) > signedAt + KEY_VALIDITY_SKEW_MS) return `late receipt's time ${receipt.time} is after its issued_at ${receipt.issued_at}`;
  return keyValidityProblem(jwks, kid, signedAt, `receipt ${receipt.issued_late ? `issued_at ${receipt.issued_at}` : `time ${receipt.time}`}`);
}

/**
 * Whether a signature made at `signedAt` (ms) by key `kid` falls within that key's validity in the
 * JWKS (with KEY_VALIDITY_SKEW_MS of tolerance); null when it does or the JWKS gives no validity.
 * `what` names the signed thing and its time in the message ("receipt time 2026-…").
 */
export function keyValidityProblem(jwks: JSONWebKeySet, kid: string, signedAt: number, what: string): string | null {
  const key = jwks.keys.find((k) => k.kid === kid) as Partial<PublishedJwk> | undefined;
  if (key?.not_before !== undefined) {
    const from = Date.parse(key.not_before);
    if (Number.isNaN(from)) return `key ${kid} has an unreadable not_before ${String(key.not_before)}`;
    if (signedAt < from - KEY_VALIDITY_SKEW_MS) return `${what} is before its key ${kid} became valid (not_before ${key.not_before}): back-dated, or signed with a key that did not exist then`;
  }
  if (key?.not_after !== undefined) {
    const to = Date.parse(key.not_after);
    if (Number.isNaN(to)) return `key ${kid} has an unreadable not_after ${String(key.not_after)}`;
    if (signedAt > to + KEY_VALIDITY_SKEW_MS) return `${what} is after its key ${kid} was retired (not_after ${key.not_after}): signed with a retired key`;
  }
  return null;
}

/**
 * Verifies a receipt with nothing but a JWKS (an organization's /.well-known/jwks.json, or the public
 * keys in an export): the signature must verify with the key its `kid` names, by EdDSA, and the
 * receipt's signing time must fall within that key's validity (not_before, not_after) when the JWKS
 * gives it. Returns the document; throws ReceiptVerificationError otherwise (unknown kid, bad
 * signature, not a receipt, outside its key's validity).
 */
export async function verifyReceipt(jws: string, jwks: JSONWebKeySet): Promise<{ receipt: ConsentReceipt; kid: string }> {
  let verified;
  try {
    verified = await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  } catch (e) {
    throw new ReceiptVerificationError(`receipt signature does not verify: ${(e as Error).message}`);
  }
  if (verified.protectedHeader.typ !== RECEIPT_TYP) throw new ReceiptVerificationError(`not a consent receipt (typ ${String(verified.protectedHeader.typ)})`);
  let receipt: ConsentReceipt;
  try {
    receipt = JSON.parse(new TextDecoder().decode(verified.payload)) as ConsentReceipt;
  } catch {
    throw new ReceiptVerificationError('receipt payload is not JSON');
  }
  if (receipt?.version !== RECEIPT_VERSION) throw new ReceiptVerificationError('receipt payload has an unknown version');
  const kid = verified.protectedHeader.kid!;
  const invalid = validityProblem(receipt, kid, jwks);
  if (invalid) throw new ReceiptVerificationError(invalid);
  return { receipt, kid };
}

/** The stored record's fields a receipt must repeat; a mismatch names the first field that differs, null when they agree. */
export function receiptMismatch(
  receipt: ConsentReceipt,
  record: { consent_id: string; dp_id: string; collection_point_id: string; consent_action: string; notice_version: number; purposes: { id: string; granted: boolean }[]; created_at: Date | string; channel?: string },
): string | null {
  if (receipt.record_id !== record.consent_id) return 'record_id';
  if (receipt.principal.dp_id !== record.dp_id) return 'principal.dp_id';
  if (receipt.collection_point.id !== record.collection_point_id) return 'collection_point.id';
  if (receipt.action !== record.consent_action) return 'action';
  if (receipt.notice.version !== record.notice_version) return 'notice.version';
  if (new Date(receipt.time).getTime() !== new Date(record.created_at).getTime()) return 'time';
  if (record.channel !== undefined && receipt.channel !== record.channel) return 'channel';
  const stated = new Map(receipt.purposes.map((p) => [p.id, p.granted]));
  if (stated.size !== record.purposes.length || record.purposes.some((p) => stated.get(p.id) !== p.granted)) return 'purposes';
  return null;
}
