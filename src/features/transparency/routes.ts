// The audit log's checkpoints and proofs. On the organization's host with no credentials (like its
// JWKS): the latest signed checkpoint, their history and consistency proofs, all hashes and sizes, no
// entry's content. Inclusion proofs name an entry by id: owners and admins, or an `admin` key.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { organizationOf, tenantOf, type AccessDeps } from '../../platform/auth/access.js';
import { AppError } from '../../platform/http/errors.js';
import { errorResponses, Nullable, Timestamp } from '../../platform/http/schema-kit.js';
import type { TransparencyService } from './service.js';

const HashHex = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description, examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'] });

const Checkpoint = Type.Object(
  {
    tree_size: Type.Integer({ minimum: 1, description: 'How many audit entries the tree holds (entries seq 1..tree_size)' }),
    root_hash: HashHex('The Merkle tree root (RFC 9162), hex'),
    timestamp: Timestamp('When it was signed'),
    kid: Type.String({ description: "The signing key's id in /.well-known/jwks.json" }),
    jws: Type.String({ description: 'Compact JWS (EdDSA, typ assent-checkpoint+jws) over {format, organization, tree_size, root_hash, timestamp}: what to keep' }),
    tsa_token: Nullable(Type.String({ description: 'Base64 DER RFC 3161 TimeStampToken over the JWS text, when the service has a TSA_URL' })),
  },
  { title: 'Checkpoint' },
);

const ConsistencyProof = Type.Object(
  {
    first: Type.Integer({ minimum: 0 }),
    second: Type.Integer({ minimum: 0 }),
    proof: Type.Array(HashHex('A node hash'), { description: 'RFC 9162 PROOF(first, D[second]), in order; verify with the two roots' }),
  },
  { title: 'ConsistencyProof' },
);

const InclusionProof = Type.Object(
  {
    entry_id: Type.String({ format: 'uuid' }),
    seq: Type.Integer({ minimum: 1 }),
    leaf_index: Type.Integer({ minimum: 0, description: 'seq - 1' }),
    leaf_hash: HashHex("SHA-256(0x00 || the entry's canonical text)"),
    tree_size: Type.Integer({ minimum: 1 }),
    root_hash: HashHex('The root of the tree of tree_size entries'),
    proof: Type.Array(HashHex('A node hash'), { description: 'RFC 9162 PATH(leaf_index, D[tree_size]), leaf to root' }),
    checkpoint: Nullable(Checkpoint, { description: 'The signed checkpoint of that size, when there is one' }),
  },
  { title: 'InclusionProof' },
);

export function transparencyRoutes(app: FastifyInstance, service: TransparencyService, deps: Pick<AccessDeps, 'organizations' | 'baseDomain' | 'trustProxy'>): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const orgOf = async (req: Parameters<typeof organizationOf>[0]) => {
    const org = await organizationOf(req, deps);
    if (!org) throw new AppError('not_found', 'No organization at this address');
    return org;
  };

  r.get('/.well-known/assent/checkpoints/latest', {
    config: { access: 'public' },
    schema: {
      tags: ['Audit proofs'],
      summary: "The audit log's latest signed checkpoint",
      description:
        "On the organization's host, no credentials. The Merkle tree of its audit log (RFC 9162) at a moment: size, root and time, signed with the organization's key (verify the `jws` with /.well-known/jwks.json). A new one follows new entries within about a minute. Keep one: any later checkpoint must be consistent with it (`/.well-known/assent/checkpoints/consistency`), or the log was changed. 404 `no_checkpoint` before the first entry.",
      response: { 200: Checkpoint, ...errorResponses(404) },
    },
    handler: async (req) => service.latest((await orgOf(req)).id),
  });

  r.get('/.well-known/assent/checkpoints', {
    config: { access: 'public' },
    schema: {
      tags: ['Audit proofs'],
      summary: 'Signed checkpoints, newest first',
      description: "On the organization's host, no credentials. `before_size` pages back: checkpoints of smaller trees than it. `limit` 1-200 (default 50).",
      querystring: Type.Object({
        before_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      }),
      response: { 200: Type.Object({ data: Type.Array(Checkpoint), limit: Type.Integer() }, { title: 'CheckpointList' }), ...errorResponses(400, 404) },
    },
    handler: async (req) => service.list((await orgOf(req)).id, req.query),
  });

  r.get('/.well-known/assent/checkpoints/consistency', {
    config: { access: 'public' },
    schema: {
      tags: ['Audit proofs'],
      summary: 'Consistency proof between two tree sizes',
      description:
        "On the organization's host, no credentials. RFC 9162 PROOF(first, D[second]): with the roots of two checkpoints (first <= second), it shows the larger tree extends the smaller one unchanged. `second` at most the tree's current size. `assent witness` and `assent audit verify --checkpoint` use it.",
      querystring: Type.Object({
        first: Type.Integer({ minimum: 0, maximum: 2147483647 }),
        second: Type.Integer({ minimum: 0, maximum: 2147483647 }),
      }),
      response: { 200: ConsistencyProof, ...errorResponses(400, 404) },
    },
    handler: async (req) => service.consistency((await orgOf(req)).id, req.query.first, req.query.second),
  });

  r.get('/api/v1/audit-log/:id/proof', {
    config: { access: { apiKey: 'admin', bearer: ['owner', 'admin'] } },
    schema: {
      tags: ['Audit proofs'],
      security: [{ ApiKey: [] }, { Bearer: [] }],
      summary: 'Inclusion proof of one audit entry',
      description:
        'RFC 9162 PATH for the entry in the tree of `tree_size` entries (default: the latest checkpoint that contains it, else the whole sealed tree), with that checkpoint when there is one. 409 `entry_not_sealed` in the seconds before the entry is sealed. Owners and admins, or an `admin` key.',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
      querystring: Type.Object({ tree_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })) }),
      response: { 200: InclusionProof, ...errorResponses(400, 401, 403, 404, 409) },
    },
    handler: (req) => service.inclusion(tenantOf(req), req.params.id, req.query.tree_size),
  });
}
