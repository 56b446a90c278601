// Turns every failure into the contract's JSON body: AppErrors and validation failures as they are,
// Fastify's own 4xx with a message that says what to fix, anything else a bare 500 (logged, never echoed).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
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

/** What every answer carries (app.ts's onSend sets them on routed answers; these never reach onSend). */
const ERROR_ANSWER_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;

/**
 * Fastify's own answers to requests it cannot route (a malformed percent-encoding in the path, a path
 * parameter over the router's limit), given the contract's body, X-Request-Id and the headers of every
 * answer: passed as the `frameworkErrors` option. onSend hooks do not run for these.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id).headers(ERROR_ANSWER_HEADERS);
  if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send(errorBody('malformed_url', 'Malformed URL: the path has an invalid percent-encoding'));
    return;
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send(errorBody('uri_too_long', 'URI too long: a path parameter is longer than any id the service accepts'));
    return;
  }
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
  reply.code(status).send(errorBody('bad_request', 'Bad request'));
}

/** Node's HTTP parser's failures, by its error code: the answer's status and the contract's body. */
function clientErrorAnswer(code: string | undefined): { status: number; reason: string; body: ReturnType<typeof errorBody> } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'Request Timeout', body: errorBody('request_timeout', 'Request timeout: the request did not arrive in time') };
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, reason: 'Request Header Fields Too Large', body: errorBody('headers_too_large', 'Request headers too large: the request line and headers are over 16 KiB') };
  }
  if (code === 'HPE_URI_TOO_LONG') {
    return { status: 414, reason: 'URI Too Long', body: errorBody('uri_too_long', 'URI too long') };
  }
  return { status: 400, reason: 'Bad Request', body: errorBody('malformed_request', 'Malformed HTTP request: the request line or headers could not be parsed') };
}

/**
 * Answers a request Node's HTTP parser refused (431, a malformed request line or header: 400, a timeout:
 * 408), passed as Fastify's `clientErrorHandler`, which writes the socket itself. The answer says
 * `Connection: close` (the parser cannot go on after an error, so the socket closes; without it a
 * keep-alive client sent its next request into a closing socket and got ECONNRESET: issue 34) and carries
 * the headers and JSON body of every other error. The socket is ended, not destroyed at once: destroying
 * it with unread bytes of the bad request in the kernel's buffer sends a reset that can overtake the
 * answer; it is destroyed a second later if the client has not closed it.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, reason, body } = clientErrorAnswer(err.code);
  this.log.debug({ code: err.code }, 'client error');
  // Node's own test (lib/_http_server.js socketOnError): nothing of an answer to this request written yet.
  // Not bytesWritten, which counts the earlier answers of a kept-alive connection.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(json)}\r\n` +
        'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
        json,
    );
    socket.setTimeout(0);
    setTimeout(() => socket.destroy(), 1000).unref();
  } else {
    socket.destroy();
  }
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
