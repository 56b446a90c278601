// Request validation: strict bodies (unknown fields refused, every problem listed), coerced query strings
// and params; Ajv's errors turned into the contract's details [{field, message}].
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError, type ErrorDetail } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: body strings are validated as sent, not trimmed. */
    trimStrings?: boolean;
  }
}

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    verbose: true,
    strict: false,
    // Not strictNumbers: with coercion it lets "Infinity" through; the int4 bounds below refuse it.
  });
  addFormats(ajv);
  // One rule for every date-time the API reads: a form a Date can hold and PostgreSQL can store.
  const base = ajv.formats['date-time'] as { validate: (s: string) => boolean } | undefined;
  if (base) ajv.addFormat('date-time', { type: 'string', validate: (s: string) => base.validate(s) && storableTimestamp(s) });
  return ajv;
}

/** Years 0001-9999 as written and in UTC, and readable by Date (no leap second): PostgreSQL takes them all. */
export function storableTimestamp(s: string): boolean {
  const year = Number(s.slice(0, 4));
  if (!(year >= 1 && year <= 9999)) return false;
  const t = Date.parse(s);
  if (!Number.isFinite(t)) return false;
  const utcYear = new Date(t).getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999;
}

/** PostgreSQL's integer (int4): every integer the API reads without its own bounds stays within it. */
export const INT4_MIN = -2147483648;
export const INT4_MAX = 2147483647;

/** A copy of a schema where every integer or number without bounds is bounded to int4. */
export function boundNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(boundNumbers);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'default' || k === 'examples' || k === 'const' || k === 'enum' ? v : boundNumbers(v);
  const types = [out.type].flat();
  if (types.includes('integer') || types.includes('number')) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = INT4_MAX;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = INT4_MIN;
  }
  return out;
}

/** The JSON pointer of the first NaN or infinite number in a (validated, hence shallow) value, or null. */
function nonFinitePath(root: unknown): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return path;
    if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` });
    }
  }
  return null;
}

/** How deeply a body may nest objects and arrays (the deepest accepted body is far shallower). */
export const MAX_BODY_DEPTH = 32;

export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
    const validate = ajv.compile(boundNumbers(schema) as object);
    // After the schema (whose own messages come first): NUL and lone surrogates anywhere, which
    // PostgreSQL cannot store; then Infinity, which Ajv's bounds skip once coerced ("Infinity", 1e400).
    const finite = ((data: unknown) => {
      const ok = validate(data);
      const errors: ErrorObject[] = [...(validate.errors ?? [])];
      const reported = new Set(errors.map((e) => e.instancePath));
      for (const p of unstorable(data, '', Infinity)) {
        if (!reported.has(p.pointer)) errors.push({ instancePath: p.pointer, schemaPath: '', keyword: 'storable', params: {}, message: p.message });
      }
      if (ok && errors.length === 0) {
        const bad = nonFinitePath(data);
        if (bad !== null) errors.push({ instancePath: bad, schemaPath: '', keyword: 'finite', params: {}, message: 'must be a finite number' });
      }
      finite.errors = errors.length > 0 ? errors : null;
      return errors.length === 0;
    }) as ((data: unknown) => boolean) & { errors: ErrorObject[] | null };
    finite.errors = null;
    return finite as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
  };
  app.setValidatorCompiler(compiler);
  // Callback style (nothing here waits; app.ts says why).
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      checkStorable(request);
    } catch (e) {
      return done(e as Error);
    }
    done();
  });
}

function checkStorable(request: FastifyRequest): void {
  // Every route, before its schema: empty query values count as missing, and no text that PostgreSQL
  // cannot store (NUL, lone surrogates) or nesting that would exhaust the stack gets further.
  dropEmptyQueryValues(request);
  // Parts the route declares a schema for are checked for NUL and lone surrogates by its validator
  // (above); the others here. Nesting is checked for every body, before anything walks it recursively.
  const schema = request.routeOptions.schema ?? {};
  const problems = [
    ...(schema.params ? [] : unstorable(request.params, 'path', Infinity)),
    ...(schema.querystring ? [] : unstorable(request.query, 'query', Infinity)),
    ...unstorable(request.body, 'body', MAX_BODY_DEPTH).filter((p) => !schema.body || p.depth),
  ].map(({ field, message }) => ({ field, message }));
  if (problems.length > 0) {
    const summary = problems.map((d) => `${d.field} ${d.message}`).join('; ');
    throw new AppError('validation_failed', `Invalid request: ${summary}`, problems);
  }
  // Strings are trimmed before validation, so lengths and "not empty" count what is stored; routes
  // that take secrets as typed (passwords) opt out.
  if (request.routeOptions.config.trimStrings === false) return;
  if (request.body && typeof request.body === 'object') request.body = trimStrings(request.body);
}

function dropEmptyQueryValues(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | null;
  if (!query || typeof query !== 'object') return;
  for (const [k, v] of Object.entries(query)) {
    if (v === '') delete query[k];
    else if (Array.isArray(v)) {
      const kept = v.filter((x) => x !== '');
      if (kept.length === 0) delete query[k];
      else if (kept.length !== v.length) query[k] = kept;
    }
  }
}

const NUL_MESSAGE = 'must not contain the NUL character (\\u0000)';
const SURROGATE_MESSAGE = 'must be well-formed Unicode (no lone surrogate)';

function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return NUL_MESSAGE;
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return SURROGATE_MESSAGE;
  return null;
}

interface Unstorable extends ErrorDetail {
  /** JSON pointer of the value (Ajv's instancePath). */
  pointer: string;
  /** true: nesting past the limit (not a text problem). */
  depth?: boolean;
}

/**
 * Walks a request part without recursion: strings (and field names) PostgreSQL cannot store, and
 * nesting past `maxDepth` containers. At most a few problems are reported.
 */
function unstorable(root: unknown, context: string, maxDepth: number): Unstorable[] {
  const out: Unstorable[] = [];
  const stack: Array<{ value: unknown; path: string; pointer: string; depth: number }> = [{ value: root, path: '', pointer: '', depth: 0 }];
  while (stack.length > 0 && out.length < 5) {
    const { value, path, pointer, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) out.push({ field: path || context, message: problem, pointer });
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    if (depth >= maxDepth) {
      out.push({ field: path || context, message: `nests deeper than ${maxDepth} levels`, pointer, depth: true });
      break;
    }
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    for (const [k, v] of entries) {
      const keyProblem = textProblem(k);
      if (keyProblem) {
        out.push({ field: path || context, message: `field names ${keyProblem}`, pointer });
        continue;
      }
      const field = path ? `${path}.${k}` : k;
      stack.push({ value: v, path: field, pointer: `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth: depth + 1 });
    }
  }
  return out.reverse();
}
function trimStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(trimStrings);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = trimStrings(v);
    return out;
  }
  return value;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'an array',
  null: 'null',
};

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

function join(path: string, name: string | undefined): string {
  return [path, name].filter(Boolean).join('.');
}

function detail(e: ErrorObject, context: string): ErrorDetail {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  const custom = (e.parentSchema as { 'x-message'?: string } | undefined)?.['x-message'];
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { field: join(path, p.missingProperty as string), message: 'is required' };
    case 'additionalProperties':
      return { field: join(path, p.additionalProperty as string), message: 'is not an accepted field' };
    case 'minLength':
      return { field: path || context, message: p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters` };
    case 'maxLength':
      return { field: path || context, message: `must be at most ${p.limit} characters` };
    case 'enum':
      return { field: path || context, message: `must be one of: ${(p.allowedValues as unknown[]).join(', ')}` };
    case 'type':
      return { field: path || context, message: `must be ${describeType(p.type)}` };
    case 'format':
    case 'pattern':
      return { field: path || context, message: custom ?? `must be a valid ${String(p.format ?? 'value')}` };
    case 'minProperties': {
      const names = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return { field: path || context, message: `must contain at least one of: ${names.join(', ')}` };
    }
    case 'minimum':
    case 'maximum':
      return { field: path || context, message: `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${p.limit}` };
    default:
      return { field: path || context, message: e.message ?? 'is invalid' };
  }
}

// One problem, one entry: Ajv also reports a wrong-typed value as "not one of" the allowed values, and an
// empty string as a malformed URL, email or phone; those follow-on errors only repeat the first.
function isFollowOn(e: ErrorObject, errors: ErrorObject[]): boolean {
  const sameValue = (keyword: string) => errors.some((o) => o.instancePath === e.instancePath && o.keyword === keyword);
  if (e.keyword === 'enum') return sameValue('type');
  if (e.keyword === 'format' || e.keyword === 'pattern') {
    return errors.some((o) => o.instancePath === e.instancePath && o.keyword === 'minLength' && (o.params as { limit: number }).limit === 1);
  }
  return false;
}

export function validationDetails(errors: ErrorObject[], context: string): ErrorDetail[] {
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    if (isFollowOn(e, errors)) continue;
    const d = detail(e, context);
    const key = `${d.field}\u0000${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  return out;
}

// Bodies built in code (a surface that maps another client's values to the contract's) are checked
// against the contract's own schema by the same rules as a request body: one definition of each rule.
const checkAjv = makeAjv(false);
const compiled = new WeakMap<object, ReturnType<Ajv['compile']>>();

/** The value when it satisfies the schema; else the 400 a request body with these problems gets. */
export function checkBody<T>(schema: object, value: unknown): T {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = checkAjv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(value)) return value as T;
  const details = validationDetails(validate.errors ?? [], 'body');
  throw new AppError('validation_failed', `Invalid request body: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
}
