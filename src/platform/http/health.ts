// GET /health: 200 when the database answers, 503 when it does not.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/types.js';

const Health = Type.Object({ status: Type.String(), database: Type.String() });

export function installHealth(app: FastifyInstance, db: Database): void {
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
}
