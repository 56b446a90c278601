// OpenAPI 3.1 generated from the route schemas, at /openapi.json, and a reference page at /docs.
// openapi-document.ts makes it a product (operationIds, named schemas, headers, security, examples),
// from what each route declares; redocly.yaml's recommended rules check the result (test/contract/openapi.test.ts).
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { finishDocument, type DocumentedRoute } from './openapi-document.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Response headers the route sets itself (names declared in openapi-document.ts HEADERS), for the document. */
    sendsHeaders?: readonly string[];
  }
}

export interface OpenApiOptions {
  publicUrl: URL;
  /** Whether a route is rate limited (so it documents 429 and the RateLimit-* headers). */
  rateLimited(route: RouteOptions): boolean;
  /** Whether a route answers browsers' CORS requests. */
  cors(route: RouteOptions): boolean;
}

/** `/grievance/:ticket_id` -> `/grievance/{ticket_id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export async function installOpenApi(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const { publicUrl } = options;
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routes.push({
        method,
        path: openApiPath(route.url),
        access: route.config?.access,
        rateLimited: options.rateLimited(route),
        cors: options.cors(route),
        idempotent: route.config?.idempotent === true,
        sendsHeaders: route.config?.sendsHeaders ?? [],
      });
    }
  });

  const origin = `${publicUrl.protocol}//${publicUrl.host}`;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assent API',
        version: '1.0.0',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description: [
          'Privacy-rights and consent service. Every organization is served at its own subdomain:',
          `organization \`acme\` at \`${publicUrl.protocol}//acme.${publicUrl.host}\`. The host decides the organization;`,
          'a key sent to another organization\'s host is an invalid key.',
          `On the bare host (\`${origin}\`, or any address that is not an organization's subdomain) the credential decides:`,
          "an API key or a data principal's token selects its own organization, a member's Bearer token the one `X-Org-Id` names.",
          '',
          'Errors are JSON `{"error": "...", "code": "..."}`; branch on `code`. Validation errors (400) add `details: [{field, message}]`, one per problem.',
          'Every response carries `X-Request-Id` (yours when it is 1-128 characters of `A-Za-z0-9._-`).',
          'Timestamps are ISO 8601 UTC with milliseconds; input timestamps need a time zone.',
        ].join('\n'),
      },
      servers: [
        {
          url: `${publicUrl.protocol}//{organization}.{host}`,
          description: "An organization's own host",
          variables: { organization: { default: 'acme' }, host: { default: publicUrl.host } },
        },
        { url: '/', description: `The host this document was read from (e.g. ${origin})` },
      ],
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
    transformObject: (documentObject) => finishDocument((documentObject as { openapiObject: Record<string, any> }).openapiObject, routes),
  });
  // staticCSP: the page and its files carry a Content-Security-Policy (scripts and styles from itself only).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => app.swagger());
}
