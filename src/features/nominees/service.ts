// Nominees: people authorised to act for a data principal, with a verification status.
import type { Database } from '../../platform/db/types.js';
import { withTenant } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { isUuid, uuidv7 } from '../../platform/ids.js';
import { normalisePhone } from '../../platform/phone.js';
import { nomineeRepo, type NomineeRow } from './repo.js';
import type { CreateNomineeInput, UpdateNomineeInput } from './schemas.js';

const notFound = () => new AppError('not_found', 'Nominee not found');

export interface NomineeServiceDeps {
  db: Database;
  clock: Clock;
  defaultCountryCode: string;
}

export function createNomineeService({ db, clock, defaultCountryCode }: NomineeServiceDeps) {
  return {
    listForUser(ctx: TenantContext, clientUserId: string): Promise<NomineeRow[]> {
      return withTenant(db, ctx.orgId, (tx) => nomineeRepo(tx).listByClientUser(clientUserId));
    },

    create(ctx: TenantContext, input: CreateNomineeInput): Promise<NomineeRow> {
      return withTenant(db, ctx.orgId, (tx) =>
        nomineeRepo(tx).insert({
          id: uuidv7(),
          clientUserId: input.user_id,
          name: input.nominee_name,
          email: input.nominee_email.toLowerCase(),
          mobile: normalisePhone(input.nominee_mobile, defaultCountryCode),
          relationship: input.relationship,
          purpose: input.purpose_of_appointment ?? null,
          at: clock.now(),
        }),
      );
    },

    update(ctx: TenantContext, nomineeId: string, input: UpdateNomineeInput): Promise<NomineeRow> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      const changes = {
        ...input,
        nominee_email: input.nominee_email?.toLowerCase(),
        nominee_mobile: input.nominee_mobile === undefined ? undefined : normalisePhone(input.nominee_mobile, defaultCountryCode),
      };
      return withTenant(db, ctx.orgId, async (tx) => {
        const row = await nomineeRepo(tx).update(nomineeId, changes, clock.now());
        if (!row) throw notFound();
        return row;
      });
    },

    remove(ctx: TenantContext, nomineeId: string): Promise<{ message: string }> {
      if (!isUuid(nomineeId)) return Promise.reject(notFound());
      return withTenant(db, ctx.orgId, async (tx) => {
        if (!(await nomineeRepo(tx).remove(nomineeId))) throw notFound();
        return { message: 'Nominee deleted' };
      });
    },
  };
}

export type NomineeService = ReturnType<typeof createNomineeService>;
