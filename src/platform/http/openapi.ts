// OpenAPI 3.1 generated from the route schemas, at /openapi.json, and a reference page at /docs.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export async function installOpenApi(app: FastifyInstance, publicUrl: URL): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assent API',
        version: '1.0.0',
        description: [
          'Privacy-rights and consent service. Every organization is served at its own subdomain:',
          `organization \`acme\` at \`${publicUrl.protocol}//acme.${publicUrl.host}\`. The host decides the organization;`,
          'a key sent to another organization\'s host is an invalid key.',
          '',
          'Errors are JSON `{"error": "..."}`; validation errors (400) add `details: [{field, message}]`, one per problem.',
          'Every response carries `X-Request-Id` (yours when it is 1-128 characters of `A-Za-z0-9._-`).',
          'Timestamps are ISO 8601 UTC with milliseconds; input timestamps need a time zone.',
        ].join('\n'),
      },
      servers: [{ url: `${publicUrl.protocol}//{organization}.${publicUrl.host}`, variables: { organization: { default: 'acme' } } }],
      components: {
        securitySchemes: {
          ApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'ask_live_ + 32 characters, shown once at creation. Scopes: admin, grievances, nominees, consent.',
          },
          Bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An access token from POST /auth/login (1 hour). The user must be a member of the organization addressed.',
          },
          DataPrincipal: {
            type: 'http',
            scheme: 'bearer',
            description:
              "A data principal's token (dpt_ + 32 characters, at most 1 hour): minted by the organization (POST /api/v1/data-principals/{dp_id}/tokens) or earned with a one-time code (POST /rights/otp/verify). Acts for that one person only.",
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => app.swagger());
}
