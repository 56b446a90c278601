// Every route declares who may call it (route config `access`); one onRequest hook enforces it in the
// contract's order (§2), before parsing and validation: tenant from Host -> X-Org-Id where the route
// requires it (the history: 400, on a known organization's host only, so an unknown host never answers
// 400) -> credentials present (401) -> valid for this tenant (401, or 403 for a non-member) -> scope or
// role (403). On the bare host X-Org-Id, when sent, is checked once the credential has selected the
// organization.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, AuthErrors } from '../http/errors.js';
import type { ApiKeyVerifier, Scope, VerifiedKey } from './api-key-verifier.js';
import type { BearerVerifier, Role } from './bearer-verifier.js';
import type { DpTokenVerifier } from './dp-token-verifier.js';
import { DP_TOKEN_PREFIX } from '../crypto/opaque-tokens.js';
import { addressOf, type Organization, type OrganizationDirectory } from './tenant-host.js';

export type { Scope, Role };

export type RouteAccess =
  | 'public'
  | {
      /** API key scope the route takes (`admin` always suffices; `any`: every key of the organization); absent: no API key is accepted. */
      apiKey?: Scope | 'any';
      /** Member roles whose Bearer token the route takes; absent: no Bearer token is accepted. */
      bearer?: readonly Role[];
      /** The consent-link history also requires X-Org-Id naming the addressed organization. */
      orgHeader?: boolean;
      /**
       * The route takes a data principal's token (`Bearer dpt_…`) and acts for that one person. Every
       * other tenant route refuses such a token with 403, whatever else it takes.
       */
      dataPrincipal?: boolean;
      /**
       * With dataPrincipal: a nominee's token (a `dpt_` token earned by a nominee whose appointment is
       * verified, where the organization allows it) is taken too, and acts for the appointing person. A
       * nominee's token elsewhere: 403 `nominee_forbidden`.
       */
      nominee?: boolean;
    };

export type Actor =
  | { type: 'api_key'; id: string; scopes: Scope[] }
  | { type: 'user'; id: string; role: Role; sessionId: string }
  | DataPrincipalActor
  | NomineeActor;

/**
 * A data principal acting for themselves: `dpId` is the organization's identifier for them. With a DP
 * token `id` is their internal id (data_principals.id); on the hosted consent page, proven by a one-time
 * code, it is the link's event id.
 */
export interface DataPrincipalActor {
  type: 'data_principal';
  id: string;
  dpId: string;
}

/**
 * A nominee acting for the data principal who appointed them (issue 33): `id` is the appointment
 * (nominees.id), `dpId` the person they act for. Every act records the nominee as the actor.
 */
export interface NomineeActor {
  type: 'nominee';
  id: string;
  dpId: string;
}

/** Who is calling, for which organization: the first argument of every service function. */
export interface TenantContext {
  orgId: string;
  slug: string;
  orgName: string;
  actor: Actor;
  requestId: string;
}

/** A data principal acting for themselves in one organization: the first argument of their services. */
export interface PrincipalContext extends TenantContext {
  actor: DataPrincipalActor;
}

/**
 * The person, or their nominee acting for them (issue 33): the first argument of the services a nominee
 * may reach (read the person's profile, summary and packages; file and follow their requests). Both reach
 * that one person's records only (`actor.dpId`); a service that takes a PrincipalContext is the person's
 * alone, so a nominee cannot be handed to it.
 */
export interface ActingContext extends TenantContext {
  actor: DataPrincipalActor | NomineeActor;
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
  dpTokens: DpTokenVerifier;
  /**
   * Whether a nominee may act now for the person, under this appointment (the nominees service's rule:
   * the organization allows it, the appointment is verified and is this person's); throws the 403 to answer.
   */
  nomineeActing: (orgId: string, nomineeId: string, dpId: string) => Promise<void>;
}

export const AccessErrors = {
  invalidToken: () => new AppError('invalid_token', 'Invalid or expired token'),
  notMember: () => new AppError('not_a_member', 'User not a member of this tenant'),
  roleTooLow: () => new AppError('role_forbidden', 'Your role does not allow this action'),
  bearerOnly: () => new AppError('bearer_token_required', 'This endpoint takes a Bearer token (Authorization: Bearer <token>), not an API key'),
  principalOnly: () => new AppError('dp_token_forbidden', 'This token acts for one data principal only'),
  principalTokenRequired: () => new AppError('dp_token_required', "This endpoint takes a data principal's token (Authorization: Bearer dpt_…)"),
  nomineeForbidden: () => new AppError('nominee_forbidden', "A nominee's token does not reach this endpoint: a nominee downloads the person's access packages and files and follows requests for them"),
} as const;

/** Said with `Invalid API key` when the key is active in another organization than the host's. */
export const WRONG_HOST_HINT =
  "This key belongs to another organization than this host's. Call its own organization's host, or the base host (no organization subdomain), where a key selects its own organization.";

/** The token of an `Authorization: Bearer <token>` header; anything else counts as no credentials. */
export function bearerToken(request: FastifyRequest): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(headerValue(request, 'authorization'));
  return match ? match[1]! : null;
}

/** A data principal route's context; throws if the route admitted another actor (a programming error). */
export function principalOf(request: FastifyRequest): PrincipalContext {
  const ctx = tenantOf(request);
  if (ctx.actor.type !== 'data_principal') throw new Error(`route ${request.routeOptions.url} reached its handler without a data principal`);
  return ctx as PrincipalContext;
}

/** The context of a route that takes the person's token or their nominee's (`nominee: true`). */
export function actingOf(request: FastifyRequest): ActingContext {
  const ctx = tenantOf(request);
  if (ctx.actor.type !== 'data_principal' && ctx.actor.type !== 'nominee') throw new Error(`route ${request.routeOptions.url} reached its handler without a data principal or their nominee`);
  return ctx as ActingContext;
}

/** A tenant route's context; throws if the route was declared public (a programming error). */
export function tenantOf(request: FastifyRequest): TenantContext {
  if (!request.tenant) throw new Error(`route ${request.routeOptions.url} has no tenant context`);
  return request.tenant;
}

/**
 * The host the client asked for. Behind trusted proxies (TRUST_PROXY), Fastify reads X-Forwarded-Host
 * only when the connection comes from a trusted proxy, and takes its last entry (the one our proxy set).
 */
export function hostOf(request: FastifyRequest, trustProxy: boolean): string | undefined {
  if (trustProxy) return request.host;
  return request.headers.host;
}

/**
 * The organization a public route's Host names (routes with an access rule get it in `request.tenant`).
 * `orgHeaderOnBareHost`: on the bare host, the organization X-Org-Id names (the data principal's code
 * sign-in, which a browser or app calls before it holds any credential). Pages never take it: a page
 * lives on its organization's host (host-only cookies, links built on that host).
 */
export async function organizationOf(
  request: FastifyRequest,
  deps: Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>,
  options: { orgHeaderOnBareHost?: boolean } = {},
): Promise<Organization | null> {
  const address = addressOf(hostOf(request, deps.trustProxy), deps.baseDomain);
  if (address.kind === 'organization') return address.slug ? deps.organizations.bySlug(address.slug) : null;
  const named = options.orgHeaderOnBareHost ? headerValue(request, 'x-org-id').toLowerCase() : '';
  return /^[a-z0-9-]{1,63}$/.test(named) ? deps.organizations.bySlug(named) : null;
}

function headerValue(request: FastifyRequest, name: string): string {
  const v = request.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? '';
}

export interface RouteAccessEntry {
  method: string;
  url: string;
  access: RouteAccess;
  /** The route's declared schema (params, querystring, headers, body): the hostile-input suites walk it. */
  schema?: Record<string, unknown>;
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
    for (const method of [route.method].flat()) if (method !== 'HEAD') table.push({ method, url: route.url, access, schema: route.schema as Record<string, unknown> | undefined });
  });

  // Callback style for the public routes, which wait for nothing (app.ts says why).
  app.addHook('onRequest', (request, _reply, done) => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === 'public') return done();
    authenticate(request, access).then(() => done(), done);
  });

  async function authenticate(request: FastifyRequest, access: Exclude<RouteAccess, 'public'>): Promise<void> {

    // An organization's host names the organization; on the bare host (the base domain, an IP address,
    // any other name) the credential selects it: a key or a data principal's token its own, a member's
    // token the one X-Org-Id names (contract §9).
    const address = addressOf(hostOf(request, deps.trustProxy), deps.baseDomain);
    const bare = address.kind === 'bare';
    const hostOrg: Organization | null = address.kind === 'organization' && address.slug ? await deps.organizations.bySlug(address.slug) : null;

    // An unknown host is remembered and answered below exactly like a wrong key, never with a 400.
    const orgHeader = headerValue(request, 'x-org-id');
    const checkOrgHeader = (org: Organization) => {
      // On an organization's host only the history needs it; on the bare host, when sent, it must name
      // the organization the credential selected (a client that names one organization never acts in another).
      if (!(access.orgHeader || (bare && orgHeader !== '')) || orgHeader === org.slug) return;
      // Missing and wrong are told apart (issue 20): what to fix differs.
      if (orgHeader === '') throw new AppError('org_header_missing', "X-Org-Id could not be resolved: the header is missing (send the organization's slug)");
      if (bare) throw new AppError('org_header_unresolved', "X-Org-Id could not be resolved: it does not name the organization of this credential (a key or a data principal's token selects its own)");
      throw new AppError('org_header_unresolved', 'X-Org-Id could not be resolved: it does not name the organization of this host');
    };
    // Contract §2: on an organization's host the history's X-Org-Id comes before the credentials, so a
    // missing or foreign one is a 400 with no, bad or good credentials alike (issue 30; issue 21 had moved
    // it after them). What this tells an unauthenticated caller, that the host names an organization, its
    // consent page and Rights Center tell anyone already (docs/api.md, "Consent link history").
    if (access.orgHeader && hostOrg) checkOrgHeader(hostOrg);
    const setTenant = (org: Organization, actor: Actor) => {
      request.tenant = { orgId: org.id, slug: org.slug, orgName: org.name, actor, requestId: request.id };
    };

    const key = headerValue(request, 'x-api-key');
    const sent = bearerToken(request);
    // A data principal's token is told apart by its prefix, on every tenant route.
    const principalToken = sent?.startsWith(DP_TOKEN_PREFIX) ? sent : null;
    const token = access.bearer && !principalToken ? sent : null;
    // When both are sent, the API key is used.
    if (key && access.apiKey) {
      let org = hostOrg;
      let verified: VerifiedKey | null = null;
      if (bare) {
        verified = await deps.apiKeys.resolve(key);
        org = verified ? await deps.organizations.byId(verified.orgId) : null;
      } else if (org) verified = await deps.apiKeys.verify(org.id, key);
      if (!org || !verified) {
        // The sentence is the specification's; a key of another organization is told where it works.
        if (!bare && (await deps.apiKeys.resolve(key))) throw AuthErrors.invalidKey().withHint(WRONG_HOST_HINT);
        throw AuthErrors.invalidKey();
      }
      checkOrgHeader(org);
      if (access.apiKey !== 'any' && !verified.scopes.includes('admin') && !verified.scopes.includes(access.apiKey)) {
        throw AuthErrors.missingScope(access.apiKey);
      }
      setTenant(org, { type: 'api_key', id: verified.id, scopes: verified.scopes });
      return;
    }
    if (principalToken) {
      let org = hostOrg;
      if (bare) {
        const orgId = await deps.dpTokens.organizationOf(principalToken);
        org = orgId ? await deps.organizations.byId(orgId) : null;
      }
      const verified = org ? await deps.dpTokens.verify(org.id, principalToken) : null;
      if (!org || !verified) throw AccessErrors.invalidToken();
      if (!access.dataPrincipal) throw AccessErrors.principalOnly();
      if (verified.nomineeId !== null && !access.nominee) throw AccessErrors.nomineeForbidden();
      checkOrgHeader(org);
      if (verified.nomineeId !== null) {
        // Checked on every request: an appointment the person or the organization changed, or the
        // organization's choice turned off, stops the token at once.
        await deps.nomineeActing(org.id, verified.nomineeId, verified.dpId);
        setTenant(org, { type: 'nominee', id: verified.nomineeId, dpId: verified.dpId });
        return;
      }
      setTenant(org, { type: 'data_principal', id: verified.dataPrincipalId, dpId: verified.dpId });
      return;
    }
    if (token && access.bearer) {
      const verified = await deps.bearer.verifyAccess(token);
      if (!verified) throw AccessErrors.invalidToken();
      let org = hostOrg;
      if (bare) {
        // A member may belong to several organizations: X-Org-Id says which one (missing, unknown and
        // not a member are three different things to fix; only a signed-in user is told them).
        if (orgHeader === '') {
          throw new AppError(
            'org_header_missing',
            "X-Org-Id could not be resolved: the header is missing (with a Bearer token on the base host, send the organization's slug, or call the organization's own host)",
          );
        }
        org = await deps.organizations.bySlug(orgHeader);
        if (!org) throw new AppError('org_header_unresolved', 'X-Org-Id could not be resolved: no organization has this slug');
      }
      // A valid token on an unknown organization's host reveals nothing: it is simply not a member.
      const role = org ? await deps.bearer.roleIn(org.id, verified.userId) : null;
      if (!org || !role) throw AccessErrors.notMember();
      if (!bare) checkOrgHeader(org);
      if (!access.bearer.includes(role)) throw AccessErrors.roleTooLow();
      setTenant(org, { type: 'user', id: verified.userId, role, sessionId: verified.sessionId });
      return;
    }
    // A member's token (or anything else) where only a data principal's token is taken.
    if (sent && access.dataPrincipal && !access.bearer) throw AccessErrors.principalTokenRequired();
    if (key) throw AccessErrors.bearerOnly();
    throw AuthErrors.keyRequired();
  }
  return table;
}
