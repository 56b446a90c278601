// Wraps a real store and counts the statements sent through it: how tests check "no round trip when warm".
import type { Database } from '../../src/platform/db/types.js';

export function countingDb(db: Database): { db: Database; counts: { system: number; tenant: number }; reset(): void } {
  const counts = { system: 0, tenant: 0 };
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
      return db.tenantTransaction(orgId, fn);
    },
    tenantQuery: (orgId, text, params) => {
      counts.tenant++;
      return db.tenantQuery(orgId, text, params);
    },
    close: () => db.close(),
  };
  return { db: wrapped, counts, reset: () => void Object.assign(counts, { system: 0, tenant: 0 }) };
}
