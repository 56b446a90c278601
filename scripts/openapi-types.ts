// `npm run web:types`: writes the dashboard's API types (web/src/api/openapi.d.ts) from the OpenAPI
// document the route schemas generate, so the client and the API cannot drift apart unnoticed
// (test/contract/openapi-types.test.ts fails when the file is out of date).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument, typesFromDocument } from './openapi-doc.js';

const target = fileURLToPath(new URL('../web/src/api/openapi.d.ts', import.meta.url));
writeFileSync(target, await typesFromDocument(await openApiDocument()));
process.stdout.write(`wrote ${target}\n`);
