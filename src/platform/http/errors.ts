// The one error type the service throws on purpose: a code from a fixed table, a message for the caller.
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string | string[]>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_STATUS[code];
  }
}

/** The exact bodies the specification fixes (original spec §5.6, contract §2). */
export const AuthErrors = {
  keyRequired: () => new AppError('unauthorized', 'API key required (X-API-Key header)'),
  invalidKey: () => new AppError('unauthorized', 'Invalid API key'),
  missingScope: (scope: string) => new AppError('forbidden', `API key lacks the required scope: ${scope}`),
} as const;
