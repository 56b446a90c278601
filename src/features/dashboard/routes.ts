// The dashboard's files: the built single-page app (web/dist) at the organization's host. Every page path
// answers index.html (the app routes in the browser); /_app/ holds the hashed, immutable bundles. Its own
// encapsulated plugin, so its security headers (a strict CSP) stay on its responses.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';

/** Every path the app routes in the browser (web/src/routes.ts has the same list; a test compares them). */
export const DASHBOARD_PAGES = [
  '/',
  '/login',
  '/grievances',
  '/grievances/:ticket_id',
  '/nominees',
  '/consent-links',
  '/consent-links/new',
  '/assets',
  '/assets/:asset_id',
  '/collection-points/:point_id',
  '/settings/api-keys',
  '/settings/members',
  '/settings/audit-log',
] as const;

export const ASSET_PREFIX = '/_app/';

export interface DashboardDeps {
  /** web/dist: index.html and _app/. */
  webDir: string;
}

const routeOptions = { config: { access: 'public' as const }, schema: { hide: true } };

export async function dashboardRoutes(app: FastifyInstance, { webDir }: DashboardDeps): Promise<void> {
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
  });

  if (!built) {
    app.log.warn({ webDir }, 'the dashboard is not built (no web/dist/index.html): run `npm run build`; the API is unaffected');
    const notBuilt = (_req: unknown, reply: FastifyReply) =>
      reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build` in the Assent checkout, then restart.\n');
    for (const path of DASHBOARD_PAGES) app.get(path, routeOptions, notBuilt);
    return;
  }

  // serve: false: the files are answered by the route below, which declares its access like every route.
  await app.register(fastifyStatic, { root: webDir, serve: false, preCompressed: true, dotfiles: 'deny', index: false });

  const page = (_req: unknown, reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html', { maxAge: 0, immutable: false, cacheControl: false });
  for (const path of DASHBOARD_PAGES) app.get(path, routeOptions, page);

  // Content-hashed names: cached for a year, never revalidated.
  app.get<{ Params: { '*': string } }>(`${ASSET_PREFIX}*`, routeOptions, (req, reply) =>
    reply.sendFile(`${ASSET_PREFIX.slice(1)}${req.params['*']}`, { maxAge: 365 * 24 * 3600 * 1000, immutable: true }),
  );
}
