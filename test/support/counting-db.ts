// Wraps a real store and counts the statements sent through it: how tests check "no round trip when warm".
import type { Database, Queryable } from '../../src/platform/db/types.js';

export interface Counts {
  system: number;
  /** Tenant transactions and one-statement tenant reads. */
  tenant: number;
  /**
   * Batches of statements inside tenant transactions: a statement sent while none of its transaction's
   * earlier ones is pending starts one. On PostgreSQL the statements of a batch are pipelined, so each
   * batch is a round trip (the first carries BEGIN; COMMIT is one more).
   */
  tenantBatches: number;
}

/** fn's connection, counting the batches its statements leave in. */
function batching(tx: Queryable, counts: Counts): Queryable {
  let pending = 0;
  const settled = () => void pending--;
  return {
    query<T>(text: string, params?: readonly unknown[]) {
      if (pending === 0) counts.tenantBatches++;
      pending++;
      const result = tx.query<T>(text, params);
      // Registered before the caller's own handlers, so a statement the caller sends once this one
      // settles finds it no longer pending.
      result.then(settled, settled);
      return result;
    },
  };
}

export function countingDb(db: Database): { db: Database; counts: Counts; reset(): void } {
  const counts: Counts = { system: 0, tenant: 0, tenantBatches: 0 };
  const wrapped: Database = {
    kind: db.kind,
    system: {
      query: (text, params) => {
        counts.system++;
        return db.system.query(text, params);
      },
      transaction: (fn) => {
        counts.system++;
        return db.system.transaction(fn);
      },
      exec: (script) => db.system.exec(script),
    },
    tenantTransaction: (orgId, fn) => {
      counts.tenant++;
      return db.tenantTransaction(orgId, (tx) => fn(batching(tx, counts)));
    },
    tenantQuery: (orgId, text, params) => {
      counts.tenant++;
      return db.tenantQuery(orgId, text, params);
    },
    close: () => db.close(),
  };
  return { db: wrapped, counts, reset: () => void Object.assign(counts, { system: 0, tenant: 0, tenantBatches: 0 }) };
}
