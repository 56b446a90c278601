// Transparency SQL: sealing (assent_audit_seal, migration 0040), the tree's nodes for proofs, checkpoints.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import type { Hash, NodeId } from '../audit/merkle.js';
import { nodeKey } from '../audit/merkle.js';

export interface SealResult {
  /** Entries sealed by this call; -1 when another sealer holds the organization. */
  sealed: number;
  tree_size: number;
  root_hash: string | null;
}

export interface CheckpointRow {
  tree_size: string | number;
  root_hash: string;
  at: Date;
  kid: string;
  jws: string;
  tsa_token: Buffer | Uint8Array | null;
}

const CHECKPOINT_COLUMNS = 'tree_size, root_hash, at, kid, jws, tsa_token';

export function transparencyRepo(tx: TenantTx) {
  return {
    async seal(limit: number): Promise<SealResult> {
      const [r] = await tx.query<{ sealed: number; tree_size: string | number; root_hash: string | null }>(
        'select sealed, tree_size, root_hash from assent_audit_seal($1::uuid, $2::integer)',
        [tx.orgId, limit],
      );
      return { sealed: Number(r!.sealed), tree_size: Number(r!.tree_size), root_hash: r!.root_hash };
    },

    /** The sealed tree's size and root (no lock), and how many entries wait to be sealed. */
    async head(): Promise<{ tree_size: number; root_hash: string; chain_hash: string | null; unsealed: number }> {
      const [r] = await tx.query<{ tree_size: string | number | null; root_hash: string; chain_hash: string | null; unsealed: string | number }>(
        `select h.seq as tree_size, assent_merkle_root(coalesce(h.frontier, '{}')) as root_hash, h.hash as chain_hash,
                (select count(*) from audit_log a where a.org_id = $1::uuid and a.seq is null) as unsealed
           from (select 1) one left join audit_chain_heads h on h.org_id = $1::uuid`,
        [tx.orgId],
      );
      return { tree_size: Number(r?.tree_size ?? 0), root_hash: r!.root_hash, chain_hash: r?.chain_hash ?? null, unsealed: Number(r?.unsealed ?? 0) };
    },

    /** Complete nodes by (level, index): level 0 from the entries' leaf hashes (seq = index + 1), above from audit_tree_nodes. */
    async nodes(ids: NodeId[]): Promise<Map<string, Hash>> {
      const out = new Map<string, Hash>();
      if (ids.length === 0) return out;
      const rows = await tx.query<{ level: number; idx: string | number; hash: Buffer | Uint8Array }>(
        `select 0 as level, a.seq - 1 as idx, a.leaf_hash as hash from audit_log a
          where a.org_id = $1::uuid and a.seq = any($2::bigint[])
         union all
         select n.level, n.idx, n.hash from audit_tree_nodes n
          join unnest($3::smallint[], $4::bigint[]) as want(level, idx) on want.level = n.level and want.idx = n.idx
          where n.org_id = $1::uuid`,
        [tx.orgId, ids.filter((n) => n.level === 0).map((n) => n.index + 1), ids.filter((n) => n.level > 0).map((n) => n.level), ids.filter((n) => n.level > 0).map((n) => n.index)],
      );
      for (const r of rows) out.set(nodeKey({ level: Number(r.level), index: Number(r.idx) }), Buffer.from(r.hash));
      return out;
    },

    async entry(id: string): Promise<{ id: string; seq: string | number | null; leaf_hash: Buffer | Uint8Array | null } | undefined> {
      const [r] = await tx.query<{ id: string; seq: string | number | null; leaf_hash: Buffer | Uint8Array | null }>(
        'select id, seq, leaf_hash from audit_log where org_id = $1::uuid and id = $2::uuid',
        [tx.orgId, id],
      );
      return r;
    },

    async latestCheckpoint(): Promise<CheckpointRow | undefined> {
      const [r] = await tx.query<CheckpointRow>(`select ${CHECKPOINT_COLUMNS} from audit_checkpoints where org_id = $1::uuid order by tree_size desc limit 1`, [tx.orgId]);
      return r;
    },

    async checkpointAt(size: number): Promise<CheckpointRow | undefined> {
      const [r] = await tx.query<CheckpointRow>(`select ${CHECKPOINT_COLUMNS} from audit_checkpoints where org_id = $1::uuid and tree_size = $2::bigint`, [tx.orgId, size]);
      return r;
    },

    async checkpoints(q: { beforeSize?: number; limit: number }): Promise<CheckpointRow[]> {
      return tx.query<CheckpointRow>(
        `select ${CHECKPOINT_COLUMNS} from audit_checkpoints where org_id = $1::uuid and ($2::bigint is null or tree_size < $2::bigint)
          order by tree_size desc limit $3::integer`,
        [tx.orgId, q.beforeSize ?? null, q.limit],
      );
    },

    /** Every checkpoint up to a size, oldest first (the export). */
    async checkpointsUpTo(size: number): Promise<CheckpointRow[]> {
      return tx.query<CheckpointRow>(`select ${CHECKPOINT_COLUMNS} from audit_checkpoints where org_id = $1::uuid and tree_size <= $2::bigint order by tree_size`, [tx.orgId, size]);
    },

    async insertCheckpoint(c: { tree_size: number; root_hash: string; at: Date; kid: string; jws: string }): Promise<boolean> {
      const rows = await tx.query(
        `insert into audit_checkpoints (org_id, tree_size, root_hash, at, kid, jws) values ($1::uuid, $2::bigint, $3::text, $4::timestamptz, $5::text, $6::text)
         on conflict (org_id, tree_size) do nothing returning tree_size`,
        [tx.orgId, c.tree_size, c.root_hash, c.at, c.kid, c.jws],
      );
      return rows.length === 1;
    },

    async setTimestampToken(size: number, token: Buffer): Promise<void> {
      await tx.query('update audit_checkpoints set tsa_token = $3::bytea where org_id = $1::uuid and tree_size = $2::bigint and tsa_token is null', [tx.orgId, size, token]);
    },
  };
}
