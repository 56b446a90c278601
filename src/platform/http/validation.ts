// Request validation: strict bodies (unknown fields refused, every problem listed), coerced query strings
// and params; Ajv's errors turned into the contract's details [{field, message}].
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
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
  });
  addFormats(ajv);
  return ajv;
}

export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
  app.setValidatorCompiler(compiler);
  // Strings are trimmed before validation, so lengths and "not empty" count what is stored; routes
  // that take secrets as typed (passwords) opt out.
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config.trimStrings === false) return;
    if (request.body && typeof request.body === 'object') request.body = trimStrings(request.body);
  });
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
