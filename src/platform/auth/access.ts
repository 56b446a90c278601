// Every route declares who may call it (route config `access`); one onRequest hook enforces it in the
// contract's order, before parsing and validation: tenant from Host -> X-Org-Id (where required) ->
// credentials present (401) -> valid for this tenant (401) -> scope (403).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, AuthErrors } from '../http/errors.js';
import type { ApiKeyVerifier, Scope } from './api-key-verifier.js';
import { slugFromHost, type Organization, type OrganizationDirectory } from './tenant-host.js';

export type { Scope };

export type RouteAccess =
  | 'public'
  | {
      /** API key scope the route needs; `admin` always suffices. */
      apiKey: Scope;
      /** The consent-link history also requires X-Org-Id naming the addressed organization. */
      orgHeader?: boolean;
    };

export type Actor = { type: 'api_key'; id: string; scopes: Scope[] };

/** Who is calling, for which organization: the first argument of every service function. */
export interface TenantContext {
  orgId: string;
  slug: string;
  orgName: string;
  actor: Actor;
  requestId: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    tenant: TenantContext | null;
  }
}

export interface AccessDeps {
  baseDomain: string;
  trustProxy: boolean;
  organizations: OrganizationDirectory;
  apiKeys: ApiKeyVerifier;
}

/** A tenant route's context; throws if the route was declared public (a programming error). */
export function tenantOf(request: FastifyRequest): TenantContext {
  if (!request.tenant) throw new Error(`route ${request.routeOptions.url} has no tenant context`);
  return request.tenant;
}

function hostOf(request: FastifyRequest, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = request.headers['x-forwarded-host'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return request.headers.host;
}

function headerValue(request: FastifyRequest, name: string): string {
  const v = request.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? '';
}

export interface RouteAccessEntry {
  method: string;
  url: string;
  access: RouteAccess;
}

/** Installs the access hook; returns the access table of every route registered after it (tests, docs). */
export function installAccessControl(app: FastifyInstance, deps: AccessDeps): RouteAccessEntry[] {
  app.decorateRequest('tenant', null);
  const table: RouteAccessEntry[] = [];

  // Fail closed: a route that does not say who may call it is refused at start-up.
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (access === undefined) {
      throw new Error(`route ${route.method} ${route.url} declares no access rule (config.access)`);
    }
    for (const method of [route.method].flat()) if (method !== 'HEAD') table.push({ method, url: route.url, access });
  });

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === 'public') return;

    const slug = slugFromHost(hostOf(request, deps.trustProxy), deps.baseDomain);
    const org: Organization | null = slug ? await deps.organizations.bySlug(slug) : null;

    // An unknown host is remembered and answered below exactly like a wrong key, never with a 400.
    if (org && access.orgHeader && headerValue(request, 'x-org-id') !== org.slug) {
      throw new AppError('bad_request', 'X-Org-Id could not be resolved');
    }

    const key = headerValue(request, 'x-api-key');
    if (!key) throw AuthErrors.keyRequired();
    if (!org) throw AuthErrors.invalidKey();
    const verified = await deps.apiKeys.verify(org.id, key);
    if (!verified) throw AuthErrors.invalidKey();
    if (!verified.scopes.includes('admin') && !verified.scopes.includes(access.apiKey)) {
      throw AuthErrors.missingScope(access.apiKey);
    }
    request.tenant = {
      orgId: org.id,
      slug: org.slug,
      orgName: org.name,
      actor: { type: 'api_key', id: verified.id, scopes: verified.scopes },
      requestId: request.id,
    };
  });
  return table;
}
