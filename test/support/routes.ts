// The app's route table as the hostile-input suites see it: every route with its declared schema, the
// credentials that let a request reach validation and the store, a valid-looking sample body, and
// helpers to put a value at one field. Built from app.routeAccess (every route, the consent page's
// form routes included), not from a hand-picked list.
import { randomBytes } from 'node:crypto';
import { sample } from 'openapi-sampler';
import type { RouteAccess } from '../../src/platform/auth/access.js';
import type { TestApp, TestOrg } from './app.js';

export interface Route {
  method: string;
  url: string;
  access: RouteAccess;
  params: Record<string, JsonSchema>;
  query: Record<string, JsonSchema>;
  requiredQuery: string[];
  body: JsonSchema | undefined;
}

export type JsonSchema = Record<string, any>;

export interface Credentials {
  org: TestOrg & { key: string };
  bearerToken: string;
  password: string;
  email: string;
  /** A data principal's token (`dpt_…`, for dp_id FUZZ_DP_ID): the routes that act for one person. */
  dpToken: string;
  /** A key with scope `sdk` only: the SDK surface's banner routes. */
  sdkKey: string;
}

export const FUZZ_DP_ID = 'fuzz-person-1';

/**
 * An organization with an admin key, an owner who signed in (their Bearer token), a data principal's
 * token and an `sdk` key.
 */
export async function credentials(t: TestApp): Promise<Credentials> {
  const org = await t.tenant();
  const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'a long enough password';
  const user = await t.app.services.users.createUser({ email, password });
  await t.app.services.users.addMember(org.id, user.id, 'owner');
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password } });
  if (res.statusCode !== 200) throw new Error(`owner login failed: ${res.statusCode} ${res.body}`);
  const minted = await t.call({ method: 'POST', url: `/api/v1/data-principals/${FUZZ_DP_ID}/tokens`, org, key: org.key, body: {} });
  if (minted.statusCode !== 201) throw new Error(`minting a data principal's token failed: ${minted.statusCode} ${minted.body}`);
  const sdkKey = await t.key(org, ['sdk']);
  return { org, bearerToken: res.json().access_token, password, email, dpToken: minted.json().access_token, sdkKey };
}

function objectProperties(schema: JsonSchema | undefined): Record<string, JsonSchema> {
  return (schema?.properties as Record<string, JsonSchema> | undefined) ?? {};
}

/** Every route of the app with its schema parts; HEAD and the static dashboard's catch-all excluded. */
export function routes(t: TestApp): Route[] {
  return t.app.routeAccess
    .filter((r) => r.method !== 'HEAD' && !r.url.includes('*'))
    .map((r) => {
      const schema = (r.schema ?? {}) as JsonSchema;
      return {
        method: r.method,
        url: r.url,
        access: r.access,
        // From the URL itself: a parameter without a schema is walked too.
        params: Object.fromEntries([...r.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => [m[1]!, objectProperties(schema.params)[m[1]!] ?? { type: 'string' }])),
        query: objectProperties(schema.querystring),
        requiredQuery: (schema.querystring?.required as string[] | undefined) ?? [],
        body: schema.body as JsonSchema | undefined,
      };
    });
}

/**
 * Headers that satisfy the route's access rule, so hostile input reaches the handler that serves it: a
 * person's route gets the data principal's token (never the key, which would win), an `sdk` route the
 * `sdk` key, another route with a key the admin key, else the owner's token.
 */
export function authHeaders(route: Route, c: Credentials): Record<string, string> {
  const a = route.access;
  if (a === 'public') return {};
  const h: Record<string, string> = {};
  if (a.dataPrincipal) h.authorization = `Bearer ${c.dpToken}`;
  else if (a.apiKey === 'sdk') h['x-api-key'] = c.sdkKey;
  else if (a.apiKey) h['x-api-key'] = c.org.key;
  else if (a.bearer) h.authorization = `Bearer ${c.bearerToken}`;
  if (a.orgHeader) h['x-org-id'] = c.org.slug;
  return h;
}

/** The URL with each path parameter replaced (default: a plausible id), and an optional query string. */
export function urlFor(route: Route, params: Record<string, string> = {}, query = ''): string {
  const path = route.url.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? `id-${name}`));
  return query ? `${path}?${query}` : path;
}

/** A body that satisfies the schema's shape (values may still name records that do not exist). */
export function sampleBody(route: Route): unknown {
  if (!route.body) return undefined;
  try {
    return sample(route.body as never, { skipReadOnly: true, quiet: true });
  } catch {
    return {};
  }
}

/** Paths (arrays of keys) to every string leaf of a value. */
export function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

/** A deep copy of `value` with `replacement` at `path`. */
export function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  const [head, ...rest] = path;
  copy[head!] = setAt(copy[head!], rest, replacement);
  return copy;
}

/** Schemas of a JSON Schema's properties, nested ones included, with their paths. */
export function schemaFields(schema: JsonSchema | undefined, path: string[] = []): { path: string[]; schema: JsonSchema }[] {
  if (!schema || typeof schema !== 'object') return [];
  const out: { path: string[]; schema: JsonSchema }[] = [];
  for (const [k, s] of Object.entries(objectProperties(schema))) {
    out.push({ path: [...path, k], schema: s });
    out.push(...schemaFields(s, [...path, k]));
  }
  return out;
}

export function isType(schema: JsonSchema, type: string): boolean {
  return [schema.type].flat().includes(type) || (schema.anyOf as JsonSchema[] | undefined)?.some((s) => isType(s, type)) === true;
}
