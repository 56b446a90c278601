// Sign-in for the dashboard, on the organization's own host: the refresh token lives in an HttpOnly,
// SameSite=Strict cookie scoped to /auth/browser (page scripts never see it); the access token is
// returned in the body and kept in memory by the page. Refresh and sign-out need `X-CSRF-Token`: an
// HMAC of the refresh token, readable by the page from the `assent_csrf` cookie (signed double submit).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AccessErrors, hostOf, organizationOf, type AccessDeps } from '../../platform/auth/access.js';
import type { Organization } from '../../platform/auth/tenant-host.js';
import type { Role } from '../../platform/auth/bearer-verifier.js';
import { AppError } from '../../platform/http/errors.js';
import { readCookie, serializeCookie } from '../../platform/http/cookies.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import { REFRESH_TOKEN_PREFIX } from '../../platform/crypto/opaque-tokens.js';
import { REFRESH_TOKEN_SECONDS, type SessionService, type SignedInUser, type TokenPair } from './sessions.js';

export const REFRESH_COOKIE = 'assent_refresh';
export const CSRF_COOKIE = 'assent_csrf';
export const CSRF_HEADER = 'x-csrf-token';
const REFRESH_COOKIE_PATH = '/auth/browser';
const REFRESH_PATTERN = new RegExp(`^${REFRESH_TOKEN_PREFIX}[0-9A-Za-z]{32}$`);

export interface BrowserSessionDeps extends Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'> {
  sessions: SessionService;
  roleIn(orgId: string, userId: string): Promise<Role | null>;
  /** Mark the cookies Secure (PUBLIC_URL is https). */
  secureCookie: boolean;
}

/** The CSRF token of a session: only someone who can read this site's cookies can send it. */
export function csrfTokenFor(refreshToken: string): string {
  return createHmac('sha256', refreshToken).update('assent-dashboard-csrf').digest('base64url');
}

const BrowserSession = Type.Object(
  {
    access_token: Type.String({ description: 'Send as `Authorization: Bearer <access_token>`; keep it in memory only' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds the access token lives (3600)' }),
    user: Type.Object({ id: Type.String({ format: 'uuid' }), email: Type.String() }),
    role: Type.Unsafe<Role>({ type: 'string', enum: ['owner', 'admin', 'member'], description: "The user's role in this organization" }),
    organization: Type.Object({ id: Type.String({ format: 'uuid' }), slug: Type.String(), name: Type.String() }),
  },
  { title: 'BrowserSession' },
);

const tags = ['Authentication'];

export function browserSessionRoutes(app: FastifyInstance, deps: BrowserSessionDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const cookie = (name: string, value: string, maxAge: number, httpOnly: boolean, path: string) =>
    serializeCookie(name, value, { path, maxAge, httpOnly, secure: deps.secureCookie });
  const sessionCookies = (refreshToken: string) => [
    cookie(REFRESH_COOKIE, refreshToken, REFRESH_TOKEN_SECONDS, true, REFRESH_COOKIE_PATH),
    // Readable by the page (not HttpOnly) so it can send it back as X-CSRF-Token; Path=/ so every page sees it.
    cookie(CSRF_COOKIE, csrfTokenFor(refreshToken), REFRESH_TOKEN_SECONDS, false, '/'),
  ];
  const clearedCookies = [cookie(REFRESH_COOKIE, '', 0, true, REFRESH_COOKIE_PATH), cookie(CSRF_COOKIE, '', 0, false, '/')];

  /** A request another site's page made: refused whatever it carries (SameSite=Strict is the first guard). */
  function refuseCrossOrigin(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {
      // "null" and other opaque origins
    }
    if (host !== hostOf(request, deps.trustProxy)) throw new AppError('csrf_failed', 'Cross-origin request refused: sign in from the dashboard of this organization');
  }

  function checkCsrf(request: FastifyRequest, refreshToken: string): void {
    const given = request.headers[CSRF_HEADER];
    const expected = Buffer.from(csrfTokenFor(refreshToken));
    const actual = Buffer.from(typeof given === 'string' ? given : '');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      throw new AppError('csrf_failed', 'Missing or invalid CSRF token: send the assent_csrf cookie value in the X-CSRF-Token header');
    }
  }

  async function answer(reply: FastifyReply, org: Organization, user: SignedInUser, role: Role, tokens: TokenPair) {
    reply.header('set-cookie', sessionCookies(tokens.refresh_token));
    reply.header('cache-control', 'no-store');
    return {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      expires_in: tokens.expires_in,
      user,
      role,
      organization: { id: org.id, slug: org.slug, name: org.name },
    };
  }

  // Passwords are taken as typed: no trimming.
  r.post('/auth/browser/login', {
    config: { access: 'public', trimStrings: false },
    schema: {
      tags,
      summary: 'Sign in to the dashboard',
      description:
        "For the dashboard on the organization's own host. Like `/auth/login`, but the refresh token is set as an HttpOnly, SameSite=Strict cookie (`assent_refresh`, path `/auth/browser`, Secure under https) and never returned; `assent_csrf` (readable) holds the value to send as `X-CSRF-Token` to refresh and sign out. Wrong email or password: 401; a user who is not a member of this organization (or an unknown organization): 403, and no session is started. Same throttling as `/auth/login`.",
      body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: { 200: BrowserSession, ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
    handler: async (req, reply) => {
      refuseCrossOrigin(req);
      const user = await deps.sessions.authenticate({ email: req.body.email, password: req.body.password, address: req.ip });
      const org = await organizationOf(req, deps);
      const role = org ? await deps.roleIn(org.id, user.id) : null;
      if (!org || !role) throw AccessErrors.notMember();
      return answer(reply, org, user, role, await deps.sessions.startSession(user.id));
    },
  });

  r.post('/auth/browser/refresh', {
    config: { access: 'public' },
    schema: {
      tags,
      summary: "Renew the dashboard's access token",
      description:
        'Spends the refresh token of the `assent_refresh` cookie for a new access token (in the body) and a new refresh token (in the cookie); needs `X-CSRF-Token`. No body. No cookie, or a spent, expired or revoked one: 401 (the cookies are cleared); a bad CSRF token or a request from another site: 403; no longer a member: 403 and the session ends.',
      security: [],
      response: { 200: BrowserSession, ...errorResponses(401, 403) },
    },
    handler: async (req, reply) => {
      refuseCrossOrigin(req);
      const refreshToken = readCookie(req, REFRESH_COOKIE, REFRESH_PATTERN);
      if (!refreshToken) throw new AppError('not_signed_in', 'Not signed in', undefined, { 'set-cookie': clearedCookies });
      checkCsrf(req, refreshToken);
      let rotated;
      try {
        rotated = await deps.sessions.rotate(refreshToken);
      } catch (e) {
        if (e instanceof AppError && e.statusCode === 401) throw new AppError(e.code, e.message, undefined, { 'set-cookie': clearedCookies });
        throw e;
      }
      const org = await organizationOf(req, deps);
      const role = org ? await deps.roleIn(org.id, rotated.user.id) : null;
      if (!org || !role) {
        await deps.sessions.endSessionOf(rotated.tokens.refresh_token);
        throw new AppError('not_a_member', AccessErrors.notMember().message, undefined, { 'set-cookie': clearedCookies });
      }
      return answer(reply, org, rotated.user, role, rotated.tokens);
    },
  });

  r.post('/auth/browser/logout', {
    config: { access: 'public' },
    schema: {
      tags,
      summary: 'Sign out of the dashboard',
      description:
        "Ends the session of the `assent_refresh` cookie (its access and refresh tokens stop at once) and clears the cookies; needs `X-CSRF-Token`. No body. 204, also when there was no session.",
      security: [],
      response: { 204: Type.Null({ description: 'Signed out' }), ...errorResponses(403) },
    },
    handler: async (req, reply) => {
      refuseCrossOrigin(req);
      const refreshToken = readCookie(req, REFRESH_COOKIE, REFRESH_PATTERN);
      if (refreshToken) {
        checkCsrf(req, refreshToken);
        await deps.sessions.endSessionOf(refreshToken);
      }
      return reply.code(204).header('set-cookie', clearedCookies).header('cache-control', 'no-store').send(null);
    },
  });
}
