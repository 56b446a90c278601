// Shared schema pieces: the error body every route documents, nullable and timestamp helpers, and the
// trimmed-string rules of contract §4.
import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CODES, type ErrorCode } from './errors.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, and what to fix (the sentence may be reworded; branch on `code`)' }),
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_CODES),
      description: 'Stable machine-readable code: branch on it (the table of codes is in the API reference)',
    }),
    details: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({ description: 'The field (or path) at fault' }),
          message: Type.String({ description: 'Why it was refused' }),
        }),
        { description: 'Validation errors only: one entry per problem found' },
      ),
    ),
    hint: Type.Optional(
      Type.String({ description: 'What to fix, where the sentence itself is fixed by the specification (an API key sent to another organization\'s host)' }),
    ),
  },
  { title: 'Error' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation error: `details` lists every problem (or `X-Org-Id` unresolved on the history)',
  401: 'API key missing (`API key required (X-API-Key header)`) or invalid (`Invalid API key`); also any unknown organization host',
  403: 'The key lacks the required scope',
  404: 'No such record in this organization (malformed ids and other organizations\' ids included)',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Body over 256 KiB',
  415: 'Body not sent as application/json',
  429: 'Too many requests',
  500: 'Internal server error (no detail is ever given)',
};

/** OpenAPI responses for the given error statuses, all with the shared error body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [...statuses, 500]) out[s] = Type.Object(ErrorBody.properties, { title: 'Error', description: ERROR_DESCRIPTIONS[s] ?? 'Error' });
  return out;
}

/** A string or null (JSON Schema type array, OpenAPI 3.1). */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const raw = { ...(schema as Record<string, unknown>), ...options };
  const type = raw.type;
  return Type.Unsafe<Static<T> | null>({ ...raw, type: [type, 'null'] });
}

export const Timestamp = (description?: string) =>
  Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', description });

export const NullableTimestamp = (description?: string) =>
  Type.Unsafe<Date | string | null>({ type: ['string', 'null'], format: 'date-time', description });

// PostgreSQL text cannot hold U+0000: refused here as invalid input, not left to fail in the database as a 500.
const NO_NUL = { pattern: '^[^\\u0000]*$', 'x-message': 'must not contain the NUL character (\\u0000)' };

/** A required, trimmed, non-empty string of at most `max` characters. */
export const Text = (max: number, options: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength: max, ...NO_NUL, ...options });

/** A path segment looked up as stored text (a client's user id). */
export const PathText = (options: Record<string, unknown> = {}) => Type.String({ ...NO_NUL, ...options });

export const HttpUrl = (options: Record<string, unknown> = {}) =>
  Type.String({
    minLength: 1,
    maxLength: 2048,
    // No whitespace or control characters (NUL among them) anywhere in the URL.
    pattern: '^[hH][tT][tT][pP][sS]?://[^\\s\\x00-\\x1f\\x7f/$.?#][^\\s\\x00-\\x1f\\x7f]*$',
    'x-message': 'must be an http(s) URL',
    examples: ['https://files.example.org/evidence.pdf'],
    ...options,
  });

export const Email = (options: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength: 254, format: 'email', 'x-message': 'must be a valid email address', ...options });

/** E.164 (+ then 8-15 digits), or a bare 10-digit national number that gets the default country code. */
export const Phone = (options: Record<string, unknown> = {}) =>
  Type.String({
    minLength: 1,
    maxLength: 16,
    pattern: '^(\\+[0-9]{8,15}|[0-9]{10})$',
    'x-message': 'must be E.164 (+ then 8-15 digits) or a 10-digit national number',
    examples: ['+919876543210'],
    ...options,
  });

/** `limit` (1-200, default 50) and `offset` (default 0): the paging of every list. */
export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
};

/** The list envelope `{data, count, limit, offset}`; `count` covers every page. */
export function ListOf<T extends TSchema>(item: T, title: string, countDescription = 'Records matching the filters, over all pages') {
  return Type.Object(
    { data: Type.Array(item), count: Type.Integer({ description: countDescription }), limit: Type.Integer(), offset: Type.Integer() },
    { title },
  );
}
