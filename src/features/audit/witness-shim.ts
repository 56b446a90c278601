// TEMPORARY (wip/proof, until the lead's src/features/transparency is merged): the checkpoint JWS check
// with the interface the lead announced (verifyCheckpointJws, CheckpointError). Deleted at the merge;
// witness.ts then imports them from ../transparency/index.js.
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { isHashHex } from './merkle.js';
import { keyValidityProblem } from '../receipts/index.js';

export const CHECKPOINT_TYP = 'assent-checkpoint+jws';
export const CHECKPOINT_FORMAT = 'assent-checkpoint/1';

export interface CheckpointPayload {
  format: typeof CHECKPOINT_FORMAT;
  organization: { id: string; slug: string };
  tree_size: number;
  root_hash: string;
  timestamp: string;
}

export class CheckpointError extends Error {}

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
