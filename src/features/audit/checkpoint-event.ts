// The `checkpoint.published` webhook event (issue 32 item 2): an organization registers its witnesses'
// endpoints like any other webhook endpoint (POST /api/v1/webhooks, events ["checkpoint.published"]),
// and each new signed checkpoint of its audit log is delivered to them, signed as every webhook is
// (Standard Webhooks). A witness so holds every checkpoint as it was published, outside the
// organization's reach, and can check each against the next with a consistency proof (`assent witness`).
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { recordEvent } from '../../platform/webhooks/events.js';

/** A checkpoint as it is published: GET /.well-known/assent/checkpoints/latest, and this event's `data.checkpoint`. */
export interface PublishedCheckpoint {
  tree_size: number;
  /** MTH of the first tree_size entries, hex. */
  root_hash: string;
  /** When the organization signed it (ISO 8601). */
  timestamp: string;
  /** The signing key's id (in /.well-known/jwks.json). */
  kid: string;
  /** Compact JWS (EdDSA, typ assent-checkpoint+jws) over {format, organization, tree_size, root_hash, timestamp}. */
  jws: string;
  /** RFC 3161 time-stamp token of the JWS (base64 DER), or null without TSA_URL. */
  tsa_token: string | null;
}

/**
 * Records the event in the sequencer's tenant transaction (the one that stores the checkpoint), so it is
 * delivered exactly when the checkpoint committed; nothing is written when no endpoint subscribes.
 */
export async function recordCheckpointPublished(tx: TenantTx, checkpoint: PublishedCheckpoint, at: Date): Promise<void> {
  const { tree_size, root_hash, timestamp, kid, jws, tsa_token } = checkpoint;
  await recordEvent(tx, 'checkpoint.published', { checkpoint: { tree_size, root_hash, timestamp, kid, jws, tsa_token } }, at);
}
