// Health endpoints, on every host, without credentials:
// - GET /health: 200 when the database answers `select 1`, 503 when it does not (kept as it was).
// - GET /health/live: the process answers (a liveness probe: restart it when this fails).
// - GET /health/ready: this process should get traffic: started and not closing, the store answers,
//   every migration of this version is applied, and the connecting role can take the tenant role.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { appliedMigrations, listMigrations } from '../db/migrate.js';
import { tenantRoleProblem } from '../db/tenant-role.js';
import type { Database } from '../db/types.js';

const Health = Type.Object({ status: Type.String(), database: Type.String() });
const Live = Type.Object({ status: Type.Literal('ok') });

const Check = Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('skipped'), Type.Literal('not_run')]);
const Ready = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('starting'), Type.Literal('closing'), Type.Literal('unavailable')]),
    checks: Type.Object({ database: Check, migrations: Check, tenant_role: Check }),
    error: Type.Optional(Type.String({ description: 'Why the process is not ready, and what to do' })),
  },
  { description: '`ready` (200); otherwise 503 with the first failed check in `error`' },
);

type Readiness = 'starting' | 'ready' | 'closing';
type CheckResult = 'ok' | 'failed' | 'skipped' | 'not_run';

export interface HealthOptions {
  /** Row-level security is on (ASSENT_RLS): the connecting role must be able to take the tenant role. */
  tenantRole: boolean;
}

export function installHealth(app: FastifyInstance, db: Database, options: HealthOptions): void {
  // Starting until the app is ready (main.ts listens only then); closing from the first close hook on.
  let readiness: Readiness = 'starting';
  app.addHook('onReady', async () => {
    readiness = 'ready';
  });
  app.addHook('preClose', async () => {
    readiness = 'closing';
  });
  const expected = listMigrations().map((m) => m.version);

  app.get('/health', {
    config: { access: 'public' },
    schema: { tags: ['Platform'], summary: 'Liveness and database check', response: { 200: Health, 503: Health } },
    handler: async (request, reply) => {
      try {
        await db.system.query('select 1');
        return { status: 'ok', database: 'ok' };
      } catch (err) {
        request.log.error({ err }, 'health check: database unreachable');
        return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
      }
    },
  });

  app.get('/health/live', {
    config: { access: 'public' },
    schema: { tags: ['Platform'], summary: 'Liveness: the process answers (no database access)', response: { 200: Live } },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/health/ready', {
    config: { access: 'public' },
    schema: {
      tags: ['Platform'],
      summary: 'Readiness: started, the store answers, migrations applied, the tenant role can be taken',
      response: { 200: Ready, 503: Ready },
    },
    handler: async (request, reply) => {
      const checks: { database: CheckResult; migrations: CheckResult; tenant_role: CheckResult } = {
        database: 'not_run',
        migrations: 'not_run',
        tenant_role: options.tenantRole ? 'not_run' : 'skipped',
      };
      if (readiness !== 'ready') {
        const error = readiness === 'starting' ? 'The server is starting' : 'The server is shutting down';
        return reply.code(503).send({ status: readiness, checks, error });
      }
      const fail = (error: string) => {
        request.log.warn({ checks, reason: error }, 'readiness check failed');
        return reply.code(503).send({ status: 'unavailable' as const, checks, error });
      };
      let applied: Set<string>;
      try {
        applied = new Set(await appliedMigrations(db));
        checks.database = 'ok';
      } catch (err) {
        // No answer at all, or no schema_migrations table: tell them apart with the plainest query.
        const answers = await db.system.query('select 1').then(() => true, () => false);
        checks.database = answers ? 'ok' : 'failed';
        if (!answers) {
          request.log.error({ err }, 'readiness check: database unreachable');
          return fail('The database does not answer');
        }
        applied = new Set();
      }
      const missing = expected.filter((v) => !applied.has(v));
      checks.migrations = missing.length === 0 ? 'ok' : 'failed';
      if (missing.length > 0) return fail(`Migrations not applied: ${missing.join(', ')} (run "assent migrate")`);
      if (options.tenantRole) {
        const problem = await tenantRoleProblem(db).catch((err: unknown) => {
          request.log.error({ err }, 'readiness check: tenant role check failed');
          return 'The tenant role could not be checked (see the server log)';
        });
        checks.tenant_role = problem === null ? 'ok' : 'failed';
        if (problem !== null) return fail(problem);
      }
      return { status: 'ready' as const, checks };
    },
  });
}
