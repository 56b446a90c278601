// `npm run web:types`: writes the OpenAPI document of the route schemas (clients/typescript/openapi.json)
// and what the client package (clients/typescript, which the dashboard imports too) generates from it:
// its types (src/openapi.d.ts) and its list of idempotent POSTs (src/idempotent.ts), so clients and the
// API cannot drift apart unnoticed
// (test/contract/openapi-types.test.ts fails when a file is out of date).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './openapi-doc.js';

for (const [path, text] of Object.entries(await generatedFiles())) {
  const target = fileURLToPath(new URL(`../${path}`, import.meta.url));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
