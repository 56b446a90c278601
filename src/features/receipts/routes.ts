// Signing key routes: the public JWKS on the organization's host, and the keys' list and rotation for
// the organization's owners and admins.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { organizationOf, tenantOf, type AccessDeps } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { errorResponses, NullableTimestamp, Timestamp } from '../../platform/http/schema-kit.js';
import type { ReceiptService } from './service.js';

const PublicJwk = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String({ description: 'The public key, base64url' }),
    kid: Type.String({ description: "The key's id: its RFC 7638 thumbprint; a receipt's JWS header names it" }),
    alg: Type.Literal('EdDSA'),
    use: Type.Literal('sig'),
  },
  { title: 'SigningPublicJwk' },
);

const PublishedJwk = Type.Object(
  {
    ...PublicJwk.properties,
    not_before: Timestamp('When the key became the current key: a receipt signed before it does not verify'),
    not_after: Type.Optional(Timestamp('When a rotation retired the key (absent while it is current): a receipt signed after it does not verify')),
  },
  { title: 'PublishedSigningJwk' },
);

const Jwks = Type.Object({ keys: Type.Array(PublishedJwk) }, { title: 'JsonWebKeySet' });

const SigningKey = Type.Object(
  {
    kid: Type.String(),
    alg: Type.Literal('EdDSA'),
    current: Type.Boolean({ description: 'true for the key new receipts are signed with' }),
    created_at: Timestamp(),
    retired_at: NullableTimestamp('When a rotation replaced it; its receipts still verify'),
    public_jwk: PublicJwk,
  },
  { title: 'SigningKey' },
);

const RotatedSigningKey = Type.Object(
  { ...SigningKey.properties, retired_kid: Type.Union([Type.String(), Type.Null()], { description: 'The key it replaced' }) },
  { title: 'RotatedSigningKey' },
);

const access = { apiKey: 'admin', bearer: ['owner', 'admin'] } as const;
const security: Record<string, string[]>[] = [{ Bearer: [] }, { ApiKey: [] }];

export function receiptRoutes(app: FastifyInstance, service: ReceiptService, deps: Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.get('/.well-known/jwks.json', {
    config: { access: 'public' },
    schema: {
      tags: ['Consent receipts'],
      summary: "The organization's public signing keys",
      description:
        "On the organization's host, no credentials: every Ed25519 public key it has signed consent receipts with, current and retired (a rotation keeps the old ones, so old receipts still verify), oldest first, each with its validity: `not_before` (when it became current) and `not_after` (when a rotation retired it). A receipt whose signing time falls outside its key's validity does not verify. Verify a receipt offline with this set alone (docs/api.md shows how). A host that names no organization: 404.",
      response: { 200: Jwks, ...errorResponses(404) },
    },
    handler: async (req, reply) => {
      const org = await organizationOf(req, deps);
      if (!org) throw new AppError('not_found', 'No organization at this address');
      reply.header('cache-control', 'public, max-age=300');
      return service.jwks(org.id);
    },
  });

  r.get('/api/v1/organization/signing-keys', {
    config: { access },
    schema: {
      tags: ['Consent receipts'],
      security,
      summary: "The organization's signing keys",
      description: 'Every key the organization has signed receipts with, oldest first, public parts only (the private part never leaves the service). Owners and admins, or an `admin` key.',
      response: { 200: Type.Array(SigningKey), ...errorResponses(401, 403) },
    },
    handler: (req) => service.list(tenantOf(req)),
  });

  r.post('/api/v1/organization/signing-keys/rotate', {
    config: { access, idempotent: true },
    schema: {
      tags: ['Consent receipts'],
      security,
      summary: 'Rotate the signing key',
      description:
        'Makes a new Ed25519 key the current one: receipts from now on carry its `kid`. The old key is retired, not deleted: it stays in `/.well-known/jwks.json`, so every receipt it signed still verifies. Audited (`signing_key.rotated`). 409 when another rotation runs at the same moment. No body; an `Idempotency-Key` makes a retried request rotate once. Owners and admins, or an `admin` key.',
      response: { 201: RotatedSigningKey, ...errorResponses(401, 403, 409) },
    },
    handler: async (req, reply) => reply.code(201).send(await service.rotate(tenantOf(req))),
  });
}
