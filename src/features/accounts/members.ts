// An organization's members, managed by its owners and admins through the API. Each change and its
// audit entry commit in one tenant transaction (row-level security on memberships); a new user is
// created first on the system connection, since users are global.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { AccessErrors } from '../../platform/auth/access.js';
import type { Role } from '../../platform/auth/bearer-verifier.js';
import { AppError } from '../../platform/http/errors.js';
import { isUniqueViolation, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import { selectPage } from '../../platform/db/paging.js';
import { isUuid } from '../../platform/ids.js';
import { recordAudit } from '../audit/index.js';
import { checkRole, normaliseEmail, type UserService } from './users.js';

export interface MemberRecord {
  user_id: string;
  email: string;
  role: Role;
  created_at: Date;
}

export interface MemberDeps {
  db: Database;
  clock: Clock;
  users: Pick<UserService, 'createUser'>;
  /** Told after a membership changes, so this process applies it to the next request at once. */
  onMembershipChanged?: (orgId: string, userId: string) => void;
}

const notFound = () => new AppError('not_found', 'Member not found');
const lastOwner = () =>
  new AppError('conflict', 'The last owner can be neither removed nor demoted: make another member owner first');

function membersRepo(tx: TenantTx) {
  return {
    list(limit: number, offset: number): Promise<{ data: MemberRecord[]; count: number }> {
      return selectPage<MemberRecord>(tx, {
        columns: 'm.user_id, u.email, m.role, m.created_at',
        from: 'memberships m join users u on u.id = m.user_id',
        where: 'm.org_id = $1',
        params: [tx.orgId],
        orderBy: 'm.created_at, m.user_id',
        limit,
        offset,
      });
    },

    async userIdByEmail(email: string): Promise<string | null> {
      return (await tx.query<{ id: string }>('select id from users where email = $1', [email]))[0]?.id ?? null;
    },

    async insert(userId: string, role: Role, at: Date): Promise<MemberRecord> {
      const rows = await tx.query<MemberRecord>(
        `with added as (
           insert into memberships (org_id, user_id, role, created_at) values ($1, $2, $3, $4)
           returning user_id, role, created_at)
         select a.user_id, u.email, a.role, a.created_at from added a join users u on u.id = a.user_id`,
        [tx.orgId, userId, role, at],
      );
      return rows[0]!;
    },

    /**
     * The member and the organization's owners, locked (in one order, so two changes never deadlock):
     * two owners demoting each other at once cannot leave the organization without one.
     */
    async lockWithOwners(userId: string): Promise<{ member: MemberRecord | null; owners: number }> {
      const rows = await tx.query<MemberRecord>(
        `select m.user_id, u.email, m.role, m.created_at
           from memberships m join users u on u.id = m.user_id
          where m.org_id = $1 and (m.user_id = $2 or m.role = 'owner')
          order by m.user_id for update of m`,
        [tx.orgId, userId],
      );
      return { member: rows.find((r) => r.user_id === userId) ?? null, owners: rows.filter((r) => r.role === 'owner').length };
    },

    async setRole(userId: string, role: Role): Promise<void> {
      await tx.query('update memberships set role = $3 where org_id = $1 and user_id = $2', [tx.orgId, userId, role]);
    },

    async remove(userId: string): Promise<void> {
      await tx.query('delete from memberships where org_id = $1 and user_id = $2', [tx.orgId, userId]);
    },
  };
}

/** Only an owner grants, changes or takes away the owner role. */
function assertMayTouchOwner(ctx: TenantContext, ...roles: Role[]): void {
  const callerRole = ctx.actor.type === 'user' ? ctx.actor.role : null;
  if (roles.includes('owner') && callerRole !== 'owner') throw AccessErrors.roleTooLow();
}

export function createMemberService({ db, clock, users, onMembershipChanged }: MemberDeps) {
  return {
    list(ctx: TenantContext, q: { limit?: number; offset?: number }) {
      const limit = q.limit ?? 50;
      const offset = q.offset ?? 0;
      return withTenant(db, ctx.orgId, async (tx) => ({ ...(await membersRepo(tx).list(limit, offset)), limit, offset }));
    },

    /** Adds an existing user, or (with a password) creates the user first. */
    async add(ctx: TenantContext, input: { email: string; role: string; password?: string }): Promise<MemberRecord> {
      const role = checkRole(input.role);
      assertMayTouchOwner(ctx, role);
      const email = normaliseEmail(input.email);
      let created: string | null = null;
      if (input.password !== undefined) {
        try {
          created = (await users.createUser({ email, password: input.password })).id;
        } catch (e) {
          if (e instanceof AppError && e.code === 'conflict') {
            throw new AppError('conflict', 'A user with this email already exists: add them without a password');
          }
          throw e;
        }
      }
      const at = clock.now();
      const member = await withTenant(db, ctx.orgId, async (tx) => {
        const repo = membersRepo(tx);
        const userId = created ?? (await repo.userIdByEmail(email));
        if (!userId) throw new AppError('not_found', 'No user with this email: send a password to create one');
        let added: MemberRecord;
        try {
          added = await repo.insert(userId, role, at);
        } catch (e) {
          if (isUniqueViolation(e)) throw new AppError('conflict', 'This user is already a member of the organization');
          throw e;
        }
        await recordAudit(tx, ctx, at, {
          action: 'member.added',
          targetType: 'member',
          targetId: userId,
          details: { role, user_created: created !== null },
        });
        return added;
      });
      onMembershipChanged?.(ctx.orgId, member.user_id);
      return member;
    },

    async changeRole(ctx: TenantContext, userId: string, newRole: string): Promise<MemberRecord> {
      const role = checkRole(newRole);
      assertMayTouchOwner(ctx, role);
      if (!isUuid(userId)) throw notFound();
      const at = clock.now();
      const member = await withTenant(db, ctx.orgId, async (tx) => {
        const repo = membersRepo(tx);
        const { member, owners } = await repo.lockWithOwners(userId);
        if (!member) throw notFound();
        assertMayTouchOwner(ctx, member.role);
        if (member.role === role) return member;
        if (member.role === 'owner' && owners <= 1) throw lastOwner();
        await repo.setRole(userId, role);
        await recordAudit(tx, ctx, at, {
          action: 'member.role_changed',
          targetType: 'member',
          targetId: userId,
          details: { role, previous_role: member.role },
        });
        return { ...member, role };
      });
      onMembershipChanged?.(ctx.orgId, userId);
      return member;
    },

    async remove(ctx: TenantContext, userId: string): Promise<void> {
      if (!isUuid(userId)) throw notFound();
      const at = clock.now();
      await withTenant(db, ctx.orgId, async (tx) => {
        const repo = membersRepo(tx);
        const { member, owners } = await repo.lockWithOwners(userId);
        if (!member) throw notFound();
        assertMayTouchOwner(ctx, member.role);
        if (member.role === 'owner' && owners <= 1) throw lastOwner();
        await repo.remove(userId);
        await recordAudit(tx, ctx, at, { action: 'member.removed', targetType: 'member', targetId: userId, details: { previous_role: member.role } });
      });
      onMembershipChanged?.(ctx.orgId, userId);
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
