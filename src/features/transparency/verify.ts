// `assent audit verify`: the hash chain (verifyAuditChain, features/audit), then the Merkle tree and
// the signed checkpoints, from the database. Every sealed entry's leaf is recomputed from its
// canonical text; the tree is rebuilt leaf by leaf and its root compared with every stored checkpoint
// at its size (whose signature must verify with the organization's keys) and with the head; a
// checkpoint kept by someone else (--checkpoint FILE) must match the rebuilt tree at its size, and a
// log shorter than it was cut.
import type { JSONWebKeySet } from 'jose';
import type { Database } from '../../platform/db/types.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import { verifyAuditChain, type ChainReport } from '../audit/index.js';
import { leafHash, MerkleFrontier, toHex } from '../audit/merkle.js';
import { CheckpointError, verifyCheckpointJws, type CheckpointPayload } from './checkpoints.js';

const BATCH = 5000;

export interface AuditLogReport {
  ok: boolean;
  /** The first problem, in words; null when everything verified. */
  problem: string | null;
  chain: ChainReport;
  tree: { size: number; root_hash: string } | null;
  /** Stored checkpoints whose signature and root verified. */
  checkpoints: number;
  /** The checkpoint given from outside, when one was: its size and whether it matched. */
  kept: { tree_size: number; root_hash: string; timestamp: string; ok: boolean } | null;
  /** Entries written but not sealed yet: not covered by this check. */
  unsealed: number;
}

export interface VerifyAuditLogOptions {
  /** The organization's published keys (checkpoint signatures are checked with them). */
  jwks: JSONWebKeySet;
  /** A checkpoint kept from before (its compact JWS), with where it came from for the messages. */
  kept?: { jws: string; source: string };
}

export async function verifyAuditLog(db: Database, orgId: string, options: VerifyAuditLogOptions): Promise<AuditLogReport> {
  const chain = await verifyAuditChain(db, orgId);
  const report: AuditLogReport = { ok: false, problem: null, chain, tree: null, checkpoints: 0, kept: null, unsealed: 0 };
  if (chain.broken) {
    const b = chain.broken;
    report.problem = `the hash chain is broken at entry ${b.seq}${b.id ? ` (${b.id})` : ''}: ${b.reason}`;
    return report;
  }
  let kept: CheckpointPayload | null = null;
  if (options.kept) {
    try {
      kept = (await verifyCheckpointJws(options.kept.jws, options.jwks)).checkpoint;
    } catch (e) {
      if (!(e instanceof CheckpointError)) throw e;
      report.problem = `the checkpoint from ${options.kept.source}: ${e.message}`;
      return report;
    }
    if (kept.organization.id !== orgId) {
      report.problem = `the checkpoint from ${options.kept.source} is of organization ${kept.organization.slug} (${kept.organization.id}), not this one`;
      return report;
    }
    report.kept = { tree_size: kept.tree_size, root_hash: kept.root_hash, timestamp: kept.timestamp, ok: false };
  }

  return withTenant(db, orgId, async (tx) => {
    const checkpoints = await tx.query<{ tree_size: string | number; root_hash: string; jws: string }>(
      'select tree_size, root_hash, jws from audit_checkpoints where org_id = $1::uuid order by tree_size',
      [orgId],
    );
    const roots = new Map<number, { root: string; what: string }>();
    for (const c of checkpoints) {
      const size = Number(c.tree_size);
      let signed: CheckpointPayload;
      try {
        signed = (await verifyCheckpointJws(c.jws, options.jwks)).checkpoint;
      } catch (e) {
        if (!(e instanceof CheckpointError)) throw e;
        report.problem = `stored checkpoint ${size}: ${e.message}`;
        return report;
      }
      if (signed.tree_size !== size || signed.root_hash !== c.root_hash || signed.organization.id !== orgId) {
        report.problem = `stored checkpoint ${size}: its row says size ${size} and root ${c.root_hash}, its signature says size ${signed.tree_size} and root ${signed.root_hash}`;
        return report;
      }
      roots.set(size, { root: c.root_hash, what: `checkpoint ${size} (signed ${signed.timestamp})` });
    }
    const [head] = await tx.query<{ seq: string | number; root_hash: string; unsealed: string | number }>(
      `select coalesce(h.seq, 0) as seq, assent_merkle_root(coalesce(h.frontier, '{}')) as root_hash,
              (select count(*) from audit_log a where a.org_id = $1::uuid and a.seq is null) as unsealed
         from (select 1) one left join audit_chain_heads h on h.org_id = $1::uuid`,
      [orgId],
    );
    report.unsealed = Number(head!.unsealed);
    const frontier = new MerkleFrontier();
    const check = (size: number): string | null => {
      const root = toHex(frontier.root());
      const c = roots.get(size);
      if (c && c.root !== root) return `the first ${size} entries do not hash to the root of ${c.what}: entries were changed after it was signed`;
      if (kept && kept.tree_size === size && kept.root_hash !== root) {
        return `the first ${size} entries do not hash to the root of the checkpoint from ${options.kept!.source} (signed ${kept.timestamp}): entries were changed after it was signed`;
      }
      return null;
    };
    for (;;) {
      const rows = await tx.query<{ seq: string | number; id: string; leaf_hash: Uint8Array | null; canonical: string }>(
        `select a.seq, a.id, a.leaf_hash, assent_audit_canonical(a) as canonical from audit_log a
          where a.org_id = $1::uuid and a.seq > $2::bigint order by a.seq limit ${BATCH}`,
        [orgId, frontier.size],
      );
      for (const r of rows) {
        const leaf = leafHash(r.canonical);
        if (Number(r.seq) !== frontier.size + 1) {
          report.problem = `entry ${frontier.size + 1} is missing from the tree`;
          return report;
        }
        if (!r.leaf_hash || !leaf.equals(Buffer.from(r.leaf_hash))) {
          report.problem = `entry ${r.seq} (${r.id}): its leaf_hash is not the hash of its content`;
          return report;
        }
        frontier.append(leaf);
        const problem = check(frontier.size);
        if (problem) {
          report.problem = problem;
          return report;
        }
      }
      if (rows.length < BATCH) break;
    }
    const root = toHex(frontier.root());
    report.tree = { size: frontier.size, root_hash: root };
    const lastCheckpoint = checkpoints.length ? Number(checkpoints[checkpoints.length - 1]!.tree_size) : 0;
    if (lastCheckpoint > frontier.size) {
      report.problem = `checkpoint ${lastCheckpoint} covers more entries than the log holds (${frontier.size}): entries were removed`;
      return report;
    }
    if (kept && kept.tree_size > frontier.size) {
      report.problem = `the checkpoint from ${options.kept!.source} (signed ${kept.timestamp}) covers ${kept.tree_size} entries, the log holds ${frontier.size}: entries were removed`;
      return report;
    }
    if (Number(head!.seq) !== frontier.size || head!.root_hash !== root) {
      report.problem = `the tree's stored head (size ${head!.seq}, root ${head!.root_hash}) does not match the entries (size ${frontier.size}, root ${root})`;
      return report;
    }
    report.checkpoints = checkpoints.length;
    if (report.kept) report.kept.ok = true;
    report.ok = true;
    return report;
  });
}
