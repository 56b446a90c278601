// The audit log's hash chain (contract §10): migration 0013's trigger gives every entry its `seq`, the
// previous entry's hash and its own, SHA-256(prev_hash || canonical content). verifyAuditChain walks an
// organization's chain in order and names the first entry that does not match; verifyChainEntries does
// the same offline, from the entries as exported (with their canonical text), without the database.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Database } from '../../platform/db/types.js';
import { withTenant } from '../../platform/db/tenant-tx.js';

export const GENESIS_HASH = '0'.repeat(64);

export interface ChainBreak {
  /** The first entry that does not match (null when entries are missing at the end of the chain). */
  id: string | null;
  seq: number;
  reason: string;
}

export interface ChainReport {
  ok: boolean;
  entries: number;
  head: { seq: number; hash: string } | null;
  broken: ChainBreak | null;
}

const BATCH = 5000;

interface StoredLink {
  seq: string | number;
  id: string;
  prev_hash: string;
  hash: string;
  recomputed: string;
}

/** Walks the organization's chain in the database (the hash recomputed by the same SQL as the trigger's). */
export async function verifyAuditChain(db: Database, orgId: string): Promise<ChainReport> {
  return withTenant(db, orgId, async (tx) => {
    const [head] = await tx.query<{ seq: string | number; hash: string }>('select seq, hash from audit_chain_heads where org_id = $1::uuid', [orgId]);
    let expectedSeq = 1;
    let prev = GENESIS_HASH;
    let count = 0;
    for (;;) {
      const rows = await tx.query<StoredLink>(
        `select a.seq, a.id, a.prev_hash, a.hash, assent_audit_hash(a.prev_hash, a) as recomputed
           from audit_log a where a.org_id = $1::uuid and a.seq >= $2::bigint order by a.seq limit ${BATCH}`,
        [orgId, expectedSeq],
      );
      for (const r of rows) {
        const broken = checkLink({ seq: Number(r.seq), id: r.id, prev_hash: r.prev_hash, hash: r.hash }, expectedSeq, prev, r.recomputed);
        if (broken) return { ok: false, entries: count, head: headOf(head), broken };
        count += 1;
        expectedSeq += 1;
        prev = r.hash;
      }
      if (rows.length < BATCH) break;
    }
    const tail = tailProblem(head ? { seq: Number(head.seq), hash: head.hash } : null, expectedSeq - 1, prev);
    return { ok: tail === null, entries: count, head: headOf(head), broken: tail };
  });
}

function headOf(head: { seq: string | number; hash: string } | undefined) {
  return head ? { seq: Number(head.seq), hash: head.hash } : null;
}

function checkLink(e: { seq: number; id: string; prev_hash: string; hash: string }, expectedSeq: number, prev: string, recomputed: string): ChainBreak | null {
  if (e.seq !== expectedSeq) return { id: e.id, seq: e.seq, reason: `expected entry ${expectedSeq} here: entries ${expectedSeq}..${e.seq - 1} are missing` };
  if (e.prev_hash !== prev) return { id: e.id, seq: e.seq, reason: 'prev_hash is not the hash of the entry before it' };
  if (e.hash !== recomputed) return { id: e.id, seq: e.seq, reason: 'hash does not match the entry content' };
  return null;
}

function tailProblem(head: { seq: number; hash: string } | null, lastSeq: number, lastHash: string): ChainBreak | null {
  if (!head) return lastSeq === 0 ? null : { id: null, seq: lastSeq, reason: 'the chain head is missing' };
  if (head.seq !== lastSeq) return { id: null, seq: lastSeq + 1, reason: `the chain head is at entry ${head.seq} but the log ends at ${lastSeq}: entries were removed` };
  if (head.hash !== lastHash) return { id: null, seq: lastSeq, reason: 'the chain head hash does not match the last entry' };
  return null;
}

/** An exported entry: its fields, and the canonical text its hash covers (the JSON array the trigger built). */
export interface ExportedAuditEntry {
  seq: number;
  id: string;
  org_id: string;
  at: string;
  actor: { type: string; id: string };
  action: string;
  target: { type: string; id: string | null };
  request_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
  canonical: string;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Offline, one entry at a time (an export is read as a stream, never held whole): add() checks that
 * the entry links to the one before (from the genesis hash), that its hash is SHA-256(prev_hash ||
 * canonical), and that the canonical text says what the entry's fields say; it returns the first
 * break, and after a break the verifier stays broken. finish() checks the end against the exported
 * head, when there is one (`undefined`: no head to compare).
 */
export function createChainVerifier() {
  let expectedSeq = 1;
  let prev = GENESIS_HASH;
  let count = 0;
  let broken: ChainBreak | null = null;
  return {
    add(e: ExportedAuditEntry): ChainBreak | null {
      if (broken) return broken;
      broken = checkLink(e, expectedSeq, prev, sha256Hex(prev + e.canonical));
      if (!broken) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(e.canonical);
        } catch {
          parsed = null;
        }
        const fields = [1, e.seq, e.org_id, e.id, e.at, e.actor.type, e.actor.id, e.action, e.target.type, e.target.id, e.request_id, e.details];
        if (!isDeepStrictEqual(parsed, fields)) broken = { id: e.id, seq: e.seq, reason: 'the entry fields differ from the content its hash covers' };
      }
      if (broken) return broken;
      count += 1;
      expectedSeq += 1;
      prev = e.hash;
      return null;
    },
    finish(head?: { seq: number; hash: string } | null): ChainReport {
      if (!broken && head !== undefined) broken = tailProblem(head, expectedSeq - 1, prev);
      return { ok: broken === null, entries: count, head: head ?? null, broken };
    },
  };
}

/** createChainVerifier over entries already in hand (in seq order). */
export function verifyChainEntries(entries: Iterable<ExportedAuditEntry>, head?: { seq: number; hash: string } | null): ChainReport {
  const verifier = createChainVerifier();
  for (const e of entries) if (verifier.add(e)) break;
  return verifier.finish(head);
}
