// Users (global) and their memberships: created by the CLI or by an organization's owners and admins.
// Runs on the system connection: a user exists before, and across, organizations.
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/http/errors.js';
import { isUniqueViolation } from '../../platform/db/tenant-tx.js';
import { uuidv7 } from '../../platform/ids.js';
import { hashPassword, passwordProblem } from '../../platform/crypto/passwords.js';
import type { Role } from '../../platform/auth/bearer-verifier.js';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface UserRecord {
  id: string;
  email: string;
  created_at: Date;
}

export interface UserDeps {
  db: Database;
  clock: Clock;
  /** Told when a user's sessions end or a membership changes, so this process forgets them at once. */
  onUserChanged?: (userId: string) => void;
  onMembershipChanged?: (orgId: string, userId: string) => void;
}

export function normaliseEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw new AppError('validation_failed', `"${email}" is not a valid email address`, [{ field: 'email', message: 'must be a valid email address' }]);
  return e;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new AppError('validation_failed', `Password ${problem}`, [{ field: 'password', message: problem }]);
}

export function checkRole(role: string): Role {
  if (!ROLES.includes(role as Role)) {
    throw new AppError('validation_failed', `Unknown role "${role}": use ${ROLES.join(', ')}`, [{ field: 'role', message: `must be one of: ${ROLES.join(', ')}` }]);
  }
  return role as Role;
}

export function createUserService({ db, clock, onUserChanged, onMembershipChanged }: UserDeps) {
  async function userByEmail(email: string): Promise<UserRecord> {
    const rows = await db.system.query<UserRecord>('select id, email, created_at from users where email = $1', [normaliseEmail(email)]);
    if (!rows[0]) throw new AppError('not_found', `No user with email ${email}`);
    return rows[0];
  }

  return {
    userByEmail,

    async createUser(input: { email: string; password: string }): Promise<UserRecord> {
      const email = normaliseEmail(input.email);
      checkPassword(input.password);
      const now = clock.now();
      try {
        const rows = await db.system.query<UserRecord>(
          'insert into users (id, email, password_hash, created_at, password_changed_at) values ($1, $2, $3, $4, $4) returning id, email, created_at',
          [uuidv7(), email, await hashPassword(input.password), now],
        );
        return rows[0]!;
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('conflict', `A user with email ${email} already exists`);
        throw e;
      }
    },

    /** Sets a new password and ends every session of the user at once. */
    async setPassword(email: string, password: string): Promise<UserRecord> {
      checkPassword(password);
      const user = await userByEmail(email);
      const now = clock.now();
      await db.system.transaction(async (tx) => {
        await tx.query('update users set password_hash = $2, password_changed_at = $3 where id = $1', [user.id, await hashPassword(password), now]);
        await tx.query(
          "update auth_sessions set revoked_at = $2, revoked_reason = 'password_changed' where user_id = $1 and revoked_at is null",
          [user.id, now],
        );
      });
      onUserChanged?.(user.id);
      return user;
    },

    /** Adds a user to an organization, or changes their role there. */
    async addMember(orgId: string, userId: string, role: Role): Promise<{ role: Role; created_at: Date }> {
      const rows = await db.system.query<{ role: Role; created_at: Date }>(
        `insert into memberships (org_id, user_id, role, created_at) values ($1, $2, $3, $4)
         on conflict (org_id, user_id) do update set role = excluded.role
         returning role, created_at`,
        [orgId, userId, checkRole(role), clock.now()],
      );
      onMembershipChanged?.(orgId, userId);
      return rows[0]!;
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
