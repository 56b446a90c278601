// Consent receipts: the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import type { AccessDeps } from '../../platform/auth/access.js';
import { receiptRoutes } from './routes.js';
import { createReceiptService, type ReceiptServiceDeps } from './service.js';

export { createReceiptService, publishedKeysOf, type ReceiptService, type ReceiptSigner, type SigningContext } from './service.js';
export { BACKFILL_BATCH, createReceiptBackfillJob, type BackfillReport } from './backfill.js';
export { JwksSourceError, loadJwks, verifyReceiptFile, type ReceiptFileReport } from './verify-file.js';
export {
  buildReceipt,
  KEY_VALIDITY_SKEW_MS,
  keyValidityProblem,
  publishedKey,
  type PublishedJwk,
  noticeSha256,
  receiptMismatch,
  RECEIPT_TYP,
  RECEIPT_VERSION,
  ReceiptVerificationError,
  signReceipt,
  verifyReceipt,
  type ConsentReceipt,
} from './document.js';

export function registerReceipts(app: FastifyInstance, deps: ReceiptServiceDeps & Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>) {
  const service = createReceiptService(deps);
  receiptRoutes(app, service, deps);
  return service;
}
