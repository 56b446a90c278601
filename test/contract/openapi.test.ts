// The OpenAPI document as a product (contract §9, issue 17): Redocly's recommended rules pass with no
// error and no warning, every operation has an operationId, security and examples, titled schemas are
// named components, and the headers the service sends and reads are declared.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { documentJson, openApiDocument } from '../../scripts/openapi-doc.js';
import { finishDocument, operationIdFor, OpenApiDocumentError } from '../../src/platform/http/openapi-document.js';
import { storeKind } from '../support/store.js';

const root = new URL('../../', import.meta.url);
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

// The document does not depend on the store: checked once, in the embedded-store run.
describe.runIf(storeKind() === 'pglite')('the OpenAPI document', () => {
  let doc: Record<string, any>;
  const operations: { method: string; path: string; op: Record<string, any> }[] = [];
  beforeAll(async () => {
    // The document of a freshly built app; slow on a busy machine.
    doc = (await openApiDocument()) as Record<string, any>;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS) if (item[method]) operations.push({ method, path, op: item[method] });
    }
  }, 120_000);

  test('passes `redocly lint` (recommended rules) with zero errors and zero warnings', { timeout: 180_000 }, async () => {
    // The generated document, linted with the repository's redocly.yaml and its accepted exceptions.
    const dir = mkdtempSync(join(tmpdir(), 'assent-openapi-'));
    try {
      writeFileSync(join(dir, 'openapi.json'), documentJson(doc));
      copyFileSync(new URL('redocly.yaml', root), join(dir, 'redocly.yaml'));
      const ignore = readFileSync(new URL('.redocly.lint-ignore.yaml', root), 'utf8').replace('clients/typescript/openapi.json:', 'openapi.json:');
      writeFileSync(join(dir, '.redocly.lint-ignore.yaml'), ignore);
      const cli = new URL('node_modules/@redocly/cli/bin/cli.js', root).pathname;
      const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', 'openapi.json', '--format=json'], {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
      const problems = report.problems.map((p: any) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
      expect(problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every operation has a unique camelCase operationId, security, and an X-Request-Id on every answer', () => {
    expect(operations.length).toBeGreaterThan(40);
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { method, path, op } of operations) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(Array.isArray(op.security), `${method} ${path} security`).toBe(true);
      expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/XRequestId' });
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(response.headers?.['X-Request-Id'], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/X-Request-Id' });
      }
    }
    expect(doc.paths['/grievance'].post.operationId).toBe('postGrievance');
    expect(doc.paths['/grievance/{ticket_id}/history'].get.operationId).toBe('getGrievanceHistoryByTicketId');
  });

  test("security follows each route's access rule: [] for public routes", () => {
    expect(doc.paths['/health'].get.security).toEqual([]);
    expect(doc.paths['/auth/login'].post.security).toEqual([]);
    expect(doc.paths['/grievance'].post.security).toEqual([{ ApiKey: [] }]);
    expect(doc.paths['/api/v1/grievances'].get.security).toEqual([{ ApiKey: [] }, { Bearer: [] }]);
    expect(doc.paths['/api/v1/members'].get.security).toEqual([{ Bearer: [] }]);
    expect(doc.paths['/api/v1/me/consents'].get.security).toEqual([{ DataPrincipal: [] }]);
    expect(doc.paths['/dpo'].get.security).toEqual([{ ApiKey: [] }, { Bearer: [] }, { DataPrincipal: [] }]);
  });

  test('an example on every request body and every JSON answer; errors show a real code', () => {
    for (const { method, path, op } of operations) {
      const body = op.requestBody?.content?.['application/json'];
      if (body) expect(body.example, `${method} ${path} body`).toBeDefined();
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const media = response.content?.['application/json'];
        if (media) expect(media.example, `${method} ${path} ${status}`).toBeDefined();
      }
    }
    const created = doc.paths['/grievance'].post.responses['201'].content['application/json'];
    expect(created.schema).toEqual({ $ref: '#/components/schemas/GrievanceTicket' });
    expect(created.example).toMatchObject({ ticket_id: 'GRV-7K2M9QXA', category: 'data_access', status: 'open' });
    expect(doc.paths['/grievance'].post.responses['404']).toBeUndefined();
    expect(doc.paths['/grievance/{ticket_id}'].put.responses['404'].content['application/json'].example).toEqual({
      error: "No such record in this organization (malformed ids and other organizations' ids included)",
      code: 'not_found',
    });
  });

  test('titled schemas are named components, the error body among them', () => {
    for (const name of ['GrievanceTicket', 'UserNominee', 'ConsentLinkHistory', 'Error', 'GrievanceList']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.components.schemas.GrievanceList.properties.data.items).toEqual({ $ref: '#/components/schemas/GrievanceTicket' });
    const unauthorized = doc.paths['/grievance'].post.responses['401'];
    expect(unauthorized.content['application/json'].schema).toMatchObject({ $ref: '#/components/schemas/Error' });
    expect(JSON.stringify(doc.paths)).not.toContain('"title"');
  });

  test('Idempotency-Key on every creating POST but those docs/api.md names; X-Org-Id required on the history', () => {
    // Their answer holds a secret (which would then be stored), or the change is not the tenant's alone.
    const notIdempotent = ['post /api/v1/api-keys', 'post /api/v1/data-principals/{dp_id}/tokens', 'post /api/v1/webhooks', 'post /api/v1/members', 'post /api/v1/systems/{id}/keys', 'post /api/v1/nominees/{nominee_id}/tokens'];
    for (const { method, path, op } of operations) {
      // The SDK surface serves requests the truConsent SDKs build, and they never send the header.
      const sdkSurface = path.startsWith('/api/v1/internal/');
      const creating = method === 'post' && op.responses['201'] && !sdkSurface && !notIdempotent.includes(`${method} ${path}`);
      const hasKey = op.parameters.some((p: any) => p.$ref === '#/components/parameters/IdempotencyKey');
      expect(hasKey, `${method} ${path}`).toBe(Boolean(creating));
      if (creating) {
        expect(op.responses['201'].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
        expect(op.responses['422'], `${method} ${path}`).toBeDefined();
      }
    }
    const history = doc.paths['/api/v1/external/public/consent-link/history'].get;
    expect(history.parameters.filter((p: any) => p.$ref)).toEqual([
      { $ref: '#/components/parameters/XRequestId' },
      { $ref: '#/components/parameters/XOrgIdRequired' },
    ]);
    expect(doc.components.parameters.XOrgIdRequired).toMatchObject({ name: 'X-Org-Id', in: 'header', required: true });
  });
});

describe('the document pass', () => {
  const route = { method: 'GET', path: '/things/{id}', access: 'public' as const, rateLimited: false, cors: false, idempotent: false, sendsHeaders: [] };
  const errorSchema = { title: 'Error', type: 'object', properties: { error: { type: 'string' } } };
  const docWith = (schema: object, other: object) => ({
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        get: {
          responses: {
            200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { a: schema, b: other } } } } },
            404: { description: 'no', content: { 'application/json': { schema: errorSchema } } },
          },
        },
      },
    },
  });
  const thing = { title: 'Thing', type: 'object', properties: { n: { type: 'integer' } } };

  test('a nullable titled schema becomes anyOf [$ref, null]', () => {
    const doc = finishDocument(docWith(thing, { ...thing, type: ['object', 'null'], description: 'maybe' }), [route]);
    const props = doc.paths['/things/{id}'].get.responses['200'].content['application/json'].schema.properties;
    expect(props.a).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(props.b).toEqual({ anyOf: [{ $ref: '#/components/schemas/Thing' }, { type: 'null' }], description: 'maybe' });
    expect(doc.components.schemas.Thing).toEqual({ title: 'Thing', type: 'object', properties: { n: { type: 'integer' } } });
  });

  test('two different schemas with one title fail loudly', () => {
    const other = { title: 'Thing', type: 'object', properties: { n: { type: 'string' } } };
    expect(() => finishDocument(docWith(thing, other), [route])).toThrow(OpenApiDocumentError);
    expect(() => finishDocument(docWith(thing, other), [route])).toThrow(/two different schemas are titled "Thing"/);
  });

  test('operationIds are derived from the method and the path; a collision fails loudly', () => {
    expect(operationIdFor('get', '/api/v1/consent-links/daily')).toBe('getConsentLinksDaily');
    expect(operationIdFor('post', '/consent/{collection_point_id}/withdraw')).toBe('postConsentWithdrawByCollectionPointId');
    const twice = {
      openapi: '3.1.0',
      paths: {
        '/a/{x}/b': { get: { responses: { 404: { description: 'no', content: { 'application/json': { schema: errorSchema } } } } } },
        '/a/b/{x}': { get: { responses: { 404: { description: 'no', content: { 'application/json': { schema: errorSchema } } } } } },
      },
    };
    const routes = ['/a/{x}/b', '/a/b/{x}'].map((path) => ({ ...route, path }));
    expect(() => finishDocument(twice, routes)).toThrow(/operationId getABByX .* declare schema.operationId/);
  });
});
