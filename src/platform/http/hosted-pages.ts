// What the person's server-rendered pages (the consent page and the Rights Center) share in their plugin
// scope: a strict Content Security Policy with no script at all (only the page's own stylesheet, by
// hash; forms post to the same origin; never framed), no referrer, urlencoded form bodies up to 16 KiB,
// answers that are never cached (they carry a person's data and one-time form nonces), and HSTS only
// over https.
import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import formbody from '@fastify/formbody';
import { hstsOverHttpsOnly } from './hsts.js';

export async function registerHostedPages(app: FastifyInstance, options: { styleHash: string }): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: [options.styleHash],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
  });
  hstsOverHttpsOnly(app);
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
}
