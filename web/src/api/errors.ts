// The API's error body ({error, details?}) as an exception the pages can show: the sentence, and each
// problem next to its field.

export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldProblem[] = [],
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The problems reported for one field (or a path under it: `purposes.0.name` belongs to `purposes`). */
  problemsFor(field: string): string[] {
    return this.details.filter((d) => d.field === field || d.field.startsWith(`${field}.`)).map((d) => d.message);
  }
}

/** An ApiError from a failed answer's status, parsed body (whatever it is) and headers. */
export function apiError(response: Response, body: unknown): ApiError {
  const b = (typeof body === 'object' ? body : null) as { error?: unknown; details?: unknown } | null;
  const message = typeof b?.error === 'string' ? b.error : `The server answered ${response.status} ${response.statusText}`.trim();
  const details = Array.isArray(b?.details) ? (b.details as FieldProblem[]) : [];
  const retry = Number(response.headers.get('retry-after'));
  return new ApiError(response.status, message, details, Number.isFinite(retry) && retry > 0 ? retry : null);
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
  return new ApiError(0, 'The server could not be reached. Check your connection and try again.');
}
