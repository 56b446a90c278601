// Cross-cutting HTTP behaviour (contract §3): body parsing errors, X-Request-Id, unknown routes, and the
// public platform endpoints (health, OpenAPI document, reference page).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { ERROR_CODES } from '../../src/platform/http/errors.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LIMIT = 256 * 1024;
const JSON_TYPE = { 'content-type': 'application/json' };

const tenant = () => t.tenant(['grievances', 'nominees']);

const validGrievance = { client_user_id: 'user-1', subject: 'Access', description: 'Send me my data', category: 'data_access' };

function postGrievance(a: Tenant, body: unknown, headers: Record<string, string> = {}) {
  return t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body, headers });
}

async function storedCount(a: Tenant): Promise<number> {
  const [row] = await t.db.system.query<{ n: number }>('select count(*)::int as n from grievances where org_id = $1', [a.id]);
  return row!.n;
}

/** A grievance body serialised to exactly `bytes` bytes (the description pads it). */
function grievanceOfSize(bytes: number): string {
  const empty = JSON.stringify({ ...validGrievance, description: '' });
  return JSON.stringify({ ...validGrievance, description: 'd'.repeat(bytes - Buffer.byteLength(empty)) });
}

describe('error codes (contract §9)', () => {
  test('docs/api.md lists every code the service can send, with its status, and no other', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(documented).toEqual(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
  });
});

describe('request bodies (contract §3)', () => {
  test('malformed JSON: 400 {error}', async () => {
    const a = await tenant();
    for (const body of ['{bad', '{"subject": "x",}', "{'subject': 'x'}", '{"subject": "x"']) {
      const res = await postGrievance(a, body, JSON_TYPE);
      expect(res.statusCode, body).toBe(400);
      expect(res.json()).toEqual({ error: 'Request body is not valid JSON', code: 'malformed_json' });
    }
    expect(await storedCount(a)).toBe(0);
  });

  test('a body sent as text/plain: 415 {error}', async () => {
    const a = await tenant();
    const res = await postGrievance(a, JSON.stringify(validGrievance), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ error: 'Unsupported Content-Type: send the body as application/json', code: 'unsupported_media_type' });
    expect(await storedCount(a)).toBe(0);
  });

  test.each(['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json'])(
    'a body sent as %s: 415 {error}',
    async (contentType) => {
      const a = await tenant();
      const res = await postGrievance(a, JSON.stringify(validGrievance), { 'content-type': contentType });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({ error: 'Unsupported Content-Type: send the body as application/json', code: 'unsupported_media_type' });
      expect(await storedCount(a)).toBe(0);
    },
  );

  test('application/json with a charset parameter is accepted', async () => {
    const a = await tenant();
    const res = await postGrievance(a, JSON.stringify(validGrievance), { 'content-type': 'application/json; charset=utf-8' });
    expect(res.statusCode).toBe(201);
    expect(await storedCount(a)).toBe(1);
  });

  test('a body over 256 KiB: 413 {error}; a body of exactly 256 KiB is read (and here validated)', async () => {
    const a = await tenant();
    const over = await postGrievance(a, grievanceOfSize(LIMIT + 1), JSON_TYPE);
    expect(over.statusCode).toBe(413);
    expect(over.json()).toEqual({ error: 'Request body is larger than 256 KiB', code: 'payload_too_large' });

    const atLimit = await postGrievance(a, grievanceOfSize(LIMIT), JSON_TYPE);
    expect(atLimit.statusCode).toBe(400);
    expect(atLimit.json().details).toEqual([{ field: 'description', message: 'must be at most 10000 characters' }]);
    expect(await storedCount(a)).toBe(0);
  });

  test('an empty body with Content-Type application/json: 400 {error}', async () => {
    const a = await tenant();
    for (const method of ['POST', 'PUT'] as const) {
      const url = method === 'POST' ? '/grievance' : '/grievance/GRV-AAAAAAAA';
      const res = await t.call({ method, url, org: a, key: a.key, body: '', headers: JSON_TYPE });
      expect(res.statusCode, method).toBe(400);
      expect(res.json()).toEqual({ error: 'Request body is empty: send a JSON object', code: 'empty_body' });
    }
    expect(await storedCount(a)).toBe(0);
  });

  test('no body at all on a create: 400 with details', async () => {
    const a = await tenant();
    const res = await t.call({ method: 'POST', url: '/nominee', org: a, key: a.key });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Invalid request body: body must be a JSON object', code: 'validation_failed',
      details: [{ field: 'body', message: 'must be a JSON object' }],
    });
  });

  test.each(['[]', '"text"', '42', 'null', 'true'])('a JSON body that is not an object (%s): 400 with details', async (body) => {
    const a = await tenant();
    const res = await postGrievance(a, body, JSON_TYPE);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Invalid request body: body must be a JSON object', code: 'validation_failed',
      details: [{ field: 'body', message: 'must be a JSON object' }],
    });
    expect(await storedCount(a)).toBe(0);
  });
});

describe('X-Request-Id (contract §3)', () => {
  test.each(['abc', 'A-Za-z0-9._-', 'r'.repeat(128), '0', 'req.2026-11-22_001'])('a valid incoming id (%s) is echoed', async (id) => {
    const a = await tenant();
    const res = await postGrievance(a, validGrievance, { 'x-request-id': id });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-request-id']).toBe(id);
  });

  test.each([
    ['too long (129 characters)', 'r'.repeat(129)],
    ['with a space', 'has space'],
    ['with a slash', 'a/b'],
    ['with a semicolon', 'a;b'],
    ['with a colon', 'trace:1'],
    ['empty', ''],
  ])('an invalid incoming id (%s) is replaced by a generated one', async (_why, id) => {
    const a = await tenant();
    const res = await postGrievance(a, validGrievance, { 'x-request-id': id });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(res.headers['x-request-id']).not.toBe(id);
  });

  test('without an incoming id, each response gets its own generated one', async () => {
    const first = await t.call({ method: 'GET', url: '/health' });
    const second = await t.call({ method: 'GET', url: '/health' });
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });

  test('every response carries it, errors included', async () => {
    const a = await tenant();
    const consentOnly = await t.tenant(['consent']);
    const cases: { expected: number; call: () => ReturnType<TestApp['call']> }[] = [
      { expected: 200, call: () => t.call({ method: 'GET', url: '/health', headers: { 'x-request-id': 'id-200' } }) },
      { expected: 201, call: () => postGrievance(a, validGrievance, { 'x-request-id': 'id-201' }) },
      { expected: 400, call: () => postGrievance(a, {}, { 'x-request-id': 'id-400' }) },
      { expected: 400, call: () => postGrievance(a, '{bad', { ...JSON_TYPE, 'x-request-id': 'id-400-json' }) },
      { expected: 401, call: () => t.call({ method: 'GET', url: '/grievance/user/u', org: a, headers: { 'x-request-id': 'id-401' } }) },
      {
        expected: 403,
        call: () => t.call({ method: 'GET', url: '/grievance/user/u', org: consentOnly, key: consentOnly.key, headers: { 'x-request-id': 'id-403' } }),
      },
      { expected: 404, call: () => t.call({ method: 'PUT', url: '/grievance/abc', org: a, key: a.key, body: { status: 'open' }, headers: { 'x-request-id': 'id-404' } }) },
      { expected: 404, call: () => t.call({ method: 'GET', url: '/no/such/route', headers: { 'x-request-id': 'id-404-route' } }) },
      { expected: 413, call: () => postGrievance(a, grievanceOfSize(LIMIT + 1), { ...JSON_TYPE, 'x-request-id': 'id-413' }) },
      { expected: 415, call: () => postGrievance(a, 'x', { 'content-type': 'text/plain', 'x-request-id': 'id-415' }) },
    ];
    for (const c of cases) {
      const res = await c.call();
      const sent = (res.raw.req.headers['x-request-id'] as string | undefined) ?? '';
      expect(res.statusCode, sent).toBe(c.expected);
      expect(res.headers['x-request-id'], sent).toBe(sent);
    }
  });

  test('a generated id is given on error responses too', async () => {
    const res = await t.call({ method: 'GET', url: '/no/such/route', headers: { 'x-request-id': 'x'.repeat(200) } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });
});

describe('unknown routes', () => {
  test('404 with a JSON {error}, on the base domain', async () => {
    const res = await t.call({ method: 'GET', url: '/no/such/route?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'No such endpoint: GET /no/such/route', code: 'route_not_found' });
  });

  test("404 with a JSON {error}, on an organization's host", async () => {
    const a = await tenant();
    const res = await t.call({ method: 'POST', url: '/grievances', org: a, key: a.key, body: validGrievance });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'No such endpoint: POST /grievances', code: 'route_not_found' });
  });

  test('a method a path does not take is 405 with Allow (test/contract/routing.test.ts walks every route)', async () => {
    const a = await tenant();
    const res = await t.call({ method: 'DELETE', url: '/grievance', org: a, key: a.key });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json()).toEqual({ error: 'DELETE is not allowed on /grievance: it takes POST', code: 'method_not_allowed' });
  });
});

describe('malformed URLs', () => {
  test('an invalid percent-encoding in the path: 400 {error} with X-Request-Id, nothing echoed', async () => {
    const a = await tenant();
    const res = await t.call({ method: 'GET', url: '/grievance/user/%E0%A4%A', org: a, key: a.key, headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Malformed URL: the path has an invalid percent-encoding', code: 'malformed_url' });
    expect(res.headers['x-request-id']).toBe('bad-url-1');
  });
});

describe('platform endpoints', () => {
  test('GET /health: 200 {status: ok, database: ok}', async () => {
    const res = await t.call({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: 'ok' });
  });

  describe('GET /openapi.json', () => {
    const ROUTES: Record<string, string[]> = {
      '/grievance': ['post'],
      '/grievance/user/{user_id}': ['get'],
      '/grievance/{ticket_id}': ['put'],
      '/grievance/{ticket_id}/history': ['get'],
      '/nominee': ['post'],
      '/nominee/user/{user_id}': ['get'],
      '/nominee/{nominee_id}': ['put', 'delete'],
    };

    async function openapi() {
      const res = await t.call({ method: 'GET', url: '/openapi.json' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      return res.json();
    }

    test('200: an OpenAPI 3.1.0 document', async () => {
      const doc = await openapi();
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info).toEqual(expect.objectContaining({ title: expect.any(String), version: expect.any(String) }));
    });

    test('lists every registered route with its methods', async () => {
      const doc = await openapi();
      for (const [path, methods] of Object.entries(ROUTES)) {
        expect(Object.keys(doc.paths[path] ?? {}), path).toEqual(expect.arrayContaining(methods));
      }
    });

    test('every operation documents a 500 response with the shared error schema', async () => {
      const doc = await openapi();
      for (const [path, methods] of Object.entries(ROUTES)) {
        for (const method of methods) {
          const response = doc.paths[path][method].responses['500'];
          expect(response, `${method} ${path}`).toBeDefined();
          // The error body is the named component Error (openapi-document.ts hoists titled schemas).
          const use = response.content['application/json'].schema;
          expect(use.$ref, `${method} ${path}`).toBe('#/components/schemas/Error');
          const schema = doc.components.schemas.Error;
          expect(schema, `${method} ${path}`).toEqual(
            expect.objectContaining({
              type: 'object',
              required: ['error', 'code'],
              properties: {
                error: expect.objectContaining({ type: 'string' }),
                code: expect.objectContaining({ type: 'string', enum: expect.arrayContaining(['internal', 'validation_failed', 'not_found']) }),
                details: expect.objectContaining({
                  type: 'array',
                  items: expect.objectContaining({
                    type: 'object',
                    required: ['field', 'message'],
                    properties: { field: expect.objectContaining({ type: 'string' }), message: expect.objectContaining({ type: 'string' }) },
                  }),
                }),
                hint: expect.objectContaining({ type: 'string' }),
              },
            }),
          );
        }
      }
    });
  });

  test('GET /docs: 200 with the HTML reference page', async () => {
    let res = await t.call({ method: 'GET', url: '/docs' });
    for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 3; hops++) {
      const location = new URL(String(res.headers.location), 'http://localhost/docs');
      res = await t.call({ method: 'GET', url: location.pathname + location.search });
    }
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });
});
