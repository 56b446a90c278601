// @assent/client: the typed Assent API client. The paths, bodies and answers are generated from the
// service's OpenAPI document (openapi.d.ts, by openapi-typescript) and called with openapi-fetch; this
// file adds only what a generator cannot: credentials, an Idempotency-Key made once per logical call and
// reused on its retries, retries with back-off that honour Retry-After, and an error carrying the
// service's stable `code`.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './openapi.js';
import { idempotentPosts } from './idempotent.js';

export type { components, operations, paths } from './openapi.js';
export { idempotentPosts } from './idempotent.js';
export { webhookEventTypes } from './webhook-events.js';

/** The error body every failed answer carries (contract §9). */
export type ErrorBody = components['schemas']['Error'];
/** The service's stable error codes: branch on these, not on the sentence. */
export type ErrorCode = ErrorBody['code'];
/** One problem of a 400 `validation_failed`: the field (or path) at fault, and why. */
export type FieldProblem = NonNullable<ErrorBody['details']>[number];
/** A named schema of the document: `Schema<'GrievanceTicket'>`. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

export interface AssentClientOptions {
  /** Where the service answers: its bare host (`http://localhost:3000`) or an organization's own host. */
  baseUrl: string;
  /** An organization API key (`ask_live_…`), sent as `X-API-Key`. It selects its organization on the bare host. */
  apiKey?: string;
  /**
   * A Bearer token: a user's access token (with `orgId`) or a data principal's `dpt_` token. A function is
   * asked before every request (so a renewed token is used at once).
   */
  token?: string | (() => string | null | undefined | Promise<string | null | undefined>);
  /** The organization's slug, sent as `X-Org-Id` (a user's token on the bare host; the consent-link history). */
  orgId?: string;
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  retries?: number;
  /** First back-off in milliseconds, doubled on each retry, with jitter (default 500). */
  retryDelayMs?: number;
  /** A `Retry-After` longer than this (seconds) is not waited for: the answer is returned (default 60). */
  maxRetryAfterSeconds?: number;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export type AssentClient = Client<paths>;

/** A failed answer as an exception: the status, the stable `code`, the sentence, and per-field problems. */
export class AssentError extends Error {
  override readonly name = 'AssentError';
  constructor(
    /** The HTTP status (0 when the service could not be reached). */
    readonly status: number,
    /** The stable code of the answer (`network_error` when there was none). */
    readonly code: ErrorCode | 'network_error' | 'unexpected_response',
    message: string,
    /** For `validation_failed`: one entry per problem. */
    readonly details: FieldProblem[] = [],
    /** The answer's `X-Request-Id` (quote it when asking for help). */
    readonly requestId: string | null = null,
    /** The answer's `Retry-After`, in seconds. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  /** The problems reported for one field (or a path under it: `purposes.0.name` belongs to `purposes`). */
  problemsFor(field: string): string[] {
    return this.details.filter((d) => d.field === field || d.field.startsWith(`${field}.`)).map((d) => d.message);
  }

  /** The AssentError of a failed answer and its parsed body (whatever it is: a proxy's page, nothing at all). */
  static from(response: Response, body: unknown): AssentError {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Partial<Record<keyof ErrorBody, unknown>>;
    const known = typeof b.error === 'string' && typeof b.code === 'string';
    const message = typeof b.error === 'string' ? b.error : `The server answered ${response.status} ${response.statusText}`.trim();
    const details = Array.isArray(b.details) ? (b.details as FieldProblem[]) : [];
    return new AssentError(
      response.status,
      known ? (b.code as ErrorCode) : 'unexpected_response',
      message,
      details,
      response.headers.get('x-request-id'),
      retryAfterSeconds(response),
    );
  }
}

/**
 * The data of a successful answer, or an AssentError for a failed one:
 * `const ticket = await unwrap(assent.POST('/grievance', { body }))`.
 */
export async function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw AssentError.from(response, error);
  return data as T;
}

/** Whether an answer is the stored answer to an earlier request with the same Idempotency-Key. */
export const wasReplayed = (response: Response): boolean => response.headers.get('idempotent-replayed') === 'true';

/** A new Idempotency-Key (a random UUID). */
export const newIdempotencyKey = (): string => globalThis.crypto.randomUUID();

/** The typed client: `client.GET`, `client.POST`, … as openapi-fetch gives them, with the behaviour above. */
export function createAssentClient(options: AssentClientOptions): AssentClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch(options),
    headers: options.headers,
  });
  client.use(credentials(options), idempotencyKeys);
  return client;
}

function credentials(options: AssentClientOptions): Middleware {
  return {
    async onRequest({ request }) {
      if (options.apiKey && !request.headers.has('x-api-key')) request.headers.set('x-api-key', options.apiKey);
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      if (options.orgId && !request.headers.has('x-org-id')) request.headers.set('x-org-id', options.orgId);
      return request;
    },
  };
}

/**
 * A creating POST gets an Idempotency-Key (unless the caller gave one), made here once per call: the
 * retries below resend the same request, so the service answers a retry of a request that had in fact
 * succeeded with its stored answer (`Idempotent-Replayed: true`) instead of creating a second ticket.
 */
const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.method === 'POST' && idempotentPosts.has(schemaPath) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', newIdempotencyKey());
    }
    return request;
  },
};

/** Methods whose repetition changes nothing more than the first did. */
const REPEATABLE = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

function retryingFetch(options: AssentClientOptions): (request: Request, init?: unknown) => Promise<Response> {
  const retries = Math.max(0, options.retries ?? 2);
  const base = options.retryDelayMs ?? 500;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 60;
  return async (request, init) => {
    const send = (r: Request): Promise<Response> =>
      options.fetch ? options.fetch(r) : (globalThis.fetch as (r: Request, i?: unknown) => Promise<Response>)(r, init);
    // Safe to send again: a repeatable method, or a request the service recognises by its key.
    const safe = REPEATABLE.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await send(last ? request : request.clone());
      } catch (error) {
        // The request may or may not have reached the service: resend only what is safe to resend.
        if (last || !safe) throw networkError(request, error);
        await sleep(backoff(base, attempt));
        continue;
      }
      if (last) return response;
      const wait = await retryDelay(response, safe, base, attempt, maxRetryAfter);
      if (wait === null) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait);
    }
  };
}

/**
 * A request that got no answer at all (refused, reset, DNS, TLS, aborted) as the AssentError the type
 * promises: status 0, code `network_error`, a sentence naming the address, and the fetch error as `cause`.
 * An abort the caller asked for (its AbortSignal) stays the caller's own AbortError.
 */
function networkError(request: Request, error: unknown): unknown {
  if (error instanceof AssentError) return error;
  if (error instanceof Error && error.name === 'AbortError' && request.signal.aborted) return error;
  const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
  const origin = new URL(request.url).origin;
  const wrapped = new AssentError(
    0,
    'network_error',
    `Could not reach the Assent service at ${origin} (${cause}): check that it is running and that baseUrl is right.`,
  );
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

/** How long to wait before resending after this answer, or null to return it. */
async function retryDelay(response: Response, safe: boolean, base: number, attempt: number, maxRetryAfter: number): Promise<number | null> {
  const status = response.status;
  let retry = false;
  if (status === 429) retry = true; // refused before any work: always safe to resend
  else if (status === 409 && safe) retry = (await codeOf(response)) === 'idempotency_key_in_flight'; // the first is still running
  else if (status >= 500 && safe) retry = true;
  if (!retry) return null;
  const after = retryAfterSeconds(response);
  if (after !== null) return after <= maxRetryAfter ? after * 1000 : null;
  return backoff(base, attempt);
}

async function codeOf(response: Response): Promise<unknown> {
  try {
    return ((await response.clone().json()) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}

/** Exponential back-off with full jitter: up to base·2^attempt, at most 30 s. */
const backoff = (base: number, attempt: number): number => Math.random() * Math.min(30_000, base * 2 ** attempt);

function retryAfterSeconds(response: Response): number | null {
  const value = response.headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
