// Late receipts: consent records (and withdrawals) written before receipts existed (migration 0018)
// have none. Signing needs the organization's private key, which only the service can open, so this is
// the service's work: `assent receipts backfill [<slug>]`, and a job every server runs at start and
// hourly (main.ts). Both sign through the one document builder and signer (document.ts, the signer of
// service.ts) that signs every new record.
//
// What a late receipt says (docs/api.md, "Consent receipts"): everything a receipt says, from the
// stored record (`time` is the record's created_at, never the signing time; the previous record is
// the one before it in time, as its own receipt would have named it; the notice is the version it was
// given under, from notice_versions), plus `issued_late: true` and `issued_at`, the signing time. It
// is signed with the organization's current key, which may be younger than the record.
//
// Safe with several processes at once: per organization, batches of BATCH records, each in one tenant
// transaction that first takes the organization's advisory lock (the job skips an organization
// another process is signing; the CLI waits for it), and sets receipts with `... where receipt is
// null`, so a record is signed once even without the lock. Migration 0024 lets the service role set a
// receipt and nothing else, and refuses changing one already set.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import { createIntervalJob, type IntervalJob } from '../../platform/jobs.js';
import type { ReceiptInput } from './document.js';
import { signingKeyRepo, type UnsignedRecordRow } from './repo.js';
import type { ReceiptSigner } from './service.js';

/** Records signed per transaction. */
export const BACKFILL_BATCH = 500;
/** The first key of the advisory lock (the second is the organization's). */
const LOCK_CLASS = 0x72637074; // 'rcpt'
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export interface BackfillReport {
  /** Receipts signed, in all. */
  signed: number;
  /** Per organization that had records without a receipt (or that was asked for by slug). */
  organizations: { id: string; slug: string; signed: number }[];
  /** Slugs skipped because another process was signing them (the job only; the CLI waits). */
  busy: string[];
}

/** The receipt input of a stored record: what it says, with the notice version it was given under. */
function lateInput(r: UnsignedRecordRow, issuedAt: Date): Omit<ReceiptInput, 'controller'> {
  const known = new Map([...r.point_purposes, ...(r.version_purposes ?? [])].map((p) => [p.id, p]));
  return {
    recordId: r.id,
    previousRecordId: r.previous_id,
    dpId: r.dp_id,
    collectionPoint: {
      id: r.collection_point_id,
      display_id: r.display_id,
      name: r.point_name,
      notice: r.version_notice,
      notice_version: r.notice_version,
      // The record's own purposes, in its order: the receipt must say what the record says.
      purposes: r.purposes.map((p) => ({ id: p.id, name: known.get(p.id)?.name ?? null, required: known.get(p.id)?.required ?? null })),
    },
    choices: r.purposes,
    action: r.consent_action,
    at: new Date(r.created_at),
    channel: r.channel,
    requestId: r.request_id,
    eventId: r.event_id,
    issuedLateAt: issuedAt,
  };
}

export function createReceiptBackfill({ db, clock, signer }: { db: Database; clock: Clock; signer: ReceiptSigner }) {
  /** Signs the organization's records without a receipt, a batch per transaction; 'busy' when another process holds its lock (wait false). */
  async function organization(orgId: string, wait: boolean): Promise<number | 'busy'> {
    let signed = 0;
    let after = ZERO_UUID;
    for (;;) {
      const batch = await withTenant(db, orgId, async (tx) => {
        const repo = signingKeyRepo(tx);
        if (!(await repo.backfillLock(LOCK_CLASS, wait))) return 'busy' as const;
        const rows = await repo.unsignedRecords(after, BACKFILL_BATCH);
        if (rows.length === 0) return { set: 0, last: null, full: false };
        const context = await signer.prepare(tx, null);
        const issuedAt = clock.now();
        const receipts = await Promise.all(rows.map(async (r) => ({ id: r.id, receipt: await signer.sign(context, lateInput(r, issuedAt)) })));
        const set = await repo.setReceipts(receipts);
        return { set: set.length, last: rows[rows.length - 1]!.id, full: rows.length === BACKFILL_BATCH };
      });
      if (batch === 'busy') return signed > 0 ? signed : 'busy';
      signed += batch.set;
      if (batch.last === null || !batch.full) return signed;
      after = batch.last;
    }
  }

  return {
    /**
     * Signs every record without a receipt, of one organization (orgId) or of all. wait: wait for an
     * organization another process is signing (the CLI) instead of skipping it (the job).
     */
    async run(options: { org?: { id: string; slug: string }; wait: boolean }): Promise<BackfillReport> {
      const orgs = options.org ? [options.org] : await db.system.query<{ id: string; slug: string }>('select id, slug from organizations order by id');
      const report: BackfillReport = { signed: 0, organizations: [], busy: [] };
      for (const org of orgs) {
        const signed = await organization(org.id, options.wait);
        if (signed === 'busy') report.busy.push(org.slug);
        else if (signed > 0 || options.org) {
          report.organizations.push({ id: org.id, slug: org.slug, signed });
          report.signed += signed;
        }
      }
      return report;
    },
  };
}

export type ReceiptBackfill = ReturnType<typeof createReceiptBackfill>;

/** The job: at start and every intervalMs (default hourly), every organization, skipping those another process is signing. */
export function createReceiptBackfillJob(
  receipts: { backfill(options: { wait: boolean }): Promise<BackfillReport> },
  log: { info(o: object, m: string): void; error(o: object, m: string): void },
  intervalMs = 3_600_000,
): IntervalJob {
  return createIntervalJob({
    name: 'receipt backfill',
    runAtStart: true,
    intervalMs,
    log,
    run: async () => {
      const report = await receipts.backfill({ wait: false });
      if (report.signed > 0) {
        log.info(
          { signed: report.signed, organizations: report.organizations.map((o) => ({ slug: o.slug, signed: o.signed })) },
          'signed late receipts for consent records written before receipts existed',
        );
      }
    },
  });
}
