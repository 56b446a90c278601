// The hosted consent page: GET /c/<token> and its three forms (send code, verify, submit choices), in an
// encapsulated plugin with its own security headers (helmet, strict CSP), urlencoded body parser,
// CSRF check and HTML error pages, so the JSON API around it is untouched. Public routes: the tenant
// comes from Host through the organization directory, and the link token is the credential.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { organizationOf } from '../../platform/auth/access.js';
import { readCookie, serializeCookie } from '../../platform/http/cookies.js';
import { registerHostedPages } from '../../platform/http/hosted-pages.js';
import type { Organization, OrganizationDirectory } from '../../platform/auth/tenant-host.js';
import { pickLanguage, type Messages } from './messages/index.js';
import { confirmationPage, linkPage, messagePage, statePage, STYLE_HASH, type ContactPerson, type Frame, type PageContext } from './pages.js';
import type { ConsentPageService, Outcome } from './service.js';

export interface ConsentPageRouteDeps {
  service: ConsentPageService;
  /** The organization's contact person (DPDP Rule 9), or null when none is set: shown on every page. */
  contactPerson: (orgId: string) => Promise<ContactPerson | null>;
  organizations: OrganizationDirectory;
  baseDomain: string;
  trustProxy: boolean;
  /** Mark the session cookie Secure (PUBLIC_URL is https). */
  secureCookie: boolean;
}

/** The browser session: a random value in an HttpOnly, SameSite=Strict cookie scoped to /c/. */
const COOKIE = 'assent_page';
const SESSION_PATTERN = /^[0-9A-Za-z_-]{43}$/;
const TOKEN_PATTERN = /^[0-9A-Za-z]{32}$/;
const HTML = 'text/html; charset=utf-8';
// Request logs would carry the link token in the URL: only warnings and errors are logged here.
const routeOptions = { config: { access: 'public' as const }, schema: { hide: true }, logLevel: 'warn' as const };

function sessionOf(request: FastifyRequest): string | null {
  return readCookie(request, COOKIE, SESSION_PATTERN);
}

/** The forms' CSRF token: an HMAC of the link token keyed by the session, so it is tied to both. */
function csrfFor(session: string, token: string): string {
  return createHmac('sha256', session).update(token).digest('base64url');
}

function csrfValid(session: string | null, token: string, given: unknown): session is string {
  if (!session || typeof given !== 'string') return false;
  const expected = Buffer.from(csrfFor(session, token));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

export async function consentPageRoutes(app: FastifyInstance, deps: ConsentPageRouteDeps): Promise<void> {
  const { service } = deps;

  await registerHostedPages(app, { styleHash: STYLE_HASH });

  const language = (request: FastifyRequest): Messages =>
    pickLanguage((request.query as Record<string, unknown> | undefined)?.lang, request.headers['accept-language']);

  /** The organization's frame (name and contact person), or the bare one of an unknown host. */
  async function frameOf(m: Messages, org: Organization | null): Promise<Frame> {
    return org ? { m, orgName: org.name, contact: await deps.contactPerson(org.id) } : { m, orgName: '', contact: null };
  }

  app.setErrorHandler(async (err: { statusCode?: number }, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'consent page failed');
    const kind = status === 404 ? 'not_found' : status === 403 ? 'forbidden' : 'error';
    const org = kind === 'not_found' ? null : await organizationOf(request, deps).catch(() => null);
    const frame = await frameOf(language(request), org).catch(() => frameOf(language(request), null));
    return reply.code(status).type(HTML).send(messagePage(frame, kind));
  });

  // Unknown host and unknown token look the same: no organization's name or contact.
  const notFound = async (reply: FastifyReply, m: Messages) => reply.code(404).type(HTML).send(messagePage(await frameOf(m, null), 'not_found'));

  function show(reply: FastifyReply, p: PageContext, outcome: Outcome, afterPost: boolean) {
    if (outcome.kind === 'recorded') return reply.type(HTML).send(confirmationPage(p, outcome.view, outcome.consent));
    const { view, error } = outcome;
    if (view.state !== 'active') {
      const page = statePage(p, view.state, `/c/${p.token}`);
      return reply.code(page.status).type(HTML).send(page.body);
    }
    if (error) return reply.code(error.status).type(HTML).send(linkPage(p, view, error));
    // Post/redirect/get: a reload shows the page, never posts again.
    if (afterPost) return reply.redirect(`/c/${p.token}?lang=${p.m.lang}`, 303);
    return reply.type(HTML).send(linkPage(p, view));
  }

  type Params = { Params: { token: string } };

  app.get<Params>('/c/:token', routeOptions, async (request, reply) => {
    const m = language(request);
    const org = await organizationOf(request, deps);
    if (!org) return notFound(reply, m);
    let session = sessionOf(request);
    if (!session) {
      session = randomBytes(32).toString('base64url');
      reply.header('set-cookie', serializeCookie(COOKIE, session, { path: '/c/', maxAge: 86400, httpOnly: true, secure: deps.secureCookie }));
    }
    const { token } = request.params;
    const [view, frame] = await Promise.all([service.open(org, token, session), frameOf(m, org)]);
    if (!view) return notFound(reply, m);
    return show(reply, { ...frame, token, csrf: csrfFor(session, token) }, { kind: 'page', view }, false);
  });

  /** The part every form shares: tenant, token, CSRF; then the step. */
  function form(step: string, run: (org: Organization, token: string, session: string, body: Record<string, unknown>, m: Messages, request: FastifyRequest) => Promise<Outcome | null>) {
    app.post<Params>(`/c/:token/${step}`, routeOptions, async (request, reply) => {
      const m = language(request);
      const org = await organizationOf(request, deps);
      const { token } = request.params;
      if (!org || !TOKEN_PATTERN.test(token)) return notFound(reply, m);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const session = sessionOf(request);
      if (!csrfValid(session, token, body.csrf)) return reply.code(403).type(HTML).send(messagePage(await frameOf(m, org), 'forbidden', `/c/${token}`));
      const outcome = await run(org, token, session, body, m, request);
      if (!outcome) return notFound(reply, m);
      // After a post that only redirects, the frame is not needed (the GET that follows reads it).
      const frame = outcome.kind === 'page' && !outcome.error && outcome.view.state === 'active' ? { m, orgName: org.name, contact: null } : await frameOf(m, org);
      return show(reply, { ...frame, token, csrf: csrfFor(session, token) }, outcome, true);
    });
  }

  form('code', (org, token, session, _body, m) => service.sendCode(org, token, session, (code, minutes) => m.codeSms(org.name, code, minutes)));
  form('verify', (org, token, session, body) => service.verify(org, token, session, typeof body.code === 'string' ? body.code : ''));
  form('consent', (org, token, session, body, _m, request) => {
    const chosen = [body.purpose].flat().filter((v): v is string => typeof v === 'string');
    return service.submit(org, token, session, new Set(chosen), request.id);
  });
}
