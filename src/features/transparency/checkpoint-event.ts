// The `checkpoint.published` webhook event (issue 32 item 2): an organization registers its witnesses'
// endpoints like any other webhook endpoint (POST /api/v1/webhooks, events ["checkpoint.published"]),
// and each new signed checkpoint of its audit log is delivered to them, signed as every webhook is
// (Standard Webhooks). A witness so holds every checkpoint as it was published, outside the
// organization's reach, and can check each against the next with a consistency proof (`assent witness`).
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { recordEvent } from '../../platform/webhooks/events.js';
import type { PublishedCheckpoint } from './checkpoints.js';
import type { SequencerDeps } from './sequencer.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import { checkpointTimestampData, requestTimestamp } from '../audit/index.js';

/**
 * Records the event in the sequencer's tenant transaction (the one that stores the checkpoint), so it is
 * delivered exactly when the checkpoint committed; nothing is written when no endpoint subscribes.
 */
export async function recordCheckpointPublished(tx: TenantTx, checkpoint: PublishedCheckpoint, at: Date): Promise<void> {
  const { tree_size, root_hash, timestamp, kid, jws, tsa_token } = checkpoint;
  await recordEvent(tx, 'checkpoint.published', { checkpoint: { tree_size, root_hash, timestamp, kid, jws, tsa_token } }, at);
}

/**
 * What the sequencer does with each new checkpoint, for the server and the CLI alike: tell the witnesses'
 * endpoints (checkpoint.published, in the checkpoint's transaction) and, with TSA_URL, have its JWS
 * time-stamped (after the commit; a TSA that fails leaves the checkpoint without a token).
 */
export function checkpointHooks(config: Pick<Config, 'tsaUrl'>, clock: Clock): Pick<SequencerDeps, 'publish' | 'timestamp'> {
  const tsaUrl = config.tsaUrl;
  return {
    publish: (tx, checkpoint) => recordCheckpointPublished(tx, checkpoint, clock.now()),
    ...(tsaUrl ? { timestamp: (jws: string) => requestTimestamp(tsaUrl.href, checkpointTimestampData(jws)) } : {}),
  };
}
