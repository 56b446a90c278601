// The API's error body ({error, code, details?}) as an exception the pages can show: the sentence, the
// stable code, and each problem next to its field. It is the client package's AssentError (one class for
// the dashboard and every other client: status, code, message, details, X-Request-Id, Retry-After);
// ApiError only adds the shorter constructor the pages use for errors they word themselves.
import { AssentError, type FieldProblem } from '../../../clients/typescript/src/index';

export type { FieldProblem };

export class ApiError extends AssentError {
  constructor(
    status: number,
    message: string,
    details: FieldProblem[] = [],
    retryAfterSeconds: number | null = null,
    code: AssentError['code'] = 'unexpected_response',
    requestId: string | null = null,
  ) {
    super(status, code, message, details, requestId, retryAfterSeconds);
  }

  /** The same error as an ApiError (what the pages hold), whatever raised it. */
  static of(e: unknown): ApiError {
    if (e instanceof ApiError) return e;
    if (e instanceof AssentError) return new ApiError(e.status, e.message, e.details, e.retryAfterSeconds, e.code, e.requestId);
    return new ApiError(0, e instanceof Error ? e.message : String(e));
  }
}

/** An ApiError from a failed answer's status, parsed body (whatever it is) and headers. */
export function apiError(response: Response, body: unknown): ApiError {
  return ApiError.of(AssentError.from(response, body));
}

/** An ApiError from a failed response whose body has not been read (a proxy's HTML page, nothing at all). */
export async function apiErrorFrom(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: keep the status alone
  }
  return apiError(response, body);
}

/** A failure to reach the server at all. */
export function networkError(): ApiError {
  return new ApiError(0, 'The server could not be reached. Check your connection and try again.', [], null, 'network_error');
}
