// The audit sequencer (issues 31 and 32): seals each organization's new audit entries into its hash
// chain and Merkle tree shortly after they commit, off the request path, and signs checkpoints.
//
// Which organizations: every recordAudit in this process tells it (onAuditRecorded), and it seals
// those on its next tick (every intervalMs, 1 s); a sweep over every organization (every sweepMs,
// 60 s, and at start) seals what other writers left (the CLI, another process that died between its
// commit and its tick). Several processes at once: assent_audit_seal takes the organization's head
// row with SKIP LOCKED, so one seals and the others skip it and try on their next tick.
//
// Checkpoints: after sealing, when the tree has grown, a checkpoint is signed if the organization has
// none yet or its latest is at least checkpointMs (60 s) old; otherwise the organization is kept and
// signed on a later tick, so a checkpoint follows new entries within a minute (and a tick). The
// export and `assent audit verify` seal and sign at once (sealNow).
import type { Database } from '../../platform/db/types.js';
import { withTenant, tenantReads, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import { createIntervalJob } from '../../platform/jobs.js';
import { onAuditRecorded } from '../audit/index.js';
import type { ReceiptSigner } from '../receipts/index.js';
import { CHECKPOINT_FORMAT, signCheckpoint, type PublishedCheckpoint } from './checkpoints.js';
import { transparencyRepo, type CheckpointRow } from './repo.js';

/**
 * Entries sealed per transaction. The embedded store has one connection for every request, and sealing
 * costs about 0.5 ms an entry there (bench/audit-tree.ts): 200 keeps a request's wait behind a batch
 * near 100 ms. PostgreSQL seals beside the requests, at about 0.1-0.2 ms an entry.
 */
export const SEAL_BATCH = { pglite: 200, postgres: 1000 } as const;

export interface SequencerDeps {
  db: Database;
  clock: Clock;
  /** Signs checkpoints; without it (a CLI command with no ASSENT_SECRET_KEY) entries are sealed and the server signs. */
  signer?: ReceiptSigner;
  log: { error(o: object, m: string): void; warn?(o: object, m: string): void };
  intervalMs?: number;
  sweepMs?: number;
  checkpointMs?: number;
  /** Inside the checkpoint's transaction: tell its witnesses (the checkpoint.published event). */
  publish?: (tx: TenantTx, checkpoint: PublishedCheckpoint) => Promise<void>;
  /** After the checkpoint commits: an RFC 3161 token over its JWS (TSA_URL), stored with it. */
  timestamp?: (jws: string) => Promise<Buffer>;
}

export interface SealOutcome {
  /** Entries sealed now. */
  sealed: number;
  tree_size: number;
  root_hash: string;
  /** Another process was sealing the organization (try again later). */
  busy: boolean;
  /** The checkpoint signed now, if any. */
  checkpoint: PublishedCheckpoint | null;
  /** The tree has grown past its latest checkpoint, which is not due yet: when it is. */
  checkpointDueAt: number | null;
}

export function publishedCheckpoint(r: CheckpointRow): PublishedCheckpoint {
  return {
    tree_size: Number(r.tree_size),
    root_hash: r.root_hash,
    timestamp: r.at.toISOString(),
    kid: r.kid,
    jws: r.jws,
    tsa_token: r.tsa_token ? Buffer.from(r.tsa_token).toString('base64') : null,
  };
}

/** How long after its last entry an organization stays a target of the ticks (longer than a write's transaction). */
const SETTLE_MS = 5_000;

export function createSequencer(deps: SequencerDeps) {
  const { db, clock, signer, log } = deps;
  const checkpointMs = deps.checkpointMs ?? 60_000;
  const batch = SEAL_BATCH[db.kind];
  const sweepMs = deps.sweepMs ?? 60_000;
  // Organizations with entries to seal: when an entry was last recorded (ms), or 0 for "once more".
  // The listener fires when the entry is written, before its transaction commits: an organization stays
  // a target for SETTLE_MS after its last entry, so a tick that ran before the commit (and found nothing
  // committed to seal) is not the last one to look (without it, the entry waited for the sweep).
  const dirty = new Map<string, number>();
  const again = (org: string) => dirty.set(org, dirty.get(org) ?? 0);
  const checkpointDue = new Map<string, number>();
  let nextSweep = 0;
  const unsubscribe = onAuditRecorded((orgId) => dirty.set(orgId, Date.now()));

  /** One transaction: a batch sealed. */
  async function sealBatch(orgId: string): Promise<SealOutcome> {
    return withTenant(db, orgId, async (tx) => {
      const r = await transparencyRepo(tx).seal(batch);
      if (r.sealed < 0) return { sealed: 0, tree_size: 0, root_hash: '', busy: true, checkpoint: null, checkpointDueAt: null };
      return { sealed: r.sealed, tree_size: r.tree_size, root_hash: r.root_hash!, busy: false, checkpoint: null, checkpointDueAt: null };
    });
  }

  /**
   * A transaction of its own, after the sealing committed (so a signing failure, a key that cannot be
   * opened, never holds back sealing): a checkpoint of the tree as its head row says, when it has
   * grown past the latest one and, for 'due', the latest is checkpointMs old.
   */
  async function checkpointIfDue(orgId: string, mode: 'due' | 'now'): Promise<{ checkpoint: PublishedCheckpoint | null; dueAt: number | null }> {
    if (!signer) return { checkpoint: null, dueAt: null };
    return withTenant(db, orgId, async (tx) => {
      const repo = transparencyRepo(tx);
      const [head, latest] = await Promise.all([repo.head(), repo.latestCheckpoint()]);
      if (head.tree_size === 0 || (latest && Number(latest.tree_size) >= head.tree_size)) return { checkpoint: null, dueAt: null };
      const now = clock.now();
      const dueAt = latest ? latest.at.getTime() + checkpointMs : 0;
      if (mode === 'due' && now.getTime() < dueAt) return { checkpoint: null, dueAt };
      const context = await signer.prepare(tx, null);
      const key = await context.key;
      const timestamp = now.toISOString();
      const payload = { format: CHECKPOINT_FORMAT, organization: { id: orgId, slug: context.controller.slug }, tree_size: head.tree_size, root_hash: head.root_hash, timestamp } as const;
      const jws = await signCheckpoint(payload, key);
      if (!(await repo.insertCheckpoint({ tree_size: head.tree_size, root_hash: head.root_hash, at: now, kid: key.kid, jws }))) return { checkpoint: null, dueAt: null };
      const published: PublishedCheckpoint = { tree_size: head.tree_size, root_hash: head.root_hash, timestamp, kid: key.kid, jws, tsa_token: null };
      if (deps.publish) await deps.publish(tx, published);
      return { checkpoint: published, dueAt: null };
    });
  }

  async function afterCheckpoint(orgId: string, c: PublishedCheckpoint): Promise<PublishedCheckpoint> {
    if (!deps.timestamp) return c;
    try {
      const token = await deps.timestamp(c.jws);
      await withTenant(db, orgId, (tx) => transparencyRepo(tx).setTimestampToken(c.tree_size, token));
      return { ...c, tsa_token: token.toString('base64') };
    } catch (err) {
      // The checkpoint stands without its token; the next one asks the TSA again.
      (log.warn ?? log.error).call(log, { err, orgId, tree_size: c.tree_size }, 'checkpoint timestamp (TSA_URL) failed');
      return c;
    }
  }

  /** Seals everything the organization has now, batch by batch, then signs a checkpoint if asked and due; busy when another process holds it. */
  async function seal(orgId: string, checkpoint: 'due' | 'now' | 'never'): Promise<SealOutcome> {
    let total = 0;
    for (;;) {
      const r = await sealBatch(orgId);
      total += r.sealed;
      if (r.sealed === batch) continue;
      const out = { ...r, sealed: total };
      if (r.busy || checkpoint === 'never') return out;
      // Not due yet by what this process last read (the latest checkpoint's time plus checkpointMs; a
      // checkpoint signed elsewhere since only makes it later): no transaction to read it again. Under
      // load every written organization is sealed each tick, and this was one more transaction each.
      const due = checkpointDue.get(orgId);
      if (checkpoint === 'due' && due !== undefined && clock.now().getTime() < due) return { ...out, checkpointDueAt: due };
      try {
        const c = await checkpointIfDue(orgId, checkpoint);
        return { ...out, checkpoint: c.checkpoint ? await afterCheckpoint(orgId, c.checkpoint) : null, checkpointDueAt: c.dueAt };
      } catch (err) {
        // The entries are sealed; the checkpoint is tried again on the next tick that finds it due.
        log.error({ err, orgId }, 'audit checkpoint not signed');
        return { ...out, checkpointDueAt: clock.now().getTime() + checkpointMs };
      }
    }
  }

  async function sweepTargets(now: number): Promise<string[]> {
    if (now < nextSweep) return [];
    nextSweep = now + sweepMs;
    const orgs = await db.system.query<{ id: string }>('select id from organizations order by id');
    const out: string[] = [];
    for (const { id } of orgs) {
      const [w] = await tenantReads(db, id).query<{ work: boolean }>(
        `select exists (select 1 from audit_log where org_id = $1::uuid and seq is null)
             or coalesce((select seq from audit_chain_heads where org_id = $1::uuid), 0)
                > coalesce((select max(tree_size) from audit_checkpoints where org_id = $1::uuid), 0) as work`,
        [id],
      );
      if (w?.work) out.push(id);
    }
    return out;
  }

  /** One tick: the organizations written to, those whose checkpoint is due, and (every sweepMs, unless `sweep` is false) every organization with work. */
  async function runOnce(options: { sweep?: boolean } = {}): Promise<{ organizations: number; sealed: number; checkpoints: number }> {
    const now = Date.now();
    const targets = new Set(dirty.keys());
    for (const [org, at] of dirty) if (at <= now - SETTLE_MS) dirty.delete(org);
    for (const [org, at] of checkpointDue) if (at <= clock.now().getTime()) targets.add(org);
    if (options.sweep !== false) for (const org of await sweepTargets(now)) targets.add(org);
    let sealed = 0;
    let checkpoints = 0;
    for (const org of targets) {
      try {
        const r = await seal(org, 'due');
        sealed += r.sealed;
        if (r.checkpoint) checkpoints += 1;
        if (r.busy) again(org);
        if (r.checkpointDueAt !== null) checkpointDue.set(org, r.checkpointDueAt);
        else if (!r.busy) checkpointDue.delete(org);
      } catch (err) {
        again(org);
        log.error({ err, orgId: org }, 'audit sealing failed');
      }
    }
    return { organizations: targets.size, sealed, checkpoints };
  }

  /**
   * For the export and `audit verify`: every entry committed so far sealed and a checkpoint of the tree
   * signed now if it grew (waiting, up to 30 s, while another process seals the organization).
   */
  async function sealNow(orgId: string): Promise<SealOutcome> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await seal(orgId, 'now');
      if (!r.busy) {
        checkpointDue.delete(orgId);
        return r;
      }
      if (Date.now() > deadline) throw new Error('another process has been sealing this organization for 30 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Before a read of the log (GET /api/v1/audit-log): what is committed sealed, checkpoint only if due; a busy organization is left to its sealer. */
  async function catchUp(orgId: string): Promise<void> {
    const r = await seal(orgId, 'due');
    if (r.busy) again(orgId);
    else if (r.checkpointDueAt !== null) checkpointDue.set(orgId, r.checkpointDueAt);
  }

  const job = createIntervalJob({ name: 'audit sequencer', run: () => runOnce(), intervalMs: deps.intervalMs ?? 1000, log, runAtStart: true });
  return {
    runOnce,
    sealNow,
    catchUp,
    start: job.start,
    /** Stops the ticks, then seals what this process wrote and has not sealed yet (a graceful shutdown leaves nothing waiting). */
    async stop() {
      unsubscribe();
      await job.stop();
      if (dirty.size > 0) await runOnce({ sweep: false }).catch((err: unknown) => log.error({ err }, 'audit sealing at shutdown failed'));
    },
  };
}

export type Sequencer = ReturnType<typeof createSequencer>;
