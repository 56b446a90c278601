// Consent page SQL: a link instance by its token hash with what the page shows (request, collection
// point, current code), and the one-time code with its SMS in the outbox. Built from a tenant transaction.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import type { PurposeRow } from '../collection-points/index.js';

export interface PageLinkRow {
  event_id: string;
  request_id: string;
  event_expires_at: Date;
  superseded_at: Date | null;
  completed_at: Date | null;
  phone: string;
  dp_id: string | null;
  collection_point_id: string;
  point_name: string;
  notice: string;
  purposes: PurposeRow[];
  point_status: 'active' | 'inactive';
  code_hash: string | null;
  code_sent_at: Date | null;
  code_sends: number | null;
  code_expires_at: Date | null;
  code_attempts: number | null;
  verified_at: Date | null;
  session_hash: string | null;
}

export function consentPageRepo(tx: TenantTx) {
  return {
    /** `lock`: also locks the request, so code sends, tries and verification on one link run one at a time. */
    async linkByTokenHash(tokenHash: string, lock: boolean): Promise<PageLinkRow | null> {
      const rows = await tx.query<PageLinkRow>(
        `select e.id as event_id, e.request_id, e.expires_at as event_expires_at, e.superseded_at,
                r.completed_at, r.phone, r.dp_id, r.collection_point_id,
                p.name as point_name, p.notice, p.purposes, p.status as point_status,
                c.code_hash, c.sent_at as code_sent_at, c.sends as code_sends, c.expires_at as code_expires_at,
                c.attempts as code_attempts, c.verified_at, c.session_hash
           from consent_link_events e
           join consent_requests r on r.org_id = e.org_id and r.id = e.request_id
           join collection_points p on p.org_id = r.org_id and p.id = r.collection_point_id
           left join consent_link_codes c on c.org_id = e.org_id and c.event_id = e.id
          where e.org_id = $1::uuid and e.token_hash = $2::text
          ${lock ? 'for update of r' : ''}`,
        [tx.orgId, tokenHash],
      );
      return rows[0] ?? null;
    },

    /** Replaces the link's code (tries reset, verification cleared) and queues its SMS: one statement. */
    async issueCode(c: { eventId: string; requestId: string; codeHash: string; at: Date; expiresAt: Date; messageId: string; phone: string; body: string }) {
      await tx.query(
        `with code as (
           insert into consent_link_codes (org_id, event_id, code_hash, sent_at, sends, expires_at, attempts)
           values ($1::uuid, $2::uuid, $3::text, $4::timestamptz, 1, $5::timestamptz, 0)
           on conflict (org_id, event_id) do update
             set code_hash = excluded.code_hash, sent_at = excluded.sent_at, sends = consent_link_codes.sends + 1,
                 expires_at = excluded.expires_at, attempts = 0, verified_at = null, session_hash = null
         )
         insert into outbound_messages (org_id, id, channel, recipient, body, request_id, event_id, status, next_attempt_at, created_at)
         values ($1::uuid, $6::uuid, 'sms', $7::text, $8::text, $9::uuid, $2::uuid, 'queued', $4::timestamptz, $4::timestamptz)`,
        [tx.orgId, c.eventId, c.codeHash, c.at, c.expiresAt, c.messageId, c.phone, c.body, c.requestId],
      );
    },

    async countWrongTry(eventId: string): Promise<number> {
      const rows = await tx.query<{ attempts: number }>(
        'update consent_link_codes set attempts = attempts + 1 where org_id = $1::uuid and event_id = $2::uuid returning attempts',
        [tx.orgId, eventId],
      );
      return rows[0]!.attempts;
    },

    async markVerified(eventId: string, sessionHash: string, at: Date): Promise<void> {
      await tx.query('update consent_link_codes set verified_at = $3::timestamptz, session_hash = $4::text where org_id = $1::uuid and event_id = $2::uuid', [
        tx.orgId,
        eventId,
        at,
        sessionHash,
      ]);
    },
  };
}
