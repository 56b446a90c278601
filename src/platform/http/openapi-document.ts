// Turns the document @fastify/swagger generates from the route schemas into the published product:
// an operationId on every operation, titled schemas hoisted to named components, the security and the
// headers each route's config implies, and an example on every body. Everything is derived from the
// routes, so a route added later is covered without a list to keep up to date.
import { sample } from 'openapi-sampler';
import { ERROR_CODES } from './errors.js';
import type { RouteAccess } from '../auth/access.js';

/** What the document pass needs to know about a route, collected at registration. */
export interface DocumentedRoute {
  method: string;
  /** The OpenAPI path (`/grievance/{ticket_id}`). */
  path: string;
  access: RouteAccess | undefined;
  /** Rate limited (every route unless its config says `rateLimit: false`). */
  rateLimited: boolean;
  /** Answers browsers from the organization's allowed origins (route config `cors: true`). */
  cors: boolean;
  /** Takes Idempotency-Key (route config `idempotent: true`). */
  idempotent: boolean;
  /** Response headers the route sets itself, by name from HEADERS (route config `sendsHeaders`). */
  sendsHeaders: readonly string[];
}

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** Response headers the service sends, declared once under components.headers. */
export const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'The request id: yours when you sent a valid one, else generated. Quote it when asking for support.',
    schema: { type: 'string', example: '01938c2e-7a4b-7c3d-9e2f-4a5b6c7d8e9f' },
  },
  'RateLimit-Limit': {
    description: 'Requests allowed in the current window (per API key, or per client address without a key).',
    schema: { type: 'integer', example: 500 },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', example: 499 } },
  'RateLimit-Reset': { description: 'Seconds until the current window ends.', schema: { type: 'integer', example: 60 } },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', example: 30 } },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Set-Cookie': { description: 'The dashboard session cookies (`assent_refresh` HttpOnly, `assent_csrf` readable).', schema: { type: 'string' } },
  'Cache-Control': { description: '`no-store`: the answer holds credentials.', schema: { type: 'string', example: 'no-store' } },
  'Access-Control-Allow-Origin': {
    description: "The request's `Origin`, when the organization allows it (`allowed_origins`).",
    schema: { type: 'string', example: 'https://shop.example.org' },
  },
  Vary: { description: '`Origin`: the CORS answer depends on it.', schema: { type: 'string', example: 'Origin' } },
};

/** Request headers, declared once under components.parameters. */
const PARAMETERS: Record<string, Json> = {
  XRequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your id for this request (1-128 of `A-Za-z0-9._-`); echoed back and logged.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$', example: 'req-4711' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes the request safe to retry: the first answer is stored for 24 hours and replayed (with `Idempotent-Replayed: true`) for a repeat with the same body; another body with the same key: 422; while the first is still running: 409. Use a new random value (a UUID) per logical request, and the same one for its retries.',
    schema: { type: 'string', minLength: 1, maxLength: 255, example: '4f9b3c1e-2d7a-4e8b-9c6f-1a2b3c4d5e6f' },
  },
  XOrgIdRequired: {
    name: 'X-Org-Id',
    in: 'header',
    required: true,
    description:
      "The organization slug; must name the organization addressed: on an organization's host, that host's; on the bare base host, the API key's (or, with a Bearer token, the organization to act in). Missing: 400 `org_header_missing`; another or unknown: 400 `org_header_unresolved`.",
    schema: { type: 'string', example: 'acme' },
  },
  XOrgId: {
    name: 'X-Org-Id',
    in: 'header',
    required: false,
    description:
      "On the bare base host (no organization subdomain): with a member's Bearer token, required, the slug of the organization to act in (missing: 400 `org_header_missing`; no such organization: 400 `org_header_unresolved`; not a member: 403 `not_a_member`); with an API key or a data principal's token, optional, and when sent it must name the credential's own organization (400 `org_header_unresolved`). Ignored on an organization's host.",
    schema: { type: 'string', example: 'acme' },
  },
};

export class OpenApiDocumentError extends Error {}

/** The product pass over the generated document (mutates and returns it). */
export function finishDocument(doc: Json, routes: readonly DocumentedRoute[]): Json {
  doc.components ??= {};
  doc.components.schemas ??= {};
  doc.components.headers = { ...(doc.components.headers ?? {}), ...HEADERS };
  doc.components.parameters = { ...(doc.components.parameters ?? {}), ...PARAMETERS };

  const byKey = new Map(routes.map((r) => [`${r.method.toLowerCase()} ${r.path}`, r]));
  const operationIds = new Map<string, string>();

  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const route = byKey.get(`${method} ${path}`);
      if (!route) throw new OpenApiDocumentError(`${method.toUpperCase()} ${path} is in the document but was not seen registered`);

      op.operationId ??= operationIdFor(method, path);
      const taken = operationIds.get(op.operationId);
      if (taken) {
        throw new OpenApiDocumentError(
          `operationId ${op.operationId} of ${method.toUpperCase()} ${path} is also ${taken}'s: declare schema.operationId on one of the routes`,
        );
      }
      operationIds.set(op.operationId, `${method.toUpperCase()} ${path}`);

      op.security = securityFor(route.access);
      addRequestHeaders(op, method, route);
      addResponses(op, route);
    }
  }

  hoistTitledSchemas(doc);
  addExamples(doc);
  dropUnused(doc, 'headers');
  dropUnused(doc, 'parameters');
  return doc;
}

/** `getGrievanceHistoryByTicketId`: the method, the literal segments (without /api/v1), then the parameters. */
export function operationIdFor(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean);
  if (segments[0] === 'api' && /^v\d+$/.test(segments[1] ?? '')) segments.splice(0, 2);
  const words = segments.filter((s) => !s.startsWith('{')).flatMap(wordsOf);
  const params = segments.filter((s) => s.startsWith('{')).map((s) => wordsOf(s.slice(1, -1)).map(capitalize).join(''));
  return method.toLowerCase() + words.map(capitalize).join('') + (params.length ? 'By' + params.join('And') : '');
}

const wordsOf = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean);
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function securityFor(access: RouteAccess | undefined): Json[] {
  if (access === undefined || access === 'public') return [];
  const out: Json[] = [];
  if (access.apiKey) out.push({ ApiKey: [] });
  if (access.bearer) out.push({ Bearer: [] });
  if (access.dataPrincipal) out.push({ DataPrincipal: [] });
  return out;
}

const isTenantRoute = (access: RouteAccess | undefined): access is Exclude<RouteAccess, 'public'> =>
  access !== undefined && access !== 'public';

function addRequestHeaders(op: Json, _method: string, route: DocumentedRoute): void {
  const refs: string[] = ['XRequestId'];
  if (route.idempotent) refs.push('IdempotencyKey');
  if (isTenantRoute(route.access)) {
    if (route.access.orgHeader) refs.push('XOrgIdRequired');
    else if (route.access.bearer || route.access.apiKey || route.access.dataPrincipal) refs.push('XOrgId');
  }
  const names = new Set(refs.map((r) => PARAMETERS[r]!.name.toLowerCase()));
  // A header the route's own schema declares (x-org-id) is replaced by the shared declaration.
  const own = (op.parameters ?? []).filter((p: Json) => !(p.in === 'header' && names.has(String(p.name).toLowerCase())));
  op.parameters = [...own, ...refs.map((r) => ({ $ref: `#/components/parameters/${r}` }))];
}

function addResponses(op: Json, route: DocumentedRoute): void {
  op.responses ??= {};
  if (route.rateLimited && !op.responses['429']) {
    op.responses['429'] = {
      description: 'Rate limit exceeded (per API key, or per client address); `Retry-After` says when to try again',
      content: { 'application/json': { schema: errorSchemaCopy(op) } },
    };
  }
  if (route.idempotent) {
    op.responses['409'] ??= {
      description: 'Conflict with the current state, or a request with this Idempotency-Key is still being processed (`idempotency_key_in_flight`)',
      content: { 'application/json': { schema: errorSchemaCopy(op) } },
    };
    op.responses['422'] ??= {
      description: 'The Idempotency-Key was already used with another request (`idempotency_key_reused`)',
      content: { 'application/json': { schema: errorSchemaCopy(op) } },
    };
  }
  for (const [status, response] of Object.entries<Json>(op.responses)) {
    const headers: string[] = ['X-Request-Id'];
    if (route.rateLimited) headers.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
    if (status === '429' || status === '503') headers.push('Retry-After');
    if (route.idempotent && status.startsWith('2')) headers.push('Idempotent-Replayed');
    if (route.cors) headers.push('Access-Control-Allow-Origin', 'Vary');
    headers.push(...route.sendsHeaders);
    for (const name of headers) {
      if (!HEADERS[name]) throw new OpenApiDocumentError(`${route.method} ${route.path} sends header ${name}, which HEADERS does not declare`);
      response.headers ??= {};
      response.headers[name] ??= { $ref: `#/components/headers/${name}` };
    }
  }
}

/** The error body schema of another response of the operation (every route lists some), for a 429 added here. */
function errorSchemaCopy(op: Json): Json {
  for (const response of Object.values<Json>(op.responses)) {
    const schema = response.content?.['application/json']?.schema;
    if (schema?.title === 'Error') {
      const copy = structuredClone(schema);
      delete copy.description;
      return copy;
    }
  }
  throw new OpenApiDocumentError(`operation ${op.operationId} lists no error response (use errorResponses())`);
}

/** Shared headers and parameters no operation uses (no route is rate limited yet, say) are left out. */
function dropUnused(doc: Json, kind: 'headers' | 'parameters'): void {
  const text = JSON.stringify(doc.paths);
  for (const name of Object.keys(doc.components[kind])) {
    if (!text.includes(`"#/components/${kind}/${name}"`)) delete doc.components[kind][name];
  }
}

// ---- named components -------------------------------------------------------------------------------

const ANNOTATIONS = ['description', 'example', 'examples', 'default'];

/**
 * Every schema with a `title` becomes `#/components/schemas/<title>` and is replaced by a `$ref` (inner
 * schemas first, so components refer to each other). A nullable titled schema (`type: [..., 'null']`)
 * becomes `anyOf: [{$ref}, {type: 'null'}]`. Two different schemas under one title is an error: the
 * name would mean two things.
 */
function hoistTitledSchemas(doc: Json): void {
  const components: Json = doc.components.schemas;
  const where = new Map<string, string>();

  const visit = (node: unknown, pointer: string): unknown => {
    if (Array.isArray(node)) return node.map((n, i) => visit(n, `${pointer}/${i}`));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    for (const key of Object.keys(obj)) {
      // Only schema positions hold schemas; `example` values and the like are data.
      if (key === 'example' || key === 'examples') continue;
      obj[key] = visit(obj[key], `${pointer}/${key}`);
    }
    if (!isSchema(obj, pointer) || typeof obj.title !== 'string') return obj;

    const title = obj.title;
    if (!/^[A-Za-z0-9._-]+$/.test(title)) throw new OpenApiDocumentError(`schema title "${title}" (${pointer}) cannot name a component`);
    const { canonical, nullable, annotations } = canonicalOf(obj);
    const existing = components[title];
    if (existing === undefined) {
      components[title] = canonical;
      where.set(title, pointer);
    } else if (stableJson(existing) !== stableJson(canonical)) {
      throw new OpenApiDocumentError(
        `two different schemas are titled "${title}": ${where.get(title) ?? '#/components/schemas/' + title} and ${pointer}; give one another title`,
      );
    }
    const ref = { $ref: `#/components/schemas/${title}` };
    return nullable ? { anyOf: [ref, { type: 'null' }], ...annotations } : { ...ref, ...annotations };
  };

  for (const [name, schema] of Object.entries<Json>({ ...components })) {
    // Components declared up front keep their own name; only what is inside them is hoisted.
    for (const key of Object.keys(schema)) schema[key] = visit(schema[key], `#/components/schemas/${name}/${key}`);
    if (typeof schema.title === 'string') where.set(schema.title, `#/components/schemas/${name}`);
  }
  doc.paths = visit(doc.paths, '#/paths');
}

/** A JSON Schema object (not a parameter, a media type or a response that happens to hold a `title`). */
function isSchema(obj: Json, pointer: string): boolean {
  return /\/schema($|\/)/.test(pointer) && ('type' in obj || 'properties' in obj || 'anyOf' in obj || 'oneOf' in obj || 'allOf' in obj || 'enum' in obj);
}

function canonicalOf(obj: Json): { canonical: Json; nullable: boolean; annotations: Json } {
  const canonical: Json = { ...obj };
  const annotations: Json = {};
  // A use's own description (an error response's, a property's) stays at the use, beside the $ref.
  for (const key of ANNOTATIONS) {
    if (key in canonical) {
      annotations[key] = canonical[key];
      delete canonical[key];
    }
  }
  let nullable = false;
  if (Array.isArray(canonical.type) && canonical.type.includes('null')) {
    nullable = true;
    const rest = canonical.type.filter((t: string) => t !== 'null');
    canonical.type = rest.length === 1 ? rest[0] : rest;
  }
  return { canonical, nullable, annotations };
}

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v,
  );
}

// ---- examples -----------------------------------------------------------------------------------------

/** An example on every request body and response body: sampled from the schema, or for an error, the first code of its status. */
function addExamples(doc: Json): void {
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const body = op.requestBody?.content?.['application/json'];
      if (body?.schema && body.example === undefined) body.example = sampleOf(body.schema, doc, `${method} ${path} body`);
      for (const [status, response] of Object.entries<Json>(op.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (!media?.schema || media.example !== undefined) continue;
        media.example = isErrorSchema(media.schema) ? errorExample(Number(status)) : sampleOf(media.schema, doc, `${method} ${path} ${status}`);
      }
    }
  }
}

const isErrorSchema = (schema: Json) => schema.$ref === '#/components/schemas/Error';

function errorExample(status: number): Json {
  const found = Object.entries(ERROR_CODES).find(([, e]) => e.status === status);
  if (!found) return { error: 'Error', code: 'internal' };
  const [code, entry] = found;
  if (status === 400) {
    return {
      error: 'Validation failed: subject must not be empty',
      code: 'validation_failed',
      details: [{ field: 'subject', message: 'must not be empty' }],
    };
  }
  return { error: entry.meaning, code };
}

function sampleOf(schema: Json, doc: Json, where: string): unknown {
  try {
    return sample(schema as never, { skipReadOnly: false, skipWriteOnly: true, quiet: true }, doc);
  } catch (err) {
    throw new OpenApiDocumentError(`no example could be sampled for ${where}: ${(err as Error).message}`);
  }
}
