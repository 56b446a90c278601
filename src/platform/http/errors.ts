// The one error type the service throws on purpose: a stable code from one table, a sentence for the
// caller. The code is what a client branches on (contract §9); the sentence says what to fix and may be
// reworded. Every code, its status and its meaning: ERROR_CODES below, listed in docs/api.md.
export const ERROR_CODES = {
  // 400
  bad_request: { status: 400, meaning: 'The request cannot be processed as sent (the sentence says why)' },
  validation_failed: { status: 400, meaning: 'The body, query or path failed validation; `details` lists every problem' },
  nominee_id_required: { status: 400, meaning: 'The contact is the nominee of several people: send the code again with `nominee_id`, one of those `details` lists' },
  malformed_json: { status: 400, meaning: 'The body is not valid JSON' },
  empty_body: { status: 400, meaning: 'A JSON body was announced but none was sent' },
  content_length_mismatch: { status: 400, meaning: 'Content-Length does not match the body' },
  malformed_url: { status: 400, meaning: 'The path has an invalid percent-encoding' },
  malformed_request: { status: 400, meaning: 'The HTTP request line or a header could not be parsed; the connection is closed (`Connection: close`)' },
  org_header_missing: { status: 400, meaning: "X-Org-Id is required here (the history; a Bearer token on the bare host) and was not sent (or empty): send the organization's slug" },
  org_header_unresolved: { status: 400, meaning: "X-Org-Id does not name the addressed organization (no such organization, or another than the host's or the credential's)" },
  // 401
  api_key_required: { status: 401, meaning: 'No credentials were sent' },
  invalid_api_key: { status: 401, meaning: "The API key is not an active key of the addressed organization (on the bare host: of any); `hint` says so when it is another organization's key" },
  invalid_token: { status: 401, meaning: 'The Bearer token is unknown, expired or revoked' },
  bearer_token_required: { status: 401, meaning: 'The endpoint takes a Bearer token, and only an API key was sent' },
  invalid_credentials: { status: 401, meaning: 'Wrong email or password' },
  not_signed_in: { status: 401, meaning: 'The dashboard session cookie is missing' },
  dp_token_required: { status: 401, meaning: "The endpoint acts for a data principal and takes only their token (`Bearer dpt_…`)" },
  dp_token_other_person: { status: 401, meaning: "The data principal's token acts for someone else than the user the request names (SDK surface)" },
  incorrect_code: { status: 401, meaning: 'The one-time sign-in code is wrong, expired, used up, or was never sent' },
  // 403
  missing_scope: { status: 403, meaning: 'The API key lacks the scope the endpoint needs' },
  not_a_member: { status: 403, meaning: 'The token\'s user is not a member of the addressed organization' },
  role_forbidden: { status: 403, meaning: 'The member\'s role does not allow this action' },
  csrf_failed: { status: 403, meaning: 'The CSRF token or the request\'s origin did not match' },
  dp_token_forbidden: { status: 403, meaning: "A data principal's token was sent to an organization endpoint: it acts for one person only" },
  nominee_forbidden: { status: 403, meaning: "A nominee's token was sent to an endpoint a nominee does not reach (a nominee downloads the person's access packages and files and follows requests for them)" },
  nominee_acting_off: { status: 403, meaning: 'The organization does not let nominees act for the people who appointed them (`nominees_may_act` in the fulfilment settings)' },
  nominee_not_active: { status: 403, meaning: "The nominee's appointment is not verified (any more), was removed, or is not this person's" },
  // 404
  not_found: { status: 404, meaning: 'No such record in this organization (malformed ids and other organizations\' ids included)' },
  no_checkpoint: { status: 404, meaning: "The organization's audit log has no signed checkpoint yet (the first follows its first entry within a few seconds)" },
  route_not_found: { status: 404, meaning: 'No endpoint at this path (for API clients the dashboard\'s pages are not there)' },
  // 405
  method_not_allowed: { status: 405, meaning: 'The path does not take this method; `Allow` lists the methods it takes' },
  // 408
  request_timeout: { status: 408, meaning: 'The request did not arrive within the server\'s time limit; the connection is closed' },
  // 409, 410, 413, 414, 415
  conflict: { status: 409, meaning: 'The request conflicts with the record\'s current state' },
  entry_not_sealed: { status: 409, meaning: 'The audit entry is not in the Merkle tree yet (entries are sealed within seconds of their commit); try again' },
  idempotency_key_in_flight: { status: 409, meaning: 'A request with this Idempotency-Key is still being processed; retry it later' },
  gone: { status: 410, meaning: 'The record existed but can no longer be used' },
  payload_too_large: { status: 413, meaning: 'The body is over 256 KiB' },
  uri_too_long: { status: 414, meaning: 'The URL (or a path parameter in it) is longer than the service accepts' },
  unsupported_media_type: { status: 415, meaning: 'The body was not sent as application/json' },
  // 422
  idempotency_key_reused: { status: 422, meaning: 'The Idempotency-Key was already used with another method, path or body' },
  // 429
  rate_limited: { status: 429, meaning: 'Too many requests; `Retry-After` says when to try again' },
  too_many_login_attempts: { status: 429, meaning: 'Too many failed logins for this email or address; `Retry-After` says when to try again' },
  regeneration_limit_reached: { status: 429, meaning: 'A consent request was regenerated the most times allowed' },
  too_many_codes: { status: 429, meaning: 'Sign-in codes for this contact are sent at most 3 times per 15 minutes and once per 30 seconds; `Retry-After` says when to ask again' },
  // 431
  headers_too_large: { status: 431, meaning: 'The request line and headers are over 16 KiB; the connection is closed (`Connection: close`)' },
  // 500
  internal: { status: 500, meaning: 'Internal server error (no detail is ever given)' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly statusCode: number;
  /** What to do about it, where the sentence must stay as the specification fixes it (`Invalid API key`). */
  hint?: string;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string | string[]>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_CODES[code].status;
  }

  withHint(hint: string): this {
    this.hint = hint;
    return this;
  }
}

/** The JSON body of an error: the sentence, its stable code, the problems of a validation error, and a hint where one helps. */
export function errorBody(
  code: ErrorCode,
  error: string,
  details?: ErrorDetail[],
  hint?: string,
): { error: string; code: ErrorCode; details?: ErrorDetail[]; hint?: string } {
  const body: { error: string; code: ErrorCode; details?: ErrorDetail[]; hint?: string } = { error, code };
  if (details) body.details = details;
  if (hint) body.hint = hint;
  return body;
}

/** The exact bodies the specification fixes (original spec §5.6, contract §2). */
export const AuthErrors = {
  keyRequired: () => new AppError('api_key_required', 'API key required (X-API-Key header)'),
  invalidKey: () => new AppError('invalid_api_key', 'Invalid API key'),
  missingScope: (scope: string) => new AppError('missing_scope', `API key lacks the required scope: ${scope}`),
} as const;
