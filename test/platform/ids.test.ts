// UUIDv7 (src/platform/ids.ts): the version and variant bits, ids sorting in the order they were made,
// and no id given twice across refills of the random pool (256 ids per refill). No database: runs once
// (in the pglite project).
import { expect, test } from 'vitest';
import { uuidv7, UUID_PATTERN } from '../../src/platform/ids.js';
import { storeKind } from '../support/store.js';

const once = storeKind() === 'pglite';

test.runIf(once)('ids are UUIDv7, sort in creation order and are never repeated across pool refills', () => {
  const ids = Array.from({ length: 5000 }, () => uuidv7());
  for (const id of ids) {
    expect(id).toMatch(UUID_PATTERN);
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  }
  expect([...ids].sort()).toEqual(ids);
  expect(new Set(ids).size).toBe(ids.length);
  // The random part (after the time and counter) differs from one id to the next.
  const tails = new Set(ids.map((id) => id.slice(19)));
  expect(tails.size).toBe(ids.length);
});
