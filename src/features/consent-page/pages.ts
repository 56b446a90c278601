// The consent page's HTML: one layout (inline stylesheet allowed by its CSP hash, no script, no external
// asset) and a render function per page. Every text comes from the message catalogue.
import { createHash } from 'node:crypto';
import { html, Html } from '../../platform/http/html.js';
import { formatUtcDateTime } from '../../platform/http/dates.js';
import { CATALOGUE, type Messages } from './messages/index.js';
import { CODE_TTL_MINUTES, type CodeError, type LinkState, type PageView } from './service.js';
import type { ConsentAction } from '../consent-links/index.js';
import type { ContactPerson } from '../data-principals/index.js';

export type { ContactPerson };

/** What every page shows around its body: language, organization, its contact person. */
export interface Frame {
  m: Messages;
  orgName: string;
  contact: ContactPerson | null;
}

/** Whom to contact: the contact person, or (none named) the organization's Rights Center; nothing on an unknown host (orgName ''). */
function contactBlock(f: Frame): Html | null {
  const { m, contact } = f;
  if (f.orgName === '') return null;
  if (!contact) {
    return html`<footer><h2>${m.contactHeading}</h2><p>${m.contactNone(f.orgName)} <a href="/rights?lang=${m.lang}">${m.rightsCenterLink(f.orgName)}</a></p></footer>`;
  }
  return html`<footer><h2>${m.contactHeading}</h2>
<p>${contact.full_name}</p>
<dl>
<dt>${m.contactEmail}</dt><dd><a href="mailto:${contact.email}">${contact.email}</a></dd>
${contact.phone ? html`<dt>${m.contactPhone}</dt><dd><a href="tel:${contact.phone}">${contact.phone}</a></dd>` : null}
${contact.working_hours ? html`<dt>${m.workingHours}</dt><dd>${contact.working_hours}</dd>` : null}
${contact.response_time ? html`<dt>${m.responseTime}</dt><dd>${contact.response_time}</dd>` : null}
</dl></footer>`;
}

const CSS = `
body{margin:0;font:1.0625rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Devanagari",sans-serif;color:#1a1a1a;background:#eef0f3}
.page{max-width:40rem;margin:0 auto;background:#fff;min-height:100vh}
main{padding:1rem 1.25rem 1rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
h2,legend{font-size:1.2rem;font-weight:700;margin:1.5rem 0 .5rem;padding:0}
nav{text-align:right;font-size:.95rem}
nav a{color:#0b4f99;padding:.5rem;display:inline-block}
.point{color:#3d3d3d;margin-top:-.5rem}
.notice{white-space:pre-line}
.purposes li{margin:.4rem 0}
.badge{display:inline-block;font-size:.8rem;font-weight:600;padding:0 .4rem;border-radius:.25rem;border:1px solid #4a4a4a;margin-left:.35rem;color:#1a1a1a}
.badge.required{background:#fff1c9;border-color:#6b4500;color:#4a2f00}
.desc{display:block;font-weight:400;color:#333}
fieldset{border:0;padding:0;margin:0;min-width:0}
.choice{display:flex;gap:.75rem;align-items:flex-start;padding:.75rem 0;border-bottom:1px solid #d0d0d0}
.choice input{width:1.5rem;height:1.5rem;margin:.15rem 0 0;flex:none}
label{font-weight:600}
input[type=text]{display:block;font-size:1.5rem;letter-spacing:.3em;padding:.5rem;width:9ch;border:2px solid #4a4a4a;border-radius:.25rem;margin:.25rem 0 .5rem}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.6rem 1.2rem;border:2px solid #0b4f99;border-radius:.375rem;background:#0b4f99;color:#fff;cursor:pointer;margin:.5rem 0}
button.secondary{background:#fff;color:#0b4f99}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px;box-shadow:0 0 0 5px #ffd23f}
.alert{border-left:4px solid #a4001d;padding:.5rem .75rem;background:#fdecee;color:#6b0013}
.ok{border-left:4px solid #1d6b2c;padding:.5rem .75rem;background:#e9f6ec;color:#0f3d18}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
footer{border-top:1px solid #d0d0d0;margin:1rem 1.25rem 0;padding:.5rem 0 2rem}
footer h2{margin-top:.5rem}
a{color:#0b4f99}
`.trim();

/** The CSP source that admits exactly this stylesheet. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

/** `home`: the link's page, where the language switch leads (null: this URL). */
function layout(f: Frame, title: string, body: Html, home: string | null): string {
  const { m } = f;
  const others = Object.values(CATALOGUE);
  return html`<!doctype html>
<html lang="${m.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${new Html(CSS)}</style>
</head>
<body>
<div class="page">
<main>
<nav aria-label="${m.languageSwitch}">${others.map((o) =>
    o.lang === m.lang
      ? html`<a href="${home ?? ''}?lang=${o.lang}" lang="${o.lang}" aria-current="true">${o.languageName}</a>`
      : html`<a href="${home ?? ''}?lang=${o.lang}" lang="${o.lang}" hreflang="${o.lang}">${o.languageName}</a>`,
  )}</nav>
${body}
</main>
${contactBlock(f)}
</div>
</body>
</html>`.value;
}

function errorText(m: Messages, e: { code: CodeError; count?: number }): string {
  switch (e.code) {
    case 'format':
      return m.codeFormat;
    case 'wrong':
      return m.wrongCode(e.count ?? 0);
    case 'expired':
      return m.codeExpired;
    case 'too_many_tries':
      return m.tooManyTries;
    case 'no_code':
      return m.noCodeYet;
    case 'resend_wait':
      return m.resendWait(e.count ?? 0);
    case 'too_many_codes':
      return m.tooManyCodes;
    case 'not_verified':
      return m.notVerified;
  }
}

export interface PageContext extends Frame {
  token: string;
  csrf: string;
}

const action = (p: PageContext, step: string) => `/c/${p.token}/${step}?lang=${p.m.lang}`;
const csrfField = (p: PageContext) => html`<input type="hidden" name="csrf" value="${p.csrf}">`;

/** The link's page: notice and purposes, then the phone check or, once verified, the choices. */
export function linkPage(p: PageContext, view: PageView, error?: { code: CodeError; count?: number }): string {
  const { m } = p;
  const alert = error ? html`<p class="alert" role="alert" id="form-error">${errorText(m, error)}</p>` : null;
  // A code the person typed that was wrong or malformed: the field says so, and points at the message.
  const codeInvalid = error?.code === 'wrong' || error?.code === 'format';
  const badge = (required: boolean) => (required ? html`<span class="badge required">${m.required}</span>` : html`<span class="badge">${m.optional}</span>`);
  const head = html`<h1>${m.asksForConsent(p.orgName)}</h1>
<p class="point">${view.pointName}</p>
<h2>${m.noticeHeading}</h2>
<p class="notice">${view.notice}</p>`;

  if (view.verified) {
    return layout(
      p,
      m.pageTitle,
      html`${head}
<form method="post" action="${action(p, 'consent')}">
${csrfField(p)}
<fieldset>
<legend>${m.chooseHeading}</legend>
${alert}
<p>${m.chooseIntro}</p>
${view.purposes.map(
  (purpose, i) => html`<div class="choice"><input type="checkbox" id="purpose-${i}" name="purpose" value="${purpose.id}">
<label for="purpose-${i}">${purpose.name}${badge(purpose.required)}${purpose.description ? html`<span class="desc">${purpose.description}</span>` : null}</label></div>`,
)}
</fieldset>
<button type="submit">${m.submit}</button>
</form>`,
      `/c/${p.token}`,
    );
  }

  // One message at a time: after an error the "we sent a code" box is not shown beside it.
  const codeForm = view.codePending
    ? html`${error ? null : html`<p class="ok" role="status">${m.codeSent(view.maskedPhone, CODE_TTL_MINUTES)}</p>`}
<form method="post" action="${action(p, 'verify')}">
${csrfField(p)}
<label for="code">${m.codeLabel}</label>
${
  codeInvalid
    ? html`<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required aria-invalid="true" aria-describedby="form-error">`
    : html`<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>`
}
<button type="submit">${m.verify}</button>
</form>`
    : html`<p>${m.verifyIntro(view.maskedPhone)}</p>`;
  return layout(
    p,
    m.pageTitle,
    html`${head}
<h2>${m.purposesHeading}</h2>
<ul class="purposes">${view.purposes.map(
      (purpose) => html`<li>${purpose.name}${badge(purpose.required)}${purpose.description ? html`<span class="desc">${purpose.description}</span>` : null}</li>`,
    )}</ul>
<h2>${m.verifyHeading}</h2>
${alert}
${codeForm}
<form method="post" action="${action(p, 'code')}">
${csrfField(p)}
<button type="submit" class="${view.codePending ? 'secondary' : ''}">${view.codePending ? m.sendNewCode : m.sendCode}</button>
</form>`,
    `/c/${p.token}`,
  );
}

export function confirmationPage(
  p: PageContext,
  view: PageView,
  consent: { id: string; action: ConsentAction; purposes: { id: string; granted: boolean }[]; at: Date; receipt: string | null },
): string {
  const { m } = p;
  // The signed receipt as a file to keep: a data: URL with `download` (no script, no extra route, so
  // the page's CSP is untouched). A compact JWS is base64url and dots: nothing to escape.
  const receipt =
    consent.receipt === null
      ? ''
      : html`<p><a download="consent-receipt-${consent.id}.jws" href="data:application/jose;charset=utf-8,${consent.receipt}">${m.downloadReceipt}</a></p>
<p class="hint">${m.receiptHint(p.orgName)}</p>`;
  const granted = new Map(consent.purposes.map((c) => [c.id, c.granted]));
  const when = formatUtcDateTime(m.lang, consent.at);
  return layout(
    p,
    m.doneTitle,
    html`<h1>${m.doneTitle}</h1>
<p class="ok" role="status">${m.outcome[consent.action]}</p>
<p class="point">${p.orgName}: ${view.pointName}</p>
<ul class="purposes">${view.purposes.map((purpose) => html`<li>${purpose.name}: <strong>${granted.get(purpose.id) ? m.agreed : m.notAgreed}</strong></li>`)}</ul>
<dl>
<dt>${m.recordedAt}</dt><dd><time datetime="${consent.at.toISOString()}">${when}</time></dd>
<dt>${m.receiptId}</dt><dd><code>${consent.id}</code></dd>
</dl>
${receipt}
<p>${m.howToWithdraw} <a href="/rights?lang=${m.lang}">${m.rightsCenterLink(p.orgName)}</a></p>`,
    `/c/${p.token}`,
  );
}

/** The page of a link that no longer takes consent, with its status. */
export function statePage(f: Frame, state: Exclude<LinkState, 'active'>, home: string): { status: number; body: string } {
  const { m, orgName } = f;
  const texts: Record<typeof state, [number, string, string]> = {
    expired: [410, m.expiredTitle, m.expiredBody(orgName)],
    superseded: [410, m.supersededTitle, m.supersededBody],
    completed: [409, m.completedTitle, m.completedBody],
    closed: [410, m.closedTitle, m.closedBody(orgName)],
  };
  const [status, title, text] = texts[state];
  return { status, body: layout(f, title, html`<h1>${title}</h1><p>${text}</p>`, home) };
}

/** An error page; `f` without an organization (unknown host) shows no organization's contact. */
export function messagePage(f: Frame, kind: 'not_found' | 'forbidden' | 'error', home: string | null = null): string {
  const { m } = f;
  const [title, text] = kind === 'not_found' ? [m.notFoundTitle, m.notFoundBody] : kind === 'forbidden' ? [m.forbiddenTitle, m.forbiddenBody] : [m.errorTitle, m.errorBody];
  return layout(f, title, html`<h1>${title}</h1><p>${text}</p>`, home);
}
