// The Merkle tree functions against a direct transcription of RFC 9162's recursive definitions
// (MTH, PATH, PROOF), for every size up to 70 and random ones beyond; and the RFC's verifiers refuse
// a proof for another leaf, another size or another root.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  consistencyRanges,
  EMPTY_ROOT,
  inclusionRanges,
  leafHash,
  MerkleFrontier,
  nodeHash,
  nodeKey,
  nodesFor,
  proofFrom,
  verifyConsistency,
  verifyInclusion,
  type Hash,
  type NodeId,
} from '../../src/features/audit/merkle.js';

const k = (n: number) => {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
};
function mth(d: Hash[]): Hash {
  if (d.length === 0) return EMPTY_ROOT;
  if (d.length === 1) return d[0]!;
  const s = k(d.length);
  return nodeHash(mth(d.slice(0, s)), mth(d.slice(s)));
}
function path(m: number, d: Hash[]): Hash[] {
  if (d.length <= 1) return [];
  const s = k(d.length);
  return m < s ? [...path(m, d.slice(0, s)), mth(d.slice(s))] : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}
function subproof(m: number, d: Hash[], b: boolean): Hash[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  return m <= s ? [...subproof(m, d.slice(0, s), b), mth(d.slice(s))] : [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}

const leaves = (n: number) => Array.from({ length: n }, (_, i) => leafHash(`entry ${i}`));
/** Every complete node of the tree, as the sequencer stores them. */
function store(d: Hash[]): Map<string, Hash> {
  const m = new Map<string, Hash>();
  let level = d;
  for (let l = 0; level.length > 0; l++) {
    level.forEach((h, i) => m.set(nodeKey({ level: l, index: i }), h));
    const up: Hash[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(nodeHash(level[i]!, level[i + 1]!));
    level = up;
  }
  return m;
}
const fetch = (all: Map<string, Hash>, ids: NodeId[]) => new Map(ids.map((n) => [nodeKey(n), all.get(nodeKey(n))!]));

describe('Merkle tree (RFC 9162)', () => {
  it('roots, inclusion and consistency proofs match the RFC for every size up to 70', () => {
    const d = leaves(70);
    const all = store(d);
    const frontier = new MerkleFrontier();
    expect(frontier.root().equals(EMPTY_ROOT)).toBe(true);
    for (let n = 1; n <= 70; n++) {
      frontier.append(d[n - 1]!);
      const tree = d.slice(0, n);
      const root = mth(tree);
      expect(frontier.root().equals(root)).toBe(true);
      for (let m = 0; m < n; m++) {
        const ranges = inclusionRanges(m, n);
        const proof = proofFrom(ranges, fetch(all, nodesFor(ranges)));
        expect(proof.map((h) => h.toString('hex'))).toEqual(path(m, tree).map((h) => h.toString('hex')));
        expect(verifyInclusion(m, n, d[m]!, proof, root)).toBe(true);
        expect(verifyInclusion(m, n, leafHash('forged'), proof, root)).toBe(false);
        if (n > 1) expect(verifyInclusion((m + 1) % n, n, d[m]!, proof, root)).toBe(false);
      }
      for (let m = 1; m <= n; m++) {
        const ranges = consistencyRanges(m, n);
        const proof = proofFrom(ranges, fetch(all, nodesFor(ranges)));
        expect(proof.map((h) => h.toString('hex'))).toEqual(m === n ? [] : subproof(m, tree, true).map((h) => h.toString('hex')));
        const old = mth(d.slice(0, m));
        expect(verifyConsistency(m, n, old, root, proof)).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, leafHash('other'), root, proof)).toBe(false);
          expect(verifyConsistency(m, n, old, leafHash('other'), proof)).toBe(false);
        }
      }
    }
  });

  it('a changed leaf breaks every consistency proof that covers it (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 300 }), fc.nat(), fc.nat(), (n, a, b) => {
        const m = 1 + (a % (n - 1));
        const d = leaves(n);
        const all = store(d);
        const ranges = consistencyRanges(m, n);
        const proof = proofFrom(ranges, fetch(all, nodesFor(ranges)));
        const changed = [...d];
        changed[b % m] = leafHash('rewritten');
        // The old checkpoint's root was of the original entries; the rewritten log cannot prove it.
        const forgedAll = store(changed);
        const forgedProof = proofFrom(ranges, fetch(forgedAll, nodesFor(ranges)));
        return verifyConsistency(m, n, mth(d.slice(0, m)), mth(d), proof) && !verifyConsistency(m, n, mth(d.slice(0, m)), mth(changed), forgedProof);
      }),
      { numRuns: 200 },
    );
  });
});
