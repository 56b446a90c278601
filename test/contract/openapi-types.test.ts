// The published OpenAPI document (clients/typescript/openapi.json) and the API types of the dashboard
// and of the client package are generated from the route schemas; this fails when a schema changed and
// `npm run web:types` was not run, so no client drifts from the API.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { generatedFiles } from '../../scripts/openapi-doc.js';
import { storeKind } from '../support/store.js';

// The document does not depend on the store: checked once, in the embedded-store run.
describe.runIf(storeKind() === 'pglite')('generated API files', () => {
  test('are what `npm run web:types` generates from the current schemas', { timeout: 120_000 }, async () => {
    for (const [path, current] of Object.entries(await generatedFiles())) {
      const committed = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
      expect(committed === current, `${path} is out of date: run \`npm run web:types\``).toBe(true);
    }
  });
});
