// Every route declares who may call it (route config `access`); one onRequest hook enforces it in the
// contract's order, before parsing and validation: tenant from Host -> X-Org-Id (where required) ->
// credentials present (401) -> valid for this tenant (401, or 403 for a non-member) -> scope or role (403).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, AuthErrors } from '../http/errors.js';
import type { ApiKeyVerifier, Scope } from './api-key-verifier.js';
import type { BearerVerifier, Role } from './bearer-verifier.js';
import { slugFromHost, type Organization, type OrganizationDirectory } from './tenant-host.js';

export type { Scope, Role };

export type RouteAccess =
  | 'public'
  | {
      /** API key scope the route takes (`admin` always suffices); absent: no API key is accepted. */
      apiKey?: Scope;
      /** Member roles whose Bearer token the route takes; absent: no Bearer token is accepted. */
      bearer?: readonly Role[];
      /** The consent-link history also requires X-Org-Id naming the addressed organization. */
      orgHeader?: boolean;
    };

export type Actor =
  | { type: 'api_key'; id: string; scopes: Scope[] }
  | { type: 'user'; id: string; role: Role; sessionId: string }
  /** A data principal on the hosted consent page, proven by a one-time code; `id` is the link's event id. */
  | { type: 'data_principal'; id: string };

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
  bearer: BearerVerifier;
}

export const AccessErrors = {
  invalidToken: () => new AppError('invalid_token', 'Invalid or expired token'),
  notMember: () => new AppError('not_a_member', 'User not a member of this tenant'),
  roleTooLow: () => new AppError('role_forbidden', 'Your role does not allow this action'),
  bearerOnly: () => new AppError('bearer_token_required', 'This endpoint takes a Bearer token (Authorization: Bearer <token>), not an API key'),
} as const;

/** The token of an `Authorization: Bearer <token>` header; anything else counts as no credentials. */
export function bearerToken(request: FastifyRequest): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(headerValue(request, 'authorization'));
  return match ? match[1]! : null;
}

/** A tenant route's context; throws if the route was declared public (a programming error). */
export function tenantOf(request: FastifyRequest): TenantContext {
  if (!request.tenant) throw new Error(`route ${request.routeOptions.url} has no tenant context`);
  return request.tenant;
}

export function hostOf(request: FastifyRequest, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = request.headers['x-forwarded-host'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return request.headers.host;
}

/** The organization a public route's Host names (routes with an access rule get it in `request.tenant`). */
export async function organizationOf(
  request: FastifyRequest,
  deps: Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>,
): Promise<Organization | null> {
  const slug = slugFromHost(hostOf(request, deps.trustProxy), deps.baseDomain);
  return slug ? deps.organizations.bySlug(slug) : null;
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
      throw new AppError('org_header_unresolved', 'X-Org-Id could not be resolved');
    }

    const key = headerValue(request, 'x-api-key');
    const token = access.bearer ? bearerToken(request) : null;
    // When both are sent, the API key is used.
    if (key && access.apiKey) {
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
      return;
    }
    if (token && access.bearer) {
      const verified = await deps.bearer.verifyAccess(token);
      if (!verified) throw AccessErrors.invalidToken();
      // A valid token on an unknown organization's host reveals nothing: it is simply not a member.
      const role = org ? await deps.bearer.roleIn(org.id, verified.userId) : null;
      if (!org || !role) throw AccessErrors.notMember();
      if (!access.bearer.includes(role)) throw AccessErrors.roleTooLow();
      request.tenant = {
        orgId: org.id,
        slug: org.slug,
        orgName: org.name,
        actor: { type: 'user', id: verified.userId, role, sessionId: verified.sessionId },
        requestId: request.id,
      };
      return;
    }
    if (key) throw AccessErrors.bearerOnly();
    throw AuthErrors.keyRequired();
  });
  return table;
}
