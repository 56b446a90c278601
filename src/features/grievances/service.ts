// Grievance tickets: creation (status open, a GRV- id), updates that keep an append-only status history.
import type { Database } from '../../platform/db/types.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { randomCode, UPPER_ALNUM, uuidv7 } from '../../platform/ids.js';
import { grievanceRepo, type GrievanceRow, type StatusChangeRow } from './repo.js';
import type { CreateGrievanceInput, UpdateGrievanceInput } from './schemas.js';

const TICKET_ID = /^GRV-[A-Z0-9]{8}$/;
const notFound = () => new AppError('not_found', 'Grievance ticket not found');

export interface GrievanceServiceDeps {
  db: Database;
  clock: Clock;
}

export function createGrievanceService({ db, clock }: GrievanceServiceDeps) {
  return {
    listForUser(ctx: TenantContext, clientUserId: string): Promise<GrievanceRow[]> {
      return withTenant(db, ctx.orgId, (tx) => grievanceRepo(tx).listByClientUser(clientUserId));
    },

    create(ctx: TenantContext, input: CreateGrievanceInput): Promise<GrievanceRow> {
      return withTenant(db, ctx.orgId, async (tx) => {
        const repo = grievanceRepo(tx);
        // 36^8 ids per organization: a collision is rare, and retried with a fresh id.
        for (let attempt = 0; attempt < 5; attempt++) {
          const row = await repo.insert({
            id: uuidv7(),
            historyId: uuidv7(),
            ticketId: 'GRV-' + randomCode(UPPER_ALNUM, 8),
            clientUserId: input.client_user_id,
            subject: input.subject,
            description: input.description,
            category: input.category,
            attachmentUrl: input.attachment_url ?? null,
            at: clock.now(),
            actor: ctx.actor,
          });
          if (row) return row;
        }
        throw new AppError('internal', 'Could not allocate a ticket id');
      });
    },

    update(ctx: TenantContext, ticketId: string, input: UpdateGrievanceInput, note: string | null = null): Promise<GrievanceRow> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await grievanceRepo(tx).update({
          ticketId,
          status: input.status,
          attachmentUrl: input.attachment_url,
          at: clock.now(),
          historyId: uuidv7(),
          actor: ctx.actor,
          note,
        });
        if (!row) throw notFound();
        return row;
      });
    },

    history(ctx: TenantContext, ticketId: string): Promise<StatusChangeRow[]> {
      if (!TICKET_ID.test(ticketId)) return Promise.reject(notFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        const rows = await grievanceRepo(tx).history(ticketId);
        // Every ticket has its creation entry, so no rows means no ticket.
        if (rows.length === 0) throw notFound();
        return rows;
      });
    },
  };
}

export type GrievanceService = ReturnType<typeof createGrievanceService>;
