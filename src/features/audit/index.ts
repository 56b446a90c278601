// The audit log: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import { auditRoutes } from './routes.js';
import { createAuditService, type AuditServiceDeps } from './service.js';

export { alongsideAudit, onAuditRecorded, recordAudit, type AuditEvent, type AuditService } from './service.js';
export type { AuditedRow } from './repo.js';
export { verifyAuditChain, verifyChainEntries, createChainVerifier, sha256Hex, GENESIS_HASH, type ChainReport, type ChainBreak, type ExportedAuditEntry } from './chain.js';

export function registerAudit(app: FastifyInstance, deps: AuditServiceDeps) {
  const service = createAuditService(deps);
  auditRoutes(app, service);
  return service;
}

// Issue 32 items 2 and 4 (wip/proof): trusted time, the checkpoint.published event, the witness.
export { requestTimestamp, verifyTimestampToken, checkpointTimestampData, verifyCheckpointTimestamp, TimestampRequestError, TimestampVerificationError, type TimestampInfo } from './tsa.js';
export { recordCheckpointPublished, type PublishedCheckpoint } from './checkpoint-event.js';
export { witness, witnessOrganization, WITNESS_DEFAULT_DIR, type WitnessResult, type KeptCheckpoint } from './witness.js';
