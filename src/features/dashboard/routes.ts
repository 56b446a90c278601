// The dashboard's files: the built single-page app (web/dist) at the organization's host. Every page path
// answers index.html (the app routes in the browser); /_app/ holds the hashed, immutable bundles. Its own
// encapsulated plugin, so its security headers (a strict CSP) stay on its responses.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import { DASHBOARD_PAGES } from './pages.js';
import { isApiRequest } from '../../platform/http/route-index.js';
import { hstsOverHttpsOnly } from '../../platform/http/hsts.js';

export const ASSET_PREFIX = '/_app/';

export interface DashboardDeps {
  /** web/dist: index.html and _app/. */
  webDir: string;
  /** Named in the page, so the app knows the bare domain (organization picker) from an organization's host. */
  baseDomain: string;
}

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

const routeOptions = { config: { access: 'public' as const }, schema: { hide: true } };
/** The app's pages: not there for API clients (credentials, or JSON preferred), who get the JSON 404. */
const pageOptions = { config: { access: 'public' as const, page: true }, schema: { hide: true } };

export async function dashboardRoutes(app: FastifyInstance, { webDir, baseDomain }: DashboardDeps): Promise<void> {
  const built = existsSync(join(webDir, 'index.html'));

  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: false,
  });
  hstsOverHttpsOnly(app);

  if (!built) {
    app.log.warn({ webDir }, 'the dashboard is not built (no web/dist/index.html): run `npm run build`; the API is unaffected');
    const notBuilt = (req: FastifyRequest, reply: FastifyReply) =>
      isApiRequest(req) ? reply.callNotFound() : reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build` in the Assent checkout, then restart.\n');
    for (const path of DASHBOARD_PAGES) app.get(path, pageOptions, notBuilt);
    return;
  }

  // serve: false: the files are answered by the route below, which declares its access like every route.
  await app.register(fastifyStatic, { root: webDir, serve: false, preCompressed: true, dotfiles: 'deny', index: false });

  // Small, read once; names the bundles of this build, so it is revalidated on every load.
  const index = readFileSync(join(webDir, 'index.html'), 'utf8').replace(
    '</head>',
    `  <meta name="assent-base-domain" content="${escapeAttribute(baseDomain)}" />\n  </head>`,
  );
  const page = (req: FastifyRequest, reply: FastifyReply) =>
    isApiRequest(req) ? reply.callNotFound() : reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
  for (const path of DASHBOARD_PAGES) app.get(path, pageOptions, page);

  // Content-hashed names: cached for a year, never revalidated.
  app.get<{ Params: { '*': string } }>(`${ASSET_PREFIX}*`, routeOptions, (req, reply) =>
    reply.sendFile(`${ASSET_PREFIX.slice(1)}${req.params['*']}`, { maxAge: 365 * 24 * 3600 * 1000, immutable: true }),
  );
}
