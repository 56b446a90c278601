// /auth/login, /auth/refresh, /auth/logout: on any host (a user is global; membership is checked
// where a token is used).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { bearerToken } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { SessionService } from './sessions.js';

const TokenPair = Type.Object(
  {
    access_token: Type.String({ description: 'Send as `Authorization: Bearer <access_token>`' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds the access token lives (3600)' }),
    refresh_token: Type.String({ description: 'Exchange at /auth/refresh for a new pair (30 days, single use)' }),
  },
  { title: 'TokenPair' },
);

// Passwords are taken as typed: no trimming.
const config = { access: 'public', trimStrings: false } as const;

export function authRoutes(app: FastifyInstance, sessions: SessionService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post('/auth/login', {
    config,
    schema: {
      tags: ['Authentication'],
      summary: 'Log in',
      description:
        'Email and password to a token pair. A wrong password and an unknown email get the same 401. After 10 failures for one email from one address, or 50 attempts from one address, within 15 minutes: 429 with `Retry-After` (the owner signing in from another address is not held back). Attempts are counted before the password is checked, so concurrent attempts cannot pass the cap.',
      body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }), password: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: { 200: TokenPair, ...errorResponses(400, 401, 413, 415, 429) },
    },
    handler: (req) => sessions.login({ email: req.body.email, password: req.body.password, address: req.ip }),
  });

  r.post('/auth/refresh', {
    config,
    schema: {
      tags: ['Authentication'],
      summary: 'Rotate the tokens',
      description:
        'A new access and refresh token; the old access token stops working at once and the refresh token is spent. Using a spent refresh token again ends the whole session (401).',
      body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: { 200: TokenPair, ...errorResponses(400, 401, 413, 415) },
    },
    handler: (req) => sessions.refresh(req.body.refresh_token),
  });

  r.post('/auth/logout', {
    config,
    schema: {
      tags: ['Authentication'],
      summary: 'Log out',
      description: 'Ends the session of the access token in `Authorization: Bearer …`: its access and refresh tokens stop working at once. 204.',
      security: [{ Bearer: [] }],
      response: { 204: Type.Null({ description: 'Logged out' }), ...errorResponses(401) },
    },
    handler: async (req, reply) => {
      await sessions.logout(bearerToken(req));
      return reply.code(204).send(null);
    },
  });
}
