// The audit log as a Merkle tree (RFC 9162 §2.1, the hashing of Certificate Transparency 2.0): a leaf
// is SHA-256(0x00 || the entry's canonical text), an inner node SHA-256(0x01 || left || right), and
// the tree of n leaves splits at the largest power of two below n. Entry seq s is leaf s - 1.
//
// Pure functions, no database: the proofs are built from "complete" nodes (level L, index i covers
// leaves [i * 2^L, (i + 1) * 2^L)), which the sequencer stores as it appends (level 0: the entries'
// leaf hashes; above: audit_tree_nodes), so a proof reads O(log n) rows. The verifiers are RFC 9162's
// algorithms (§2.1.3.2 inclusion, §2.1.4.2 consistency), for the CLI, the witness and the export.
import { createHash } from 'node:crypto';

export type Hash = Buffer;

export function leafHash(data: string | Buffer): Hash {
  return createHash('sha256').update(Buffer.from([0])).update(data).digest();
}

export function nodeHash(left: Hash, right: Hash): Hash {
  return createHash('sha256').update(Buffer.from([1])).update(left).update(right).digest();
}

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = createHash('sha256').digest();

export interface NodeId {
  level: number;
  index: number;
}

export const nodeKey = (n: NodeId) => `${n.level}:${n.index}`;

/** The largest power of two strictly below n (n > 1). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The complete nodes whose fold is MTH(D[a:b]), for a range the RFC's tree uses (a aligned to the
 * range's size rounded up to a power of two): largest first, left to right.
 */
export function completeNodes(a: number, b: number): NodeId[] {
  const out: NodeId[] = [];
  let start = a;
  while (start < b) {
    let size = 1;
    while (size * 2 <= b - start && start % (size * 2) === 0) size *= 2;
    let level = 0;
    for (let s = size; s > 1; s /= 2) level += 1;
    out.push({ level, index: start / size });
    start += size;
  }
  return out;
}

/** MTH(D[a:b]) from its complete nodes (folded from the right, as the RFC's recursion does). */
export function rangeHash(a: number, b: number, get: (n: NodeId) => Hash): Hash {
  if (a === b) return EMPTY_ROOT;
  const nodes = completeNodes(a, b).map(get);
  let h = nodes[nodes.length - 1]!;
  for (let i = nodes.length - 2; i >= 0; i--) h = nodeHash(nodes[i]!, h);
  return h;
}

/** The ranges whose hashes make up PATH(m, D[0:n]), leaf to root (RFC 9162 §2.1.3.1). */
export function inclusionRanges(m: number, n: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const walk = (m: number, lo: number, hi: number) => {
    if (hi - lo <= 1) return;
    const k = splitPoint(hi - lo);
    if (m < k) {
      walk(m, lo, lo + k);
      out.push([lo + k, hi]);
    } else {
      walk(m - k, lo + k, hi);
      out.push([lo, lo + k]);
    }
  };
  walk(m, 0, n);
  return out;
}

/** The ranges whose hashes make up PROOF(m, D[0:n]) (RFC 9162 §2.1.4.1), 0 < m <= n. */
export function consistencyRanges(m: number, n: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const sub = (m: number, lo: number, hi: number, b: boolean) => {
    const size = hi - lo;
    if (m === size) {
      if (!b) out.push([lo, hi]);
      return;
    }
    const k = splitPoint(size);
    if (m <= k) {
      sub(m, lo, lo + k, b);
      out.push([lo + k, hi]);
    } else {
      sub(m - k, lo + k, hi, false);
      out.push([lo, lo + k]);
    }
  };
  if (m > 0 && m < n) sub(m, 0, n, true);
  return out;
}

/** Every complete node a set of ranges needs, once each. */
export function nodesFor(ranges: Array<[number, number]>): NodeId[] {
  const seen = new Map<string, NodeId>();
  for (const [a, b] of ranges) for (const n of completeNodes(a, b)) seen.set(nodeKey(n), n);
  return [...seen.values()];
}

export function proofFrom(ranges: Array<[number, number]>, nodes: Map<string, Hash>): Hash[] {
  return ranges.map(([a, b]) =>
    rangeHash(a, b, (n) => {
      const h = nodes.get(nodeKey(n));
      if (!h) throw new Error(`Merkle node ${nodeKey(n)} is missing`);
      return h;
    }),
  );
}

const lsb = (x: number) => x % 2 === 1;
const half = (x: number) => Math.floor(x / 2);

/** RFC 9162 §2.1.3.2: does `proof` show leaf `index` (with hash `leaf`) in the tree of `size` with `root`? */
export function verifyInclusion(index: number, size: number, leaf: Hash, proof: Hash[], root: Hash): boolean {
  if (index >= size || index < 0) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 §2.1.4.2: is the tree of `second` leaves an append-only extension of the tree of `first`? */
export function verifyConsistency(first: number, second: number, firstRoot: Hash, secondRoot: Hash, proof: Hash[]): boolean {
  if (first > second || first < 0) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first === 0) return proof.length === 0 && firstRoot.equals(EMPTY_ROOT);
  const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

/**
 * A tree built leaf by leaf with O(log n) memory (the right edge's complete subtrees): what the export's
 * verifier uses to recompute the root at every size it needs while it streams the entries.
 */
export class MerkleFrontier {
  private edge: Hash[] = [];
  size = 0;

  append(leaf: Hash): void {
    let h = leaf;
    let index = this.size;
    while (lsb(index)) {
      h = nodeHash(this.edge.pop()!, h);
      index = half(index);
    }
    this.edge.push(h);
    this.size += 1;
  }

  root(): Hash {
    if (this.edge.length === 0) return EMPTY_ROOT;
    let h = this.edge[this.edge.length - 1]!;
    for (let i = this.edge.length - 2; i >= 0; i--) h = nodeHash(this.edge[i]!, h);
    return h;
  }
}

export const toHex = (h: Hash) => h.toString('hex');
export const fromHex = (s: string): Hash => Buffer.from(s, 'hex');
export const isHashHex = (s: unknown): s is string => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
