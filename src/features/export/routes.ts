// GET /api/v1/export: the organization's archive for the regulator, streamed (contract §10). Owners
// only: the archive holds every data principal's records, more than any API key's scope should reach.
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../../platform/auth/access.js';
import { errorResponses } from '../../platform/http/schema-kit.js';
import type { ExportService } from './service.js';

export function exportRoutes(app: FastifyInstance, service: ExportService): void {
  app.get('/api/v1/export', {
    config: { access: { bearer: ['owner'] } },
    schema: {
      tags: ['Organization'],
      security: [{ Bearer: [] }],
      summary: 'Export for the regulator',
      description:
        "The organization's records in one gzipped tar, streamed as it is read: every consent record with its signed receipt, every notice version, the consent links, every " +
        'grievance ticket with its status history and messages, nominees, the audit log with its hash chain, the public signing keys (`jwks.json`), ' +
        '`export.json` (what the archive holds), `MANIFEST.sha256` (the SHA-256 of every other file, as `sha256sum -c` reads it) and `MANIFEST.jws` (that manifest signed with the organization\'s key). ' +
        'The SHA-256 of `MANIFEST.sha256`, the one value that pins the archive, and the signing key come as HTTP trailers once the archive is complete (`Assent-Manifest-SHA256`, `Assent-Manifest-Kid`; announced in the `Trailer` header): keep the hash apart from the file. ' +
        '`assent export verify FILE [--jwks URL]` checks an archive offline. Owners only: a Bearer token of an owner (another role: 403); API keys, even `admin` ones, are not accepted (401). ' +
        'The export is recorded in the audit log (`organization.exported`) before it starts, so the archive holds that entry.',
      response: {
        200: {
          description: 'The archive (`Content-Disposition: attachment; filename="<slug>-export-<UTC time>.tar.gz"`)',
          content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
        },
        ...errorResponses(401, 403),
      },
    },
    handler: async (req, reply) => {
      const started = await service.exportForOwner(tenantOf(req));
      // A failure half-way can no longer change the status: it cuts the stream, and the client's gzip/tar reader fails.
      started.done.catch((e: Error) => req.log.error({ err: e }, 'export failed'));
      // The manifest's hash is known only once the last file is written: trailers, after the body.
      return reply
        .trailer('assent-manifest-sha256', async () => (await started.done).manifestSha256)
        .trailer('assent-manifest-kid', async () => (await started.done).kid)
        .trailer('assent-checkpoint-size', async () => String((await started.done).checkpoint?.tree_size ?? 0))
        .trailer('assent-checkpoint-root', async () => (await started.done).checkpoint?.root_hash ?? '')
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="${started.filename}"`)
        .header('cache-control', 'no-store')
        .send(started.stream);
    },
  });
}
