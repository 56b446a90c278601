// Signed checkpoints (issue 32): an organization's audit tree at one moment, its size and root hash,
// signed with the organization's Ed25519 key as a compact JWS, the way a transparency log signs its
// tree heads (RFC 9162's signed tree head, here in JOSE so the organization's published JWKS verifies
// it with no new key format). Anyone who keeps one can later ask for a consistency proof to any larger
// checkpoint, or recompute the tree from an export, and so prove that nothing before it changed.
import { CompactSign, compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { SigningPrivateKey } from '../../platform/crypto/signing-keys.js';
import { isHashHex } from '../audit/merkle.js';
import { keyValidityProblem } from '../receipts/index.js';

export const CHECKPOINT_TYP = 'assent-checkpoint+jws';
export const CHECKPOINT_FORMAT = 'assent-checkpoint/1';

export interface CheckpointPayload {
  format: typeof CHECKPOINT_FORMAT;
  organization: { id: string; slug: string };
  tree_size: number;
  /** MTH of the first tree_size entries (RFC 9162), hex. */
  root_hash: string;
  /** When it was signed (ISO 8601, UTC, milliseconds). */
  timestamp: string;
}

/** A checkpoint as the API and the export give it: the signed JWS and what it says, plus the optional RFC 3161 token. */
export interface PublishedCheckpoint {
  tree_size: number;
  root_hash: string;
  timestamp: string;
  kid: string;
  jws: string;
  /** Base64 DER of an RFC 3161 TimeStampToken over the JWS text (TSA_URL), or null. */
  tsa_token: string | null;
}

export function signCheckpoint(p: CheckpointPayload, key: { kid: string; privateKey: SigningPrivateKey }): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(p))).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: CHECKPOINT_TYP }).sign(key.privateKey);
}

export class CheckpointError extends Error {}

/**
 * The checkpoint's payload once its signature verifies with the JWKS (the organization's
 * /.well-known/jwks.json, or a copy kept from outside an export) and its key was valid at its
 * timestamp; throws a CheckpointError naming the problem otherwise.
 */
export async function verifyCheckpointJws(jws: string, jwks: JSONWebKeySet): Promise<{ checkpoint: CheckpointPayload; kid: string }> {
  let verified;
  try {
    verified = await compactVerify(jws.trim(), createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  } catch (e) {
    throw new CheckpointError(`the checkpoint's signature does not verify with the organization's keys: ${(e as Error).message}`);
  }
  if (verified.protectedHeader.typ !== CHECKPOINT_TYP) throw new CheckpointError(`not a checkpoint (typ ${String(verified.protectedHeader.typ)})`);
  let p: CheckpointPayload;
  try {
    p = JSON.parse(new TextDecoder().decode(verified.payload)) as CheckpointPayload;
  } catch {
    throw new CheckpointError("the checkpoint's payload is not JSON");
  }
  if (p?.format !== CHECKPOINT_FORMAT) throw new CheckpointError(`the checkpoint has an unknown format ${JSON.stringify(p?.format)}`);
  if (!Number.isSafeInteger(p.tree_size) || p.tree_size < 1 || !isHashHex(p.root_hash) || Number.isNaN(Date.parse(p.timestamp))) {
    throw new CheckpointError('the checkpoint lacks a valid tree_size, root_hash or timestamp');
  }
  const kid = verified.protectedHeader.kid!;
  const invalid = keyValidityProblem(jwks, kid, Date.parse(p.timestamp), `the checkpoint's timestamp ${p.timestamp}`);
  if (invalid) throw new CheckpointError(invalid);
  return { checkpoint: p, kid };
}

/**
 * A checkpoint kept by someone (a file): the published object ({jws, ...}) or the bare JWS text.
 * Returns the JWS; the caller verifies it.
 */
export function checkpointJwsOf(text: string): string {
  const t = text.trim();
  if (t.startsWith('{')) {
    let o: unknown;
    try {
      o = JSON.parse(t);
    } catch {
      throw new CheckpointError('the checkpoint file is neither JSON nor a compact JWS');
    }
    const jws = (o as { jws?: unknown }).jws;
    if (typeof jws !== 'string') throw new CheckpointError('the checkpoint file has no "jws" field');
    return jws.trim();
  }
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(t)) throw new CheckpointError('the checkpoint file is neither JSON nor a compact JWS');
  return t;
}
