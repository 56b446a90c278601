// The Rights Center: /rights on the organization's host, the data principal's own pages. An encapsulated
// plugin like the consent page (security headers with a strict CSP, urlencoded forms, CSRF, HTML error
// pages). Public routes as far as the access hook goes: the session is a cookie holding a Rights Center
// session id (never a DP token: a leaked cookie is no API credential), checked here on every request, and
// every rule is the services' (the same ones /api/v1/me calls).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { organizationOf, type PrincipalContext } from '../../platform/auth/access.js';
import type { Organization, OrganizationDirectory } from '../../platform/auth/tenant-host.js';
import { readCookie, serializeCookie } from '../../platform/http/cookies.js';
import { registerHostedPages } from '../../platform/http/hosted-pages.js';
import { AppError } from '../../platform/http/errors.js';
import type { ConsentService } from '../consents/index.js';
import { CODE_TTL_SECONDS, type DataPrincipalService } from '../data-principals/index.js';
import { GRIEVANCE_CATEGORIES, type GrievanceService } from '../grievances/index.js';
import { RELATIONSHIPS, type NomineeService } from '../nominees/index.js';
import type { FulfilmentService } from '../fulfilment/index.js';
import { pickLanguage, type Messages } from './messages/index.js';
import { codePage, consentsPage, dataPage, href, messagePage, nomineesPage, requestPage, requestsPage, signInPage, STYLE_HASH, type ConsentView, type NomineeForm, type NomineeView, type PageContext, type TicketForm, type TicketView } from './pages.js';

export interface RightsCenterDeps {
  consents: Pick<ConsentService, 'mine' | 'giveMine' | 'withdrawMine' | 'myReceipt'>;
  dataPrincipals: Pick<
    DataPrincipalService,
    'requestCode' | 'signInRightsCenter' | 'rightsSessionFromToken' | 'rightsSession' | 'endRightsSession' | 'contactPersonOrNull' | 'profile'
  >;
  grievances: Pick<GrievanceService, 'mine' | 'fileMine' | 'getMine' | 'myMessages' | 'postMyMessage'>;
  nominees: Pick<NomineeService, 'mine' | 'appointMine' | 'changeMine' | 'removeMine'>;
  fulfilment: Pick<FulfilmentService, 'summaryMine' | 'myPackages' | 'downloadMine'>;
  organizations: OrganizationDirectory;
  baseDomain: string;
  trustProxy: boolean;
  /** Mark the session cookie Secure (PUBLIC_URL is https). */
  secureCookie: boolean;
}

/**
 * The browser session: `<nonce>` while signed out, `<nonce>.<drs_ session id>` once signed in; HttpOnly,
 * SameSite=Lax (a link from an SMS or an app arrives signed in), scoped to /rights. The session id is the
 * Rights Center's own (stored hashed, ended at sign-out), never a dpt_ token. The nonce keys the forms'
 * CSRF token and is replaced at every sign-in and sign-out.
 */
const COOKIE = 'assent_rights';
const COOKIE_PATTERN = /^[\w-]{43}(\.drs_[0-9A-Za-z]{43})?$/;
const SIGNED_OUT_MAX_AGE = 86400;
const HTML = 'text/html; charset=utf-8';
/** Where a sign-in may lead back to: a Rights Center path, nothing else (no open redirect). */
const NEXT_PATTERN = /^\/rights(\/[A-Za-z0-9_-]{1,64}){0,3}$/;
// Request logs would carry a ?token= in the URL: only warnings and errors are logged here.
const routeOptions = { config: { access: 'public' as const }, schema: { hide: true }, logLevel: 'warn' as const };

type Form = Record<string, unknown>;

interface Visit {
  org: Organization;
  m: Messages;
  nonce: string;
  /** The nonce was made by this request: no form can carry its CSRF token yet. */
  fresh: boolean;
  principal: PrincipalContext | null;
  /** The cookie held a session that no longer works (expired or ended). */
  ended: boolean;
  /** The session id in the cookie, if any (live or not). */
  session: string | null;
  page: PageContext;
}

type SignedIn = Visit & { principal: PrincipalContext };

const csrfFor = (nonce: string) => createHmac('sha256', nonce).update('rights-center').digest('base64url');

function csrfValid(v: Visit, given: unknown): boolean {
  if (v.fresh || typeof given !== 'string') return false;
  const expected = Buffer.from(csrfFor(v.nonce));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

const text = (body: Form, name: string, max: number): string => {
  const value = body[name];
  return typeof value === 'string' ? value.trim().slice(0, max) : '';
};

/** A required text field: trimmed, not empty, at most `max` characters; problems worded for the page. */
function field(m: Messages, body: Form, name: string, label: string, max: number, problems: string[]): string {
  const value = typeof body[name] === 'string' ? (body[name] as string).trim() : '';
  if (value === '') problems.push(m.fieldRequired(label));
  else if ([...value].length > max) problems.push(m.fieldTooLong(label, max));
  return value;
}

/** A nominee form's fields, checked as the nominee API's schema does (its service normalises the rest). */
function nomineeInput(m: Messages, body: Form) {
  const problems: string[] = [];
  const nominee_name = field(m, body, 'nominee_name', m.nomineeName, 255, problems);
  const nominee_email = field(m, body, 'nominee_email', m.nomineeEmail, 254, problems);
  if (nominee_email && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(nominee_email)) problems.push(m.emailFormat(m.nomineeEmail));
  const typedMobile = field(m, body, 'nominee_mobile', m.nomineeMobile, 20, problems);
  const nominee_mobile = typedMobile.replace(/[\s().-]/g, '');
  if (typedMobile && !/^(\+[0-9]{8,15}|[0-9]{10})$/.test(nominee_mobile)) problems.push(m.phoneFormat(m.nomineeMobile));
  const relationship = RELATIONSHIPS.find((r) => r === body.relationship);
  if (!relationship) problems.push(m.fieldChoose(m.relationshipLabel));
  const purpose = typeof body.purpose_of_appointment === 'string' ? body.purpose_of_appointment.trim() : '';
  if ([...purpose].length > 1000) problems.push(m.fieldTooLong(m.purposeLabel, 1000));
  const form: NomineeForm = { nominee_name, nominee_email, nominee_mobile: typedMobile, relationship: text(body, 'relationship', 64), purpose_of_appointment: purpose };
  if (problems.length > 0 || !relationship) return { problems, form, input: null };
  return { problems, form, input: { nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment: purpose === '' ? null : purpose } };
}

const nextOf = (value: unknown): string => (typeof value === 'string' && NEXT_PATTERN.test(value) ? value : '/rights');

/** What a person types to sign in: an email address, or a phone number (spaces, dashes, brackets ignored). */
export function parseContact(input: string): { phone: string } | { email: string } | null {
  if (input.includes('@')) return input.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(input) ? { email: input } : null;
  const phone = input.replace(/[\s().-]/g, '');
  return /^(\+[0-9]{8,15}|[0-9]{10})$/.test(phone) ? { phone } : null;
}

export async function rightsCenterRoutes(app: FastifyInstance, deps: RightsCenterDeps): Promise<void> {
  const { consents, dataPrincipals, grievances, nominees, fulfilment } = deps;

  await registerHostedPages(app, { styleHash: STYLE_HASH });

  const language = (request: FastifyRequest): Messages =>
    pickLanguage((request.query as Record<string, unknown> | undefined)?.lang, request.headers['accept-language']);
  const pathOf = (request: FastifyRequest) => request.url.split('?')[0]!;

  /** One Set-Cookie per answer: a later value (sign-in) replaces an earlier one (a fresh nonce). */
  function setSession(reply: FastifyReply, value: string, maxAge: number) {
    reply.removeHeader('set-cookie');
    reply.header('set-cookie', serializeCookie(COOKIE, value, { path: '/rights', maxAge, httpOnly: true, secure: deps.secureCookie, sameSite: 'Lax' }));
  }

  /** A page context for the bare pages (unknown host, errors): no contact, no forms. */
  const barePage = (m: Messages, orgName: string, path: string): PageContext => ({ m, orgName, contact: null, csrf: '', signedIn: false, path });

  /** Organization, language, session and who is signed in; null when the host names no organization (404 sent). */
  async function visit(request: FastifyRequest, reply: FastifyReply): Promise<Visit | null> {
    const m = language(request);
    const org = await organizationOf(request, deps);
    if (!org) {
      reply.code(404).type(HTML).send(messagePage(barePage(m, m.mainNav, pathOf(request)), 'not_found'));
      return null;
    }
    const [cookieNonce, session] = (readCookie(request, COOKIE, COOKIE_PATTERN) ?? '').split('.');
    const fresh = !cookieNonce;
    const nonce = cookieNonce || randomBytes(32).toString('base64url');
    const verified = session ? await dataPrincipals.rightsSession(org.id, session) : null;
    const ended = Boolean(session) && !verified;
    if (fresh || ended) setSession(reply, nonce, SIGNED_OUT_MAX_AGE);
    const principal: PrincipalContext | null = verified
      ? { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'data_principal', id: verified.dataPrincipalId, dpId: verified.dpId }, requestId: request.id }
      : null;
    const contact = await dataPrincipals.contactPersonOrNull(org.id);
    return { org, m, nonce, fresh, principal, ended, session: session || null, page: { m, orgName: org.name, contact, csrf: csrfFor(nonce), signedIn: principal !== null, path: pathOf(request) } };
  }

  /** Signs the browser in: a new nonce, the session id beside it, for as long as the session lives. */
  function signIn(reply: FastifyReply, session: { session: string; expiresInSeconds: number }) {
    setSession(reply, `${randomBytes(32).toString('base64url')}.${session.session}`, Math.max(1, session.expiresInSeconds));
  }

  const send = (reply: FastifyReply, status: number, body: string) => reply.code(status).type(HTML).send(body);

  app.setErrorHandler(async (err: { statusCode?: number }, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'rights center failed');
    const m = language(request);
    const org = await organizationOf(request, deps).catch(() => null);
    const contact = org ? await dataPrincipals.contactPersonOrNull(org.id).catch(() => null) : null;
    const kind = status === 404 ? 'not_found' : status === 403 ? 'forbidden' : 'error';
    return send(reply, status, messagePage({ ...barePage(m, org?.name ?? m.mainNav, pathOf(request)), contact }, kind));
  });

  /**
   * A page: `?token=dpt_…` signs in and comes back without it; signed out, the page is the sign-in form
   * (leading back here); signed in, `render`.
   */
  function page(path: string, render: (v: SignedIn, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) {
    app.get(path, routeOptions, async (request, reply) => {
      const v = await visit(request, reply);
      if (!v) return reply;
      const query = request.query as Record<string, unknown>;
      if (typeof query.token === 'string') {
        const opened = await dataPrincipals.rightsSessionFromToken(v.org.id, query.token);
        if (!opened) return send(reply, 401, signInPage(v.page, { next: nextOf(v.page.path), error: v.m.tokenInvalid }));
        if (v.session) await dataPrincipals.endRightsSession(v.org.id, v.session);
        signIn(reply, opened);
        return reply.redirect(typeof query.lang === 'string' ? href(v.page, v.page.path) : v.page.path, 303);
      }
      if (!v.principal) {
        const notice = query.done === 'signed-out' ? v.m.signedOut : undefined;
        return send(reply, v.ended ? 401 : 200, signInPage(v.page, { next: nextOf(v.page.path), error: v.ended ? v.m.sessionEnded : undefined, notice }));
      }
      return render(v as SignedIn, request, reply);
    });
  }

  /** A form: CSRF first (403), then, where it acts for the person, a live session (401: sign in again). */
  function form(path: string, signedIn: boolean, run: (v: SignedIn, body: Form, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) {
    app.post(path, routeOptions, async (request, reply) => {
      const v = await visit(request, reply);
      if (!v) return reply;
      const body = (request.body ?? {}) as Form;
      if (typeof body !== 'object' || !csrfValid(v, body.csrf)) return send(reply, 403, messagePage(v.page, 'forbidden'));
      if (signedIn && !v.principal) return send(reply, 401, signInPage(v.page, { next: '/rights', error: v.m.sessionEnded }));
      return run(v as SignedIn, body, request, reply);
    });
  }

  // Any other address under /rights: the Rights Center's own 404 page (the API's is JSON).
  app.get('/rights/*', routeOptions, async (request, reply) => {
    const v = await visit(request, reply);
    if (!v) return reply;
    return send(reply, 404, messagePage(v.page, 'not_found'));
  });

  // Sign-in: a code to the phone or email on file, then the code; or ?token= on any page.

  form('/rights/sign-in', false, async (v, body, _request, reply) => {
    const next = nextOf(body.next);
    const typed = text(body, 'contact', 254);
    const contact = parseContact(typed);
    if (!contact) return send(reply, 400, signInPage(v.page, { next, contact: typed, error: v.m.contactFormat }));
    const minutes = CODE_TTL_SECONDS / 60;
    try {
      await dataPrincipals.requestCode(v.org, contact, (code, m) => v.m.codeSms(v.org.name, code, m));
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'too_many_codes') throw err;
      const wait = Number(err.headers?.['retry-after'] ?? 60);
      reply.header('retry-after', String(wait));
      const error = wait <= 60 ? v.m.resendWait(wait) : v.m.tooManyCodes(wait);
      return send(reply, 429, codePage(v.page, { next, contact: typed, minutes, error }));
    }
    return send(reply, 200, codePage(v.page, { next, contact: typed, minutes }));
  });

  form('/rights/sign-in/verify', false, async (v, body, request, reply) => {
    const next = nextOf(body.next);
    const typed = text(body, 'contact', 254);
    const contact = parseContact(typed);
    if (!contact) return send(reply, 400, signInPage(v.page, { next, contact: typed, error: v.m.contactFormat }));
    try {
      const opened = await dataPrincipals.signInRightsCenter(v.org, { ...contact, code: text(body, 'code', 16) }, request.id);
      if (v.session) await dataPrincipals.endRightsSession(v.org.id, v.session);
      signIn(reply, opened);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'incorrect_code') throw err;
      return send(reply, 401, codePage(v.page, { next, contact: typed, minutes: CODE_TTL_SECONDS / 60, error: v.m.wrongCode, codeInvalid: true }));
    }
    return reply.redirect(href(v.page, next), 303);
  });

  form('/rights/sign-out', false, async (v, _body, _request, reply) => {
    if (v.session) await dataPrincipals.endRightsSession(v.org.id, v.session);
    setSession(reply, randomBytes(32).toString('base64url'), SIGNED_OUT_MAX_AGE);
    return reply.redirect(href(v.page, '/rights', { done: 'signed-out' }), 303);
  });

  // Consents: every one with its state; change the choices; withdraw in one step.

  type PointParams = { collection_point_id: string };

  async function showConsents(v: SignedIn, reply: FastifyReply, status: number, o: { done?: string; error?: string }) {
    const list = (await consents.mine(v.principal)) as ConsentView[];
    return send(reply, status, consentsPage(v.page, list, o));
  }

  page('/rights', async (v, request, reply) => {
    const query = request.query as Record<string, unknown>;
    const list = (await consents.mine(v.principal)) as ConsentView[];
    const point = list.find((c) => c.collection_point.id === query.cp)?.collection_point.name;
    const done = point === undefined ? undefined : query.done === 'withdrawn' ? v.m.withdrawn(point) : query.done === 'changed' ? v.m.changed(point) : undefined;
    return send(reply, 200, consentsPage(v.page, list, { done }));
  });

  // The signed receipt of one of their records, as a file (another person's record: the 404 page).
  page('/rights/consents/:consent_id/receipt', async (v, request, reply) => {
    const { consent_id: consentId } = request.params as { consent_id: string };
    const answer = await consents.myReceipt(v.principal, consentId);
    return reply
      .type('application/jose; charset=utf-8')
      .header('content-disposition', `attachment; filename="consent-receipt-${answer.consent_id}.jws"`)
      .send(answer.receipt);
  });

  form('/rights/consents/:collection_point_id/withdraw', true, async (v, _body, request, reply) => {
    const { collection_point_id: pointId } = request.params as PointParams;
    try {
      const record = await consents.withdrawMine(v.principal, pointId);
      return reply.redirect(href(v.page, '/rights', { done: 'withdrawn', cp: record.collection_point_id }), 303);
    } catch (err) {
      if (err instanceof AppError && err.code === 'conflict') return showConsents(v, reply, 409, { error: v.m.alreadyWithdrawn });
      throw err;
    }
  });

  form('/rights/consents/:collection_point_id', true, async (v, body, request, reply) => {
    const { collection_point_id: pointId } = request.params as PointParams;
    const current = ((await consents.mine(v.principal)) as ConsentView[]).find((c) => c.collection_point.id === pointId || c.collection_point.display_id === pointId);
    if (!current) throw new AppError('not_found', 'No consent on record at this collection point');
    const chosen = new Set([body.purpose].flat().filter((x): x is string => typeof x === 'string'));
    try {
      const record = await consents.giveMine(
        v.principal,
        current.collection_point.id,
        current.purposes.map((p) => ({ id: p.id, granted: chosen.has(p.id) })),
      );
      return reply.redirect(href(v.page, '/rights', { done: 'changed', cp: record.collection_point_id }), 303);
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 400) return showConsents(v, reply, 400, { error: v.m.changeFailed });
      throw err;
    }
  });

  // Requests: grievance tickets the person files for themselves, with their history and conversation.

  type TicketParams = { ticket_id: string };
  const periodDays = async (v: SignedIn) => (await dataPrincipals.profile(v.principal)).grievance_period_days;

  page('/rights/requests', async (v, _request, reply) => {
    const tickets = (await grievances.mine(v.principal)) as TicketView[];
    return send(reply, 200, requestsPage(v.page, tickets, { periodDays: await periodDays(v) }));
  });

  form('/rights/requests', true, async (v, body, _request, reply) => {
    const { m } = v;
    const problems: string[] = [];
    const category = GRIEVANCE_CATEGORIES.find((c) => c === body.category);
    if (!category) problems.push(m.fieldChoose(m.categoryLabel));
    const subject = field(m, body, 'subject', m.subjectLabel, 200, problems);
    const description = field(m, body, 'description', m.descriptionLabel, 10_000, problems);
    if (problems.length > 0 || !category) {
      const tickets = (await grievances.mine(v.principal)) as TicketView[];
      const form: TicketForm = { category: text(body, 'category', 64), subject, description };
      return send(reply, 400, requestsPage(v.page, tickets, { periodDays: await periodDays(v), form, problems }));
    }
    const ticket = await grievances.fileMine(v.principal, { category, subject, description });
    return reply.redirect(href(v.page, `/rights/requests/${ticket.ticket_id}`, { done: 'filed' }), 303);
  });

  async function showTicket(v: SignedIn, reply: FastifyReply, ticketId: string, status: number, o: { done?: string; problems?: string[]; reply?: string }) {
    const [ticket, messages] = await Promise.all([grievances.getMine(v.principal, ticketId), grievances.myMessages(v.principal, ticketId)]);
    return send(reply, status, requestPage(v.page, ticket as Parameters<typeof requestPage>[1], messages, o));
  }

  page('/rights/requests/:ticket_id', async (v, request, reply) => {
    const { ticket_id: ticketId } = request.params as TicketParams;
    const query = request.query as Record<string, unknown>;
    const done = query.done === 'filed' ? v.m.filed(ticketId) : query.done === 'sent' ? v.m.replied : undefined;
    return showTicket(v, reply, ticketId, 200, { done });
  });

  form('/rights/requests/:ticket_id/messages', true, async (v, body, request, reply) => {
    const { ticket_id: ticketId } = request.params as TicketParams;
    const problems: string[] = [];
    const message = field(v.m, body, 'message', v.m.replyLabel, 5000, problems);
    if (problems.length > 0) return showTicket(v, reply, ticketId, 400, { problems, reply: message });
    await grievances.postMyMessage(v.principal, ticketId, { message });
    return reply.redirect(`${href(v.page, `/rights/requests/${ticketId}`, { done: 'sent' })}#conversation`, 303);
  });

  // Your data: the s.11 summary and the person's copies (access packages), released to their signed-in
  // session only; a download is recorded like one through /api/v1/me.

  page('/rights/data', async (v, _request, reply) => {
    const [summary, packages] = await Promise.all([fulfilment.summaryMine(v.principal), fulfilment.myPackages(v.principal)]);
    return send(reply, 200, dataPage(v.page, summary, packages));
  });

  page('/rights/data/copies/:package_id', async (v, request, reply) => {
    const { package_id } = request.params as { package_id: string };
    try {
      const { filename, stream } = await fulfilment.downloadMine(v.principal, package_id);
      return reply.header('content-type', 'application/gzip').header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'no-store').send(stream);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'not_found' || err.code === 'gone')) return send(reply, 404, messagePage(v.page, 'not_found'));
      throw err;
    }
  });

  // Nominees: appointed, changed and removed by the person; their status is the organization's.

  type NomineeParams = { nominee_id: string };
  const myNominees = async (v: SignedIn) => (await nominees.mine(v.principal)) as NomineeView[];

  page('/rights/nominees', async (v, request, reply) => {
    const query = request.query as Record<string, unknown>;
    const list = await myNominees(v);
    const name = list.find((n) => n.id === query.nominee)?.nominee_name;
    const done =
      query.done === 'removed' ? v.m.nomineeRemoved : name === undefined ? undefined : query.done === 'appointed' ? v.m.appointed(name) : query.done === 'changed' ? v.m.nomineeChanged(name) : undefined;
    return send(reply, 200, nomineesPage(v.page, list, { done }));
  });

  form('/rights/nominees', true, async (v, body, _request, reply) => {
    const { problems, form, input } = nomineeInput(v.m, body);
    if (!input) return send(reply, 400, nomineesPage(v.page, await myNominees(v), { problems, form }));
    const nominee = await nominees.appointMine(v.principal, input);
    return reply.redirect(href(v.page, '/rights/nominees', { done: 'appointed', nominee: nominee.id }), 303);
  });

  form('/rights/nominees/:nominee_id', true, async (v, body, request, reply) => {
    const { nominee_id: nomineeId } = request.params as NomineeParams;
    const { problems, input } = nomineeInput(v.m, body);
    if (!input) {
      if (!(await myNominees(v)).some((n) => n.id === nomineeId)) throw new AppError('not_found', 'Nominee not found');
      return send(reply, 400, nomineesPage(v.page, await myNominees(v), { problems }));
    }
    const nominee = await nominees.changeMine(v.principal, nomineeId, input);
    return reply.redirect(href(v.page, '/rights/nominees', { done: 'changed', nominee: nominee.id }), 303);
  });

  form('/rights/nominees/:nominee_id/remove', true, async (v, _body, request, reply) => {
    const { nominee_id: nomineeId } = request.params as NomineeParams;
    await nominees.removeMine(v.principal, nomineeId);
    return reply.redirect(href(v.page, '/rights/nominees', { done: 'removed' }), 303);
  });
}
