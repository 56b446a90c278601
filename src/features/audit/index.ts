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

// Issue 32 item 4 (wip/proof): trusted time (RFC 3161).
export { requestTimestamp, verifyTimestampToken, checkpointTimestampData, verifyCheckpointTimestamp, TimestampRequestError, TimestampVerificationError, type TimestampInfo } from './tsa.js';
