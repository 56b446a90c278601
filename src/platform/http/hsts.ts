// Strict-Transport-Security only on answers that travel over https (RFC 6797 §7.2: a host must not send
// it over plain http). "Over https" is Fastify's request.protocol: the connection's own TLS, or, behind a
// proxy named by TRUST_PROXY, its X-Forwarded-Proto; a client that is not a trusted proxy cannot claim it.
// helmet would send the header on every answer, so the plugins that use helmet turn its own off.
import type { FastifyInstance } from 'fastify';

/** helmet's default value: a year, subdomains included. */
export const HSTS_VALUE = 'max-age=31536000; includeSubDomains';

export function hstsOverHttpsOnly(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.protocol === 'https') reply.header('strict-transport-security', HSTS_VALUE);
  });
}
