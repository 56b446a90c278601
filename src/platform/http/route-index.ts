// Which methods a path takes, for the answers Fastify's router cannot give: a known path asked with a
// method it does not take is 405 with `Allow` (the router only says "no route"), and a request from an
// API client (credentials, or JSON preferred over HTML) never gets the dashboard's pages: for it those
// paths do not exist, so an unknown API path is the JSON 404 rather than the dashboard's HTML.
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A page of the browser app (HTML): not there for API clients. */
    page?: boolean;
  }
  interface FastifyInstance {
    /** Every route's method and URL pattern, as registered (HEAD included): tests walk it. */
    routeIndex: RouteIndex;
  }
}

export interface IndexedRoute {
  method: string;
  url: string;
  page: boolean;
  pattern: RegExp;
}

export interface RouteIndex {
  routes: IndexedRoute[];
  /** The methods routed at this path (no query), in a stable order; pages left out when `api`. */
  methodsAt(path: string, options: { api: boolean }): string[];
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A Fastify URL pattern as a regular expression: `:param` is one segment, `*` the rest of the path. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/** Collects every route registered after it (install before any route). */
export function installRouteIndex(app: FastifyInstance): RouteIndex {
  const routes: IndexedRoute[] = [];
  app.addHook('onRoute', (route) => {
    // A plugin's '/' under a prefix is served at both `/prefix` and `/prefix/` (prefixTrailingSlash
    // 'both', the default), but the hook runs once, for the first.
    const { prefix, routePath, prefixTrailingSlash } = route as typeof route & { prefix?: string; routePath?: string; prefixTrailingSlash?: string };
    const both = prefix && (routePath === '/' || routePath === '') && (prefixTrailingSlash ?? 'both') === 'both';
    for (const url of both ? [prefix, `${prefix}/`] : [route.url]) {
      for (const method of [route.method].flat()) {
        routes.push({ method: method.toUpperCase(), url, page: route.config?.page === true, pattern: patternOf(url) });
      }
    }
  });
  const index: RouteIndex = {
    routes,
    methodsAt(path, { api }) {
      const methods = new Set(routes.filter((r) => (!api || !r.page) && r.pattern.test(path)).map((r) => r.method));
      return [...methods].sort((a, b) => (METHOD_ORDER.indexOf(a) + 1 || 99) - (METHOD_ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));
    },
  };
  app.decorate('routeIndex', index);
  return index;
}

/** The quality the Accept header gives a media type (its most specific matching range; absent: 1). */
function quality(accept: string, type: string): number {
  const [major] = type.split('/');
  let best = -1;
  let q = 0;
  for (const item of accept.split(',')) {
    const [range, ...params] = item.trim().toLowerCase().split(';');
    const specificity = range === type ? 3 : range === `${major}/*` ? 2 : range === '*/*' ? 1 : 0;
    if (specificity <= best || specificity === 0) continue;
    best = specificity;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    q = qParam ? Number(qParam.slice(2)) || 0 : 1;
  }
  return best < 0 ? 0 : q;
}

/**
 * Is this an API client's request? It sends an API key or an Authorization header, or its Accept
 * header prefers JSON to HTML (`Accept: application/json`). A browser (text/html first) and a bare
 * `curl` (no Accept header, or any type) are not.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  if (request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined) return true;
  const accept = request.headers.accept;
  if (!accept) return false;
  return quality(accept, 'application/json') > quality(accept, 'text/html');
}
