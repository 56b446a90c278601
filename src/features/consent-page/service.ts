// The hosted consent page's rules: what a link shows, the one-time code that proves the data principal
// holds the link's phone (random, stored hashed, 10 minutes, 5 wrong tries, resends throttled), and the
// consent recorded through the consents service (channel 'link'), so the record, the completion of the
// request and the audit entry are those of the API path.
import { randomInt, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../platform/db/types.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import type { Organization } from '../../platform/auth/tenant-host.js';
import { AppError } from '../../platform/http/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { maskPhone } from '../../platform/phone.js';
import { sha256Hex } from '../../platform/crypto/opaque-tokens.js';
import type { ConsentService } from '../consents/index.js';
import type { ConsentAction } from '../consent-links/index.js';
import type { PurposeRow } from '../collection-points/index.js';
import { consentPageRepo, type PageLinkRow } from './repo.js';

export const CODE_TTL_MINUTES = 10;
export const MAX_WRONG_TRIES = 5;
export const RESEND_AFTER_SECONDS = 60;
export const MAX_CODES_PER_LINK = 5;
const TOKEN_PATTERN = /^[0-9A-Za-z]{32}$/;

export type LinkState = 'active' | 'expired' | 'superseded' | 'completed' | 'closed';

export interface PageView {
  state: LinkState;
  eventId: string;
  pointName: string;
  notice: string;
  purposes: PurposeRow[];
  maskedPhone: string;
  /** A code was sent and is still valid. */
  codePending: boolean;
  /** This browser session proved the phone. */
  verified: boolean;
}

export type CodeError = 'format' | 'wrong' | 'expired' | 'too_many_tries' | 'no_code' | 'resend_wait' | 'too_many_codes' | 'not_verified';

/** What a form post led to: the page again (possibly with an error), or the recorded consent. */
export type Outcome =
  | { kind: 'page'; view: PageView; error?: { code: CodeError; status: number; count?: number } }
  | { kind: 'recorded'; consent: { id: string; action: ConsentAction; purposes: { id: string; granted: boolean }[]; at: Date; receipt: string | null }; view: PageView };

export interface ConsentPageDeps {
  db: Database;
  clock: Clock;
  consents: Pick<ConsentService, 'record' | 'receipt'>;
}

function stateOf(link: PageLinkRow, now: Date): LinkState {
  if (link.completed_at) return 'completed';
  if (link.superseded_at) return 'superseded';
  if (link.event_expires_at.getTime() <= now.getTime()) return 'expired';
  return link.point_status === 'active' ? 'active' : 'closed';
}

const codeHash = (eventId: string, code: string) => sha256Hex(`${eventId}:${code}`);

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

function viewOf(link: PageLinkRow, now: Date, session: string | null): PageView {
  return {
    state: stateOf(link, now),
    eventId: link.event_id,
    pointName: link.point_name,
    notice: link.notice,
    purposes: link.purposes,
    maskedPhone: maskPhone(link.phone),
    codePending: link.code_expires_at !== null && link.code_expires_at.getTime() > now.getTime() && (link.code_attempts ?? 0) < MAX_WRONG_TRIES,
    verified: link.verified_at !== null && link.session_hash !== null && session !== null && sameHex(link.session_hash, sha256Hex(session)),
  };
}

export function createConsentPageService({ db, clock, consents }: ConsentPageDeps) {
  /** Runs fn on the link of `token` (locked when `lock`), or returns null for an unknown token. */
  function onLink<T>(org: Organization, token: string, lock: boolean, fn: (link: PageLinkRow, repo: ReturnType<typeof consentPageRepo>) => Promise<T>) {
    if (!TOKEN_PATTERN.test(token)) return Promise.resolve(null);
    return withTenant(db, org.id, async (tx) => {
      const repo = consentPageRepo(tx);
      const link = await repo.linkByTokenHash(sha256Hex(token), lock);
      return link ? fn(link, repo) : null;
    });
  }

  return {
    open(org: Organization, token: string, session: string | null): Promise<PageView | null> {
      return onLink(org, token, false, async (link) => viewOf(link, clock.now(), session));
    },

    /** Issues a new code and queues its SMS in the same transaction. `smsText` words the message. */
    sendCode(org: Organization, token: string, session: string | null, smsText: (code: string, minutes: number) => string): Promise<Outcome | null> {
      return onLink(org, token, true, async (link, repo) => {
        const now = clock.now();
        const view = viewOf(link, now, session);
        if (view.state !== 'active' || view.verified) return { kind: 'page', view };
        if (link.code_sent_at) {
          const waited = (now.getTime() - link.code_sent_at.getTime()) / 1000;
          if ((link.code_sends ?? 0) >= MAX_CODES_PER_LINK) return { kind: 'page', view, error: { code: 'too_many_codes', status: 429 } };
          if (waited < RESEND_AFTER_SECONDS) {
            return { kind: 'page', view, error: { code: 'resend_wait', status: 429, count: Math.ceil(RESEND_AFTER_SECONDS - waited) } };
          }
        }
        const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
        await repo.issueCode({
          eventId: link.event_id,
          requestId: link.request_id,
          codeHash: codeHash(link.event_id, code),
          at: now,
          expiresAt: new Date(now.getTime() + CODE_TTL_MINUTES * 60_000),
          messageId: uuidv7(),
          phone: link.phone,
          body: smsText(code, CODE_TTL_MINUTES),
        });
        return { kind: 'page', view: { ...view, codePending: true } };
      });
    },

    /** Checks the code in constant time; the right one ties this browser session to the link. */
    verify(org: Organization, token: string, session: string, code: string): Promise<Outcome | null> {
      return onLink(org, token, true, async (link, repo) => {
        const now = clock.now();
        const view = viewOf(link, now, session);
        if (view.state !== 'active' || view.verified) return { kind: 'page', view };
        if (!link.code_hash || !link.code_expires_at) return { kind: 'page', view, error: { code: 'no_code', status: 400 } };
        if ((link.code_attempts ?? 0) >= MAX_WRONG_TRIES) return { kind: 'page', view, error: { code: 'too_many_tries', status: 429 } };
        if (link.code_expires_at.getTime() <= now.getTime()) return { kind: 'page', view, error: { code: 'expired', status: 400 } };
        const digits = code.replace(/[\s-]/g, '');
        if (!/^[0-9]{6}$/.test(digits)) return { kind: 'page', view, error: { code: 'format', status: 400 } };
        if (!sameHex(codeHash(link.event_id, digits), link.code_hash)) {
          const attempts = await repo.countWrongTry(link.event_id);
          const left = MAX_WRONG_TRIES - attempts;
          const after = { ...view, codePending: left > 0 };
          return left > 0
            ? { kind: 'page', view: after, error: { code: 'wrong', status: 400, count: left } }
            : { kind: 'page', view: after, error: { code: 'too_many_tries', status: 429 } };
        }
        await repo.markVerified(link.event_id, sha256Hex(session), now);
        return { kind: 'page', view: { ...view, verified: true } };
      });
    },

    /** Records the choices (purpose ids granted) for a verified session and completes the request. */
    async submit(org: Organization, token: string, session: string, granted: Set<string>, requestId: string): Promise<Outcome | null> {
      const found = await onLink(org, token, false, async (link) => ({ link, view: viewOf(link, clock.now(), session) }));
      if (!found) return null;
      const { link, view } = found;
      if (view.state !== 'active') return { kind: 'page', view };
      if (!view.verified) return { kind: 'page', view, error: { code: 'not_verified', status: 403 } };
      // The request's data principal id, or else the phone the code proved.
      const dpId = link.dp_id ?? link.phone;
      const ctx: TenantContext = { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'data_principal', id: link.event_id, dpId }, requestId };
      try {
        const record = await consents.record(
          ctx,
          link.collection_point_id,
          { dp_id: dpId, purposes: link.purposes.map((p) => ({ id: p.id, granted: granted.has(p.id) })), event_id: link.event_id },
          'link',
        );
        // Committed: its receipt, to offer on the confirmation (a page still shows if reading it fails).
        const receipt = await consents.receipt(ctx, record.consent_id).then((r) => r.receipt, () => null);
        return { kind: 'recorded', view, consent: { id: record.consent_id, action: record.consent_action, purposes: record.purposes, at: record.created_at, receipt } };
      } catch (e) {
        // Completed, expired, replaced or closed meanwhile: show the link as it is now.
        if (!(e instanceof AppError) || !['conflict', 'gone', 'bad_request'].includes(e.code)) throw e;
        const now = await onLink(org, token, false, async (l) => viewOf(l, clock.now(), session));
        return now ? { kind: 'page', view: now } : null;
      }
    },
  };
}

export type ConsentPageService = ReturnType<typeof createConsentPageService>;
