// X-Request-Id: the caller's own when it is 1-128 characters of A-Za-z0-9._-, otherwise a fresh UUID.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

const ACCEPTABLE = /^[A-Za-z0-9._-]{1,128}$/;

export function requestIdFrom(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID();
}

export function installRequestId(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('X-Request-Id', request.id);
    done(null, payload);
  });
}
