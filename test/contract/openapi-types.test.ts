// The dashboard's API types (web/src/api/openapi.d.ts) are generated from the route schemas; this fails
// when a schema changed and `npm run web:types` was not run, so the client never drifts from the API.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { openApiDocument, typesFromDocument } from '../../scripts/openapi-doc.js';
import { storeKind } from '../support/store.js';

// The document does not depend on the store: checked once, in the embedded-store run.
describe.runIf(storeKind() === 'pglite')('web/src/api/openapi.d.ts', () => {
  test('is what `npm run web:types` generates from the current schemas', async () => {
    const committed = readFileSync(new URL('../../web/src/api/openapi.d.ts', import.meta.url), 'utf8');
    const current = await typesFromDocument(await openApiDocument());
    expect(committed === current, 'web/src/api/openapi.d.ts is out of date: run `npm run web:types`').toBe(true);
  });
});
