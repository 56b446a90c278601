// Checkpoints and proofs, read side: the latest checkpoint and their history, consistency proofs
// between two tree sizes (public: hashes only), inclusion proofs of one entry (owners and admins).
import type { Database } from '../../platform/db/types.js';
import { tenantReads, withTenant } from '../../platform/db/tenant-tx.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid } from '../../platform/ids.js';
import { completeNodes, consistencyRanges, inclusionRanges, nodesFor, proofFrom, rangeHash, nodeKey, toHex, type Hash, type NodeId } from '../audit/merkle.js';
import { transparencyRepo } from './repo.js';
import { publishedCheckpoint, type Sequencer } from './sequencer.js';

export function createTransparencyService({ db, sequencer }: { db: Database; sequencer: Sequencer }) {
  function get(nodes: Map<string, Hash>) {
    return (n: NodeId) => {
      const h = nodes.get(nodeKey(n));
      if (!h) throw new Error(`audit tree node ${nodeKey(n)} is missing`);
      return h;
    };
  }

  return {
    sequencer,

    async latest(orgId: string) {
      const row = await transparencyRepo(tenantReads(db, orgId)).latestCheckpoint();
      if (!row) throw new AppError('no_checkpoint', "This organization's audit log has no signed checkpoint yet");
      return publishedCheckpoint(row);
    },

    async list(orgId: string, q: { before_size?: number; limit?: number }) {
      const limit = q.limit ?? 50;
      const rows = await transparencyRepo(tenantReads(db, orgId)).checkpoints({ beforeSize: q.before_size, limit });
      return { data: rows.map(publishedCheckpoint), limit };
    },

    /** RFC 9162 PROOF(first, D[second]) from the sealed tree. */
    async consistency(orgId: string, first: number, second: number) {
      return withTenant(db, orgId, async (tx) => {
        const repo = transparencyRepo(tx);
        const { tree_size } = await repo.head();
        if (first > second) throw new AppError('bad_request', `first (${first}) must not be larger than second (${second})`);
        if (second > tree_size) throw new AppError('bad_request', `second (${second}) is beyond the audit tree, which has ${tree_size} entries`);
        const ranges = consistencyRanges(first, second);
        const proof = proofFrom(ranges, await repo.nodes(nodesFor(ranges)));
        return { first, second, proof: proof.map(toHex) };
      });
    },

    /** RFC 9162 PATH(seq - 1, D[tree_size]) for one entry; tree_size defaults to the latest checkpoint's (or the tree's). */
    async inclusion(ctx: TenantContext, entryId: string, treeSize?: number) {
      if (!isUuid(entryId)) throw new AppError('not_found', 'No audit log entry with this id');
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = transparencyRepo(tx);
        const entry = await repo.entry(entryId);
        if (!entry) throw new AppError('not_found', 'No audit log entry with this id');
        if (entry.seq === null || entry.leaf_hash === null) throw new AppError('entry_not_sealed', 'This audit log entry is not sealed into the tree yet (within seconds of its commit); try again');
        const seq = Number(entry.seq);
        const head = await repo.head();
        const latest = await repo.latestCheckpoint();
        const size = treeSize ?? (latest && Number(latest.tree_size) >= seq ? Number(latest.tree_size) : head.tree_size);
        if (size < seq) throw new AppError('bad_request', `tree_size ${size} does not contain entry ${seq}: ask for ${seq} or more`);
        if (size > head.tree_size) throw new AppError('bad_request', `tree_size ${size} is beyond the audit tree, which has ${head.tree_size} entries`);
        const ranges = inclusionRanges(seq - 1, size);
        const rootNodes = completeNodes(0, size);
        const nodes = await repo.nodes([...nodesFor(ranges), ...rootNodes]);
        const checkpoint = await repo.checkpointAt(size);
        return {
          entry_id: entryId,
          seq,
          leaf_index: seq - 1,
          leaf_hash: toHex(Buffer.from(entry.leaf_hash)),
          tree_size: size,
          root_hash: toHex(rangeHash(0, size, get(nodes))),
          proof: proofFrom(ranges, nodes).map(toHex),
          checkpoint: checkpoint ? publishedCheckpoint(checkpoint) : null,
        };
      });
    },
  };
}

export type TransparencyService = ReturnType<typeof createTransparencyService>;
