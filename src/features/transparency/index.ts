// The audit log's transparency: the sequencer that seals entries into the chain and the Merkle tree,
// signed checkpoints, and proofs. The feature's only public surface.
import type { FastifyInstance } from 'fastify';
import type { AccessDeps } from '../../platform/auth/access.js';
import { transparencyRoutes } from './routes.js';
import { createTransparencyService } from './service.js';
import type { Sequencer } from './sequencer.js';
import type { Database } from '../../platform/db/types.js';

export { createSequencer, publishedCheckpoint, SEAL_BATCH, type Sequencer, type SealOutcome } from './sequencer.js';
export { CHECKPOINT_FORMAT, CHECKPOINT_TYP, CheckpointError, checkpointJwsOf, signCheckpoint, verifyCheckpointJws, type CheckpointPayload, type PublishedCheckpoint } from './checkpoints.js';
export { transparencyRepo } from './repo.js';
export { verifyAuditLog, type AuditLogReport } from './verify.js';
export type { TransparencyService } from './service.js';

export function registerTransparency(app: FastifyInstance, deps: { db: Database; sequencer: Sequencer } & Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>) {
  const service = createTransparencyService(deps);
  transparencyRoutes(app, service, deps);
  return service;
}

// Issue 32 item 2 (wip/proof): the checkpoint.published event and `assent witness`.
export { checkpointHooks, recordCheckpointPublished } from './checkpoint-event.js';
export { witness, witnessOrganization, WITNESS_DEFAULT_DIR, type WitnessResult, type KeptCheckpoint } from './witness.js';
