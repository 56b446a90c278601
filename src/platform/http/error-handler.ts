// Turns every failure into the contract's JSON body: AppErrors and validation failures as they are,
// Fastify's own 4xx with a message that says what to fix, anything else a bare 500 (logged, never echoed).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError, ERROR_CODES, errorBody, type ErrorCode } from './errors.js';
import { validationDetails } from './validation.js';
import { installRouteIndex, isApiRequest } from './route-index.js';

const CONTEXT_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'headers',
};

const FASTIFY_ERRORS: Record<string, { code: ErrorCode; error: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', error: 'Unsupported Content-Type: send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'content_length_mismatch', error: 'Content-Length does not match the body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', error: 'Request body is larger than 256 KiB' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'empty_body', error: 'Request body is empty: send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'malformed_json', error: 'Request body is not valid JSON' },
};

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ErrorObject[]; validationContext?: string }, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      return reply.code(error.statusCode).send(errorBody(error.code, error.message, error.details, error.hint));
    }
    if (error.validation) {
      const context = CONTEXT_NAMES[error.validationContext ?? 'body'] ?? 'body';
      const details = validationDetails(error.validation, context);
      const summary = details.map((d) => `${d.field} ${d.message}`).join('; ');
      return reply.code(400).send(errorBody('validation_failed', `Invalid request ${context}: ${summary}`, details));
    }
    const known = error.code ? FASTIFY_ERRORS[error.code] : undefined;
    if (known) return reply.code(ERROR_CODES[known.code].status).send(errorBody(known.code, known.error));
    if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
      return reply.code(400).send(errorBody('malformed_json', 'Request body is not valid JSON'));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.info({ err: loggableError(error) }, 'client error');
      return reply.code(status).send(errorBody('bad_request', error.message || 'Bad request'));
    }
    request.log.error({ err: loggableError(error) }, 'unhandled error');
    return reply.code(500).send(errorBody('internal', 'Internal server error'));
  });

  // Installed first, so it sees every route: a path known under other methods is a 405 with Allow.
  const routes = installRouteIndex(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.methodsAt(path, { api: isApiRequest(request) });
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return reply
        .code(405)
        .header('Allow', allowed.join(', '))
        .send(errorBody('method_not_allowed', `${request.method} is not allowed on ${path.slice(0, 200)}: it takes ${allowed.join(', ')}`));
    }
    return reply.code(404).send(errorBody('route_not_found', `No such endpoint: ${request.method} ${path.slice(0, 200)}`));
  });
}

/**
 * Fastify's own answers to requests it cannot route (a malformed percent-encoding in the path), given
 * the contract's body and X-Request-Id: passed as the `frameworkErrors` option.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send(errorBody('malformed_url', 'Malformed URL: the path has an invalid percent-encoding'));
    return;
  }
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
  reply.code(status).send(errorBody('bad_request', 'Bad request'));
}

/**
 * What the log keeps of an error: its kind, code and where it was thrown. Never the database driver's
 * extra fields (a failing statement's parameters: emails, phone numbers), and quoted values in the
 * message (PostgreSQL quotes the refused input) are blanked.
 */
export function loggableError(error: unknown): { type: string; message: string; code?: string; stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: 'non-error thrown' };
  const blank = (s: string) => s.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/'(?:[^'\\]|\\.)*'/g, "'…'");
  const message = blank(error.message);
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '').split('\n').slice(1).join('\n');
  return { type: error.name, message, ...(typeof code === 'string' ? { code } : {}), ...(frames ? { stack: frames } : {}) };
}
