// The Rights Center's HTML: one layout (banner with the language switch, the section navigation and
// sign-out when signed in, the page, and the contact person in the footer of every page) and a render
// function per page. Inline stylesheet admitted by its CSP hash; no script, no external asset.
import { createHash } from 'node:crypto';
import { html, Html } from '../../platform/http/html.js';
import { formatUtcDateTime } from '../../platform/http/dates.js';
import { CATALOGUE, type Messages } from './messages/index.js';
import type { ConsentAction } from '../consent-links/index.js';
import type { ContactPerson } from '../data-principals/index.js';

export type { ContactPerson };
import { GRIEVANCE_CATEGORIES, parseStatusMessage } from '../grievances/index.js';
import { RELATIONSHIPS } from '../nominees/index.js';

const CSS = `
body{margin:0;font:1.0625rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Devanagari",sans-serif;color:#1a1a1a;background:#eef0f3}
.wrap{max-width:44rem;margin:0 auto;padding:0 1.25rem;background:#fff;box-sizing:border-box}
header{padding-top:.75rem;display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.5rem}
header p{margin:0;font-weight:700}
header nav a{color:#0b4f99;padding:.5rem;display:inline-block}
.sections{border-bottom:1px solid #d0d0d0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
.sections a{color:#0b4f99;padding:.6rem .25rem;display:inline-block;font-weight:600}
.sections a[aria-current]{color:#1a1a1a;text-decoration-thickness:3px}
.sections form{margin-left:auto}
main{padding:1rem 0 2rem}
footer{border-top:1px solid #d0d0d0;padding:1rem 0 2rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.25rem;margin:1.75rem 0 .5rem}
h3{font-size:1.05rem;margin:1rem 0 .25rem}
.consent{border:1px solid #c4c8cf;border-radius:.5rem;padding:.25rem 1rem 1rem;margin:1rem 0}
.consent h2{margin-top:.75rem}
.state{font-weight:700}
.notice{white-space:pre-line}
.purposes{padding-left:1.25rem}
.purposes li{margin:.3rem 0}
.badge{display:inline-block;font-size:.8rem;font-weight:600;padding:0 .4rem;border-radius:.25rem;border:1px solid #4a4a4a;margin-left:.35rem;color:#1a1a1a}
.badge.overdue{background:#fde8e8;border-color:#8a1c1c;color:#8a1c1c}
.badge.required{background:#fff1c9;border-color:#6b4500;color:#4a2f00}
.hint{color:#333;margin:.1rem 0 .25rem;font-size:.95rem}
fieldset{border:0;padding:0;margin:0;min-width:0}
legend{font-weight:700;padding:0;margin:.5rem 0}
.choice{display:flex;gap:.75rem;align-items:flex-start;padding:.5rem 0;border-bottom:1px solid #d0d0d0}
.choice input{width:1.5rem;height:1.5rem;margin:.15rem 0 0;flex:none}
label{font-weight:600}
input[type=text],input[type=email],select,textarea{display:block;font:inherit;padding:.5rem;width:100%;max-width:24rem;box-sizing:border-box;border:2px solid #4a4a4a;border-radius:.25rem;margin:.25rem 0 .5rem;background:#fff;color:#1a1a1a}
textarea{max-width:100%;min-height:7rem}
input.code{font-size:1.5rem;letter-spacing:.3em;width:9ch}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.6rem 1.2rem;border:2px solid #0b4f99;border-radius:.375rem;background:#0b4f99;color:#fff;cursor:pointer;margin:.5rem 0}
button.secondary{background:#fff;color:#0b4f99}
button.danger{background:#a4001d;border-color:#a4001d}
button.link{background:none;border:0;color:#0b4f99;text-decoration:underline;padding:.6rem .25rem;min-height:0;margin:0}
summary{cursor:pointer;color:#0b4f99;font-weight:600;padding:.4rem 0}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px;box-shadow:0 0 0 5px #ffd23f}
.alert{border-left:4px solid #a4001d;padding:.5rem .75rem;background:#fdecee;color:#6b0013}
.messages,.history,.tickets{padding-left:1.25rem}
.tickets li{margin:.5rem 0}
.message{margin:.75rem 0;padding:.5rem .75rem;border-left:4px solid #c4c8cf;list-style:none}
.message.agent{border-left-color:#0b4f99;background:#eef4fb}
.message.system{border-left-color:#6b6b6b;background:#f4f4f4}
.message p{margin:.25rem 0}
.alert ul{margin:0;padding-left:1.25rem}
.ok{border-left:4px solid #1d6b2c;padding:.5rem .75rem;background:#e9f6ec;color:#0f3d18}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:.5rem 0}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
@media (max-width:30rem){header{padding-top:.25rem;flex-wrap:nowrap;gap:.25rem}header p{font-size:.875rem;line-height:1.2;min-width:0}header nav{flex:none}header nav a{padding:.3rem;font-size:.875rem}.sections{gap:0 .6rem}.sections a,.sections button.link{padding:.3rem 0;font-size:.95rem;white-space:nowrap}main{padding-top:.25rem}h1{margin-top:.25rem}}
`.trim();

/** The CSP source that admits exactly this stylesheet. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

export type Section = 'consents' | 'requests' | 'nominees';

/** What every page needs: language, organization, its contact person, the CSRF token, who is signed in. */
export interface PageContext {
  m: Messages;
  orgName: string;
  contact: ContactPerson | null;
  csrf: string;
  signedIn: boolean;
  /** This page's path, where the language switch leads. */
  path: string;
}

/** A Rights Center address in the page's language. */
export const href = (p: Pick<PageContext, 'm'>, path: string, query: Record<string, string> = {}) =>
  `${path}?${new URLSearchParams({ lang: p.m.lang, ...query }).toString()}`;

export const csrfField = (p: PageContext) => html`<input type="hidden" name="csrf" value="${p.csrf}">`;

export function formatTime(m: Messages, at: Date): Html {
  const text = formatUtcDateTime(m.lang, at);
  return html`<time datetime="${at.toISOString()}">${text}</time>`;
}

function contactBlock(p: PageContext): Html {
  const { m, contact } = p;
  if (!contact) return html`<h2>${m.contactHeading}</h2><p>${m.contactNone(p.orgName)}</p>`;
  return html`<h2>${m.contactHeading}</h2>
<p>${contact.full_name}</p>
<dl>
<dt>${m.contactEmail}</dt><dd><a href="mailto:${contact.email}">${contact.email}</a></dd>
${contact.phone ? html`<dt>${m.contactPhone}</dt><dd><a href="tel:${contact.phone}">${contact.phone}</a></dd>` : null}
${contact.working_hours ? html`<dt>${m.workingHours}</dt><dd>${contact.working_hours}</dd>` : null}
${contact.response_time ? html`<dt>${m.responseTime}</dt><dd>${contact.response_time}</dd>` : null}
</dl>`;
}

export function layout(p: PageContext, title: string, body: Html, section: Section | null = null): string {
  const { m } = p;
  const sectionLink = (s: Section, path: string, text: string) =>
    s === section ? html`<a href="${href(p, path)}" aria-current="page">${text}</a>` : html`<a href="${href(p, path)}">${text}</a>`;
  const sections = p.signedIn
    ? html`<nav class="sections" aria-label="${m.mainNav}">
${sectionLink('consents', '/rights', m.navConsents)}
${sectionLink('requests', '/rights/requests', m.navRequests)}
${sectionLink('nominees', '/rights/nominees', m.navNominees)}
<form method="post" action="${href(p, '/rights/sign-out')}">${csrfField(p)}<button type="submit" class="link">${m.signOut}</button></form>
</nav>`
    : null;
  return html`<!doctype html>
<html lang="${m.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · ${m.title(p.orgName)}</title>
<style>${new Html(CSS)}</style>
</head>
<body>
<div class="wrap">
<header>
<p>${m.title(p.orgName)}</p>
<nav aria-label="${m.languageSwitch}">${Object.values(CATALOGUE).map((o) =>
    o.lang === m.lang
      ? html`<a href="${p.path}?lang=${o.lang}" lang="${o.lang}" aria-current="true">${o.languageName}</a>`
      : html`<a href="${p.path}?lang=${o.lang}" lang="${o.lang}" hreflang="${o.lang}">${o.languageName}</a>`,
  )}</nav>
</header>
${sections}
<main>
${body}
</main>
<footer>
${contactBlock(p)}
</footer>
</div>
</body>
</html>`.value;
}

const alertOf = (text: string | null | undefined) => (text ? html`<p class="alert" role="alert">${text}</p>` : null);
const alertList = (problems: string[] | undefined) =>
  problems && problems.length > 0 ? html`<div class="alert" role="alert"><ul>${problems.map((x) => html`<li>${x}</li>`)}</ul></div>` : null;
const statusOf = (text: string | null | undefined) => (text ? html`<p class="ok" role="status">${text}</p>` : null);

/** Step one of signing in: the phone or email on file. */
export function signInPage(p: PageContext, o: { next: string; contact?: string; error?: string; notice?: string }): string {
  const { m } = p;
  return layout(
    p,
    m.signInHeading,
    html`<h1>${m.signInHeading}</h1>
${statusOf(o.notice)}
<p>${m.signInIntro(p.orgName)}</p>
${alertOf(o.error)}
<form method="post" action="${href(p, '/rights/sign-in')}">
${csrfField(p)}
<input type="hidden" name="next" value="${o.next}">
<label for="contact">${m.contactLabel}</label>
<p class="hint" id="contact-hint">${m.contactHint}</p>
<input type="text" id="contact" name="contact" autocomplete="username" aria-describedby="contact-hint" maxlength="254" required value="${o.contact ?? ''}">
<button type="submit">${m.sendCode}</button>
</form>`,
  );
}

/** Step two: the code sent to that contact (the answer is the same whether or not it is on file). */
export function codePage(p: PageContext, o: { next: string; contact: string; minutes: number; error?: string; codeInvalid?: boolean }): string {
  const { m } = p;
  // A wrong code: the field says so and points at the message (which replaces "a code is on its way").
  const codeField = o.codeInvalid
    ? html`<input type="text" class="code" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required aria-invalid="true" aria-describedby="code-error">`
    : html`<input type="text" class="code" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>`;
  return layout(
    p,
    m.codeSentHeading,
    html`<h1>${m.codeSentHeading}</h1>
${o.error ? html`<p class="alert" role="alert" id="code-error">${o.error}</p>` : statusOf(m.codeSent(o.contact, o.minutes))}
<form method="post" action="${href(p, '/rights/sign-in/verify')}">
${csrfField(p)}
<input type="hidden" name="next" value="${o.next}">
<input type="hidden" name="contact" value="${o.contact}">
<label for="code">${m.codeLabel}</label>
${codeField}
<button type="submit">${m.verify}</button>
</form>
<form method="post" action="${href(p, '/rights/sign-in')}">
${csrfField(p)}
<input type="hidden" name="next" value="${o.next}">
<input type="hidden" name="contact" value="${o.contact}">
<button type="submit" class="secondary">${m.sendAnother}</button>
</form>
<p><a href="${href(p, '/rights')}">${m.otherContact}</a></p>`,
  );
}

export interface ConsentView {
  collection_point: { id: string; display_id: string; name: string; notice: string; notice_version: number };
  consent_action: ConsentAction;
  purposes: { id: string; name: string; required: boolean; granted: boolean }[];
  given_at: Date;
  consent_id: string;
}

/** Every consent with its state; withdraw is one button, changing is a form of checkboxes. */
export function consentsPage(p: PageContext, consents: ConsentView[], o: { done?: string; error?: string } = {}): string {
  const { m } = p;
  const badge = (required: boolean) => (required ? html`<span class="badge required">${m.required}</span>` : html`<span class="badge">${m.optional}</span>`);
  const item = (c: ConsentView, n: number) => {
    const point = c.collection_point;
    const action = (suffix: string) => href(p, `/rights/consents/${point.id}${suffix}`);
    return html`<section class="consent" aria-labelledby="cp-${n}">
<h2 id="cp-${n}">${point.name}</h2>
<p><span class="state">${m.state[c.consent_action]}</span> · ${m.since} ${formatTime(m, new Date(c.given_at))}</p>
<ul class="purposes">${c.purposes.map((pp) => html`<li>${pp.name}${badge(pp.required)}: <strong>${pp.granted ? m.agreed : m.notAgreed}</strong></li>`)}</ul>
<p><a href="${href(p, `/rights/consents/${c.consent_id}/receipt`)}" download="consent-receipt-${c.consent_id}.jws">${m.downloadReceipt}</a></p>
${c.consent_action === 'revoked'
  ? null
  : html`<form method="post" action="${action('/withdraw')}">
${csrfField(p)}
<button type="submit" class="danger">${m.withdraw(point.name)}</button>
</form>`}
<details>
<summary>${m.noticeVersion(point.notice_version)}</summary>
<p class="notice">${point.notice}</p>
</details>
<details>
<summary>${m.changeHeading}</summary>
<form method="post" action="${action('')}">
${csrfField(p)}
<fieldset>
<legend>${m.changeHeading}: ${point.name}</legend>
<p>${m.changeIntro}</p>
${c.purposes.map(
  (pp, i) => html`<div class="choice"><input type="checkbox" id="cp-${n}-${i}" name="purpose" value="${pp.id}"${pp.granted ? new Html(' checked') : null}>
<label for="cp-${n}-${i}">${pp.name}${badge(pp.required)}</label></div>`,
)}
</fieldset>
<button type="submit">${m.saveChoices(point.name)}</button>
</form>
</details>
</section>`;
  };
  return layout(
    p,
    m.consentsHeading,
    html`<h1>${m.consentsHeading}</h1>
${statusOf(o.done)}
${alertOf(o.error)}
<p>${m.consentsIntro}</p>
${consents.length === 0 ? html`<p>${m.noConsents}</p>` : consents.map(item)}
<h2>${m.dataHeading}</h2>
<p><a href="${href(p, '/rights/data')}">${m.dataLink}</a></p>`,
    'consents',
  );
}

export function messagePage(p: PageContext, kind: 'not_found' | 'forbidden' | 'error'): string {
  const { m } = p;
  const [title, text] = kind === 'not_found' ? [m.notFoundTitle, m.notFoundBody] : kind === 'forbidden' ? [m.forbiddenTitle, m.forbiddenBody] : [m.errorTitle, m.errorBody];
  return layout(p, title, html`<h1>${title}</h1><p>${text}</p><p><a href="${href(p, '/rights')}">${m.backHome}</a></p>`);
}

type Category = (typeof GRIEVANCE_CATEGORIES)[number];
type Status = keyof Messages['status'];

export interface TicketView {
  ticket_id: string;
  subject: string;
  description: string;
  category: Category;
  status: Status;
  created_at: Date;
  updated_at: Date;
  /** The statutory clock (contract §10): null days_left once answered. */
  due_at: Date;
  days_left: number | null;
  overdue: boolean;
}

/** When the organization must answer, with the days left or late, and "Overdue" as text (never colour alone). */
function dueOf(m: Messages, t: TicketView): Html {
  const state =
    t.days_left === null ? m.dueAnswered : t.overdue ? m.dueLate(Math.abs(t.days_left)) : t.days_left === 0 ? m.dueToday : m.dueLeft(t.days_left);
  return html`${formatTime(m, new Date(t.due_at))} (${state}${t.status === 'on_hold' ? `; ${m.duePaused}` : ''})${t.overdue ? html` <span class="badge overdue">${m.overdue}</span>` : null}`;
}

/** A conversation message in the reader's language: a status change's system text is said again in it. */
function messageText(m: Messages, msg: MessageView): string {
  if (msg.sender !== 'system') return msg.message;
  const change = parseStatusMessage(msg.message);
  return change ? m.systemStatusChange(m.status[change.previous], m.status[change.status]) : msg.message;
}

export interface TicketForm {
  category?: string;
  subject?: string;
  description?: string;
}

/** The person's requests, newest first, and the form to make one. */
export function requestsPage(p: PageContext, tickets: TicketView[], o: { periodDays: number; form?: TicketForm; problems?: string[] }): string {
  const { m } = p;
  const f = o.form ?? {};
  return layout(
    p,
    m.requestsHeading,
    html`<h1>${m.requestsHeading}</h1>
<p>${m.requestsIntro(o.periodDays)}</p>
${tickets.length === 0
  ? html`<p>${m.noRequests}</p>`
  : html`<ul class="tickets">${tickets.map(
      (t) => html`<li><a href="${href(p, `/rights/requests/${t.ticket_id}`)}">${t.ticket_id}: ${t.subject}</a><br>${m.category[t.category]} · <strong>${m.status[t.status]}</strong> · ${formatTime(m, new Date(t.updated_at))}${t.days_left === null ? null : html`<br>${m.dueLabel}: ${dueOf(m, t)}`}</li>`,
    )}</ul>`}
<h2 id="new-request">${m.newRequestHeading}</h2>
${alertList(o.problems)}
<form method="post" action="${href(p, '/rights/requests')}">
${csrfField(p)}
<label for="category">${m.categoryLabel}</label>
<select id="category" name="category" required>
<option value=""></option>
${GRIEVANCE_CATEGORIES.map((c) => html`<option value="${c}"${f.category === c ? new Html(' selected') : null}>${m.category[c]}</option>`)}
</select>
<label for="subject">${m.subjectLabel}</label>
<input type="text" id="subject" name="subject" maxlength="200" required value="${f.subject ?? ''}">
<label for="description">${m.descriptionLabel}</label>
<p class="hint" id="description-hint">${m.descriptionHint}</p>
<textarea id="description" name="description" maxlength="10000" required aria-describedby="description-hint">${f.description ?? ''}</textarea>
<button type="submit">${m.fileRequest}</button>
</form>`,
    'requests',
  );
}

export interface MessageView {
  id: string;
  sender: 'user' | 'agent' | 'system';
  message: string;
  created_at: Date;
}

/** One request: its details, status history, conversation and the reply form. */
export function requestPage(
  p: PageContext,
  t: TicketView & { history: { status: Status; previous_status: Status | null; changed_at: Date }[] },
  messages: MessageView[],
  o: { done?: string; problems?: string[]; reply?: string },
): string {
  const { m } = p;
  return layout(
    p,
    `${t.ticket_id}: ${t.subject}`,
    html`<p><a href="${href(p, '/rights/requests')}">${m.allRequests}</a></p>
<h1>${t.ticket_id}: ${t.subject}</h1>
${statusOf(o.done)}
<dl>
<dt>${m.statusLabel}</dt><dd><strong>${m.status[t.status]}</strong></dd>
<dt>${m.categoryName}</dt><dd>${m.category[t.category]}</dd>
<dt>${m.filedOn}</dt><dd>${formatTime(m, new Date(t.created_at))}</dd>
<dt>${m.dueLabel}</dt><dd>${dueOf(m, t)}</dd>
</dl>
<p class="notice">${t.description}</p>
<h2>${m.historyHeading}</h2>
<ol class="history">${t.history.map(
      (h) => html`<li>${formatTime(m, new Date(h.changed_at))}: ${m.historyEntry(h.previous_status === null ? null : m.status[h.previous_status], m.status[h.status])}</li>`,
    )}</ol>
<h2 id="conversation">${m.conversationHeading}</h2>
${messages.length === 0
  ? html`<p>${m.noMessages}</p>`
  : html`<ol class="messages">${messages.map(
      (msg) => html`<li class="message ${msg.sender}"><p class="from"><strong>${m.sender[msg.sender]}</strong> · ${formatTime(m, new Date(msg.created_at))}</p><p class="notice">${messageText(m, msg)}</p></li>`,
    )}</ol>`}
${alertList(o.problems)}
<form method="post" action="${href(p, `/rights/requests/${t.ticket_id}/messages`)}">
${csrfField(p)}
<label for="message">${m.replyLabel}</label>
<textarea id="message" name="message" maxlength="5000" required>${o.reply ?? ''}</textarea>
<button type="submit">${m.sendReply}</button>
</form>`,
    'requests',
  );
}

type Relationship = (typeof RELATIONSHIPS)[number];

export interface NomineeView {
  id: string;
  nominee_name: string;
  nominee_email: string;
  nominee_mobile: string;
  relationship: Relationship;
  purpose_of_appointment: string | null;
  status: keyof Messages['nomineeStatus'];
}

export interface NomineeForm {
  nominee_name?: string;
  nominee_email?: string;
  nominee_mobile?: string;
  relationship?: string;
  purpose_of_appointment?: string | null;
}

/** The fields of a nominee form; `prefix` keeps ids unique when several forms share the page. */
function nomineeFields(m: Messages, prefix: string, f: NomineeForm): Html {
  const id = (name: string) => `${prefix}-${name}`;
  return html`<label for="${id('name')}">${m.nomineeName}</label>
<input type="text" id="${id('name')}" name="nominee_name" maxlength="255" autocomplete="off" required value="${f.nominee_name ?? ''}">
<label for="${id('email')}">${m.nomineeEmail}</label>
<input type="email" id="${id('email')}" name="nominee_email" maxlength="254" autocomplete="off" required value="${f.nominee_email ?? ''}">
<label for="${id('mobile')}">${m.nomineeMobile}</label>
<input type="text" id="${id('mobile')}" name="nominee_mobile" inputmode="tel" maxlength="20" autocomplete="off" required value="${f.nominee_mobile ?? ''}">
<label for="${id('relationship')}">${m.relationshipLabel}</label>
<select id="${id('relationship')}" name="relationship" required>
<option value=""></option>
${RELATIONSHIPS.map((r) => html`<option value="${r}"${f.relationship === r ? new Html(' selected') : null}>${m.relationship[r]}</option>`)}
</select>
<label for="${id('purpose')}">${m.purposeLabel}</label>
<textarea id="${id('purpose')}" name="purpose_of_appointment" maxlength="1000">${f.purpose_of_appointment ?? ''}</textarea>`;
}

/** The person's nominees (change, remove) and the form to appoint one. */
export function nomineesPage(p: PageContext, nominees: NomineeView[], o: { done?: string; problems?: string[]; form?: NomineeForm } = {}): string {
  const { m } = p;
  const item = (n: NomineeView, i: number) => html`<section class="consent" aria-labelledby="nominee-${i}">
<h2 id="nominee-${i}">${n.nominee_name}</h2>
<dl>
<dt>${m.statusLabel}</dt><dd><strong>${m.nomineeStatus[n.status]}</strong></dd>
<dt>${m.relationshipLabel}</dt><dd>${m.relationship[n.relationship]}</dd>
<dt>${m.nomineeEmail}</dt><dd>${n.nominee_email}</dd>
<dt>${m.nomineeMobile}</dt><dd>${n.nominee_mobile}</dd>
${n.purpose_of_appointment ? html`<dt>${m.purposeLabel}</dt><dd>${n.purpose_of_appointment}</dd>` : null}
</dl>
<details>
<summary>${m.changeNominee(n.nominee_name)}</summary>
<form method="post" action="${href(p, `/rights/nominees/${n.id}`)}">
${csrfField(p)}
${nomineeFields(m, `nominee-${i}`, n)}
<button type="submit">${m.saveNominee}</button>
</form>
</details>
<form method="post" action="${href(p, `/rights/nominees/${n.id}/remove`)}">
${csrfField(p)}
<button type="submit" class="secondary">${m.removeNominee(n.nominee_name)}</button>
</form>
</section>`;
  return layout(
    p,
    m.nomineesHeading,
    html`<h1>${m.nomineesHeading}</h1>
${statusOf(o.done)}
<p>${m.nomineesIntro(p.orgName)}</p>
${nominees.length === 0 ? html`<p>${m.noNominees}</p>` : nominees.map(item)}
<h2 id="appoint">${m.appointHeading}</h2>
${alertList(o.problems)}
<form method="post" action="${href(p, '/rights/nominees')}">
${csrfField(p)}
${nomineeFields(m, 'new', o.form ?? {})}
<button type="submit">${m.appoint}</button>
</form>`,
    'nominees',
  );
}

/** The s.11 summary as the page shows it (features/fulfilment). */
export interface DataSummaryView {
  categories: { key: string; name: string; description: string | null; purposes: string[]; systems: string[]; shared_with: string[]; retention: { days: number; basis: string } | null }[];
}

export interface PackageView {
  id: string;
  ticket_id: string;
  status: 'available' | 'expired';
  expires_at: Date;
  files: { path: string }[];
}

/** What the organization holds (DPDP s.11) and the person's copies of it, each downloadable for 14 days. */
export function dataPage(p: PageContext, summary: DataSummaryView, packages: PackageView[]): string {
  const { m } = p;
  const category = (c: DataSummaryView['categories'][number], i: number) => html`<section class="consent" aria-labelledby="category-${i}">
<h3 id="category-${i}">${c.name}</h3>
${c.description ? html`<p>${c.description}</p>` : null}
<dl>
${c.purposes.length > 0 ? html`<dt>${m.usedFor}</dt><dd>${c.purposes.join(', ')}</dd>` : null}
${c.systems.length > 0 ? html`<dt>${m.heldIn}</dt><dd>${c.systems.join(', ')}</dd>` : null}
<dt>${m.sharedWith}</dt><dd>${c.shared_with.length > 0 ? c.shared_with.join(', ') : m.notShared}</dd>
${c.retention ? html`<dt>${m.retentionLabel}</dt><dd>${m.keptFor(c.retention.days, c.retention.basis)}</dd>` : null}
</dl>
</section>`;
  const copy = (k: PackageView, i: number) => html`<section class="consent" aria-labelledby="copy-${i}">
<h3 id="copy-${i}">${m.copyFor(k.ticket_id)}</h3>
${
  k.status === 'available'
    ? html`<p>${m.copyFiles(k.files.length)}. ${m.availableUntil} ${formatTime(m, k.expires_at)}.</p>
<p><a href="${href(p, `/rights/data/copies/${k.id}`)}" download>${m.downloadCopy(k.ticket_id)}</a></p>`
    : html`<p>${m.copyErased}</p>`
}
</section>`;
  return layout(
    p,
    m.dataHeading,
    html`<h1>${m.dataHeading}</h1>
<p>${m.dataIntro(p.orgName)}</p>
<h2>${m.heldHeading}</h2>
${summary.categories.length === 0 ? html`<p>${m.noDataMap(p.orgName)}</p>` : summary.categories.map(category)}
<h2>${m.copiesHeading}</h2>
${packages.length === 0 ? html`<p>${m.noCopies}</p>` : packages.map(copy)}`,
  );
}
