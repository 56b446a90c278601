// The signed manifest (issue 32 item 5): MANIFEST.jws, a compact JWS (EdDSA) made with the
// organization's current signing key over what pins the archive: the SHA-256 of MANIFEST.sha256, the
// organization, the export's time and its audit chain head. MANIFEST.sha256 alone certifies only
// itself (whoever changes a file can rewrite it); the signature ties it to the organization's key,
// whose public part the verifier can take from outside the archive (`export verify --jwks`).
import { CompactSign, compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { SigningPrivateKey } from '../../platform/crypto/signing-keys.js';
import { keyValidityProblem } from '../receipts/index.js';

export const MANIFEST_TYP = 'assent-export-manifest+jws';

export interface SignedManifest {
  format: string;
  organization: { id: string; slug: string };
  exported_at: string;
  /** SHA-256 (hex) of MANIFEST.sha256 as it is in the archive. */
  manifest_sha256: string;
  audit_chain_head: { seq: number; hash: string } | null;
  /** Format 3: the archive's latest audit checkpoint (its JWS is in audit-checkpoints/), or null when the log is empty. */
  audit_checkpoint?: { tree_size: number; root_hash: string; jws: string } | null;
}

export function signManifest(m: SignedManifest, key: { kid: string; privateKey: SigningPrivateKey }): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(m))).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: MANIFEST_TYP }).sign(key.privateKey);
}

/** The signed manifest's content once its signature verifies with the JWKS and its key was valid at the export's time; throws a sentence otherwise. */
export async function verifyManifestSignature(jws: string, jwks: JSONWebKeySet): Promise<{ manifest: SignedManifest; kid: string }> {
  let verified;
  try {
    verified = await compactVerify(jws.trim(), createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  } catch (e) {
    throw new Error(`its signature does not verify with the organization's keys: ${(e as Error).message}`);
  }
  if (verified.protectedHeader.typ !== MANIFEST_TYP) throw new Error(`it is not a signed manifest (typ ${String(verified.protectedHeader.typ)})`);
  let manifest: SignedManifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(verified.payload)) as SignedManifest;
  } catch {
    throw new Error('its payload is not JSON');
  }
  const kid = verified.protectedHeader.kid!;
  const invalid = keyValidityProblem(jwks, kid, Date.parse(manifest.exported_at), `the export's time ${manifest.exported_at}`);
  if (invalid) throw new Error(invalid);
  return { manifest, kid };
}
