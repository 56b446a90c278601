// How far V8 lets the heap grow between full garbage collections, for the server on the embedded store.
// After a full collection V8 sets the next limit at up to four times what survived. On the embedded
// store every write waits its turn for the one connection, so under load each request's objects
// outlive two young-generation collections, are promoted, and pile up in the old generation until that
// limit: measured, the server's RSS rose from 212 to 297 MB over four write endpoints, though a forced
// collection left 28 MB of live heap. With the growth held at 50% it stayed at 250 MB, at the same
// throughput (docs/operations.md, "Embedded store"). PostgreSQL-backed servers keep V8's own heuristic:
// their RSS is far below the target, and they answer several times more requests to collect after.
import v8 from 'node:v8';
import type { Config } from '../config.js';

/** The old generation may grow to 1.5× what survived the last full collection (embedded store only). */
export const EMBEDDED_HEAP_GROWING_PERCENT = 50;

/** The V8 flag serve() sets for this store, or null: V8's defaults. */
export function heapFlagFor(config: Pick<Config, 'databaseUrl'>): string | null {
  return config.databaseUrl ? null : `--heap-growing-percent=${EMBEDDED_HEAP_GROWING_PERCENT}`;
}

/**
 * Applies heapFlagFor(config) to this process. V8 reads the growing factor at every full collection,
 * so setting it once the process runs takes effect from the next one (Node cannot take this flag in
 * NODE_OPTIONS, so the server sets it itself, however it was started).
 */
export function tuneHeap(config: Pick<Config, 'databaseUrl'>): void {
  const flag = heapFlagFor(config);
  if (flag) v8.setFlagsFromString(flag);
}
