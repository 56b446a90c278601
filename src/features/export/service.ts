// The export for the regulator (contract §10): one gzipped tar of everything the organization must be
// able to prove, streamed as it is read (a table at a time, parts of at most PART_BYTES), with a
// manifest of SHA-256 sums. verify.ts checks such an archive offline. The layout is in docs/export.md.
import type { Readable } from 'node:stream';
import type { Database } from '../../platform/db/types.js';
import { tenantReads, withTenant, type TenantTx } from '../../platform/db/tenant-tx.js';
import type { Clock } from '../../platform/clock.js';
import type { TenantContext } from '../../platform/auth/access.js';
import { recordAudit, sha256Hex } from '../audit/index.js';
import { publishedKeysOf, type ReceiptSigner } from '../receipts/index.js';
import type { Sequencer } from '../transparency/index.js';
import { ArchiveWriter, FORMAT, JWKS, META, PartWriter, TABLES, type TableName } from './archive.js';
import { signManifest } from './manifest.js';
import { auditHeadOf, organizationOf, rowsOf } from './repo.js';

export interface ExportedOrganization {
  id: string;
  slug: string;
  name: string;
}

export interface ExportStarted {
  /** The gzipped tar, produced as it is read. */
  stream: Readable;
  /** The archive's file name: `<root>.tar.gz`. */
  filename: string;
  /**
   * Settles once the archive is complete, with the SHA-256 of MANIFEST.sha256 and the key that signed
   * it (MANIFEST.jws); rejects when the export failed.
   */
  done: Promise<{ manifestSha256: string; kid: string; checkpoint: LatestCheckpoint | null; rows: Record<TableName, number> }>;
}

/** The archive's latest audit checkpoint (the signed manifest names it). */
interface LatestCheckpoint {
  tree_size: number;
  root_hash: string;
  jws: string;
}

/** 2026-11-28T01:02:03.456Z -> 20261128T010203Z */
function stamp(at: Date): string {
  return at.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

/** How each row leaves the database: timestamps as ISO strings (JSON.stringify does that), bigints as numbers. */
function shapeRow(table: TableName, row: Record<string, unknown>): Record<string, unknown> {
  if (table === 'notice-versions') return { ...row, notice_sha256: sha256Hex(row.notice as string) };
  if (table === 'audit-checkpoints') {
    return {
      tree_size: Number(row.tree_size),
      root_hash: row.root_hash,
      timestamp: (row.timestamp as Date).toISOString(),
      kid: row.kid,
      jws: row.jws,
      tsa_token: row.tsa_token ? Buffer.from(row.tsa_token as Uint8Array).toString('base64') : null,
    };
  }
  if (table === 'audit-log') {
    return {
      seq: Number(row.seq),
      id: row.id,
      org_id: row.org_id,
      at: row.at,
      actor: { type: row.actor_type, id: row.actor_id },
      action: row.action,
      target: { type: row.target_type, id: row.target_id },
      request_id: row.request_id,
      details: row.details,
      prev_hash: row.prev_hash,
      hash: row.hash,
      canonical: row.canonical,
    };
  }
  return row;
}

/**
 * What the archive reads from. PostgreSQL: one read-only REPEATABLE READ tenant transaction, so every
 * file is of one moment. PGlite: its one connection is the whole server's, so each batch is a read of
 * its own and other requests go on between them; rows written meanwhile may or may not be included,
 * and the audit log is taken up to the chain head read first, so it is whole either way.
 */
function readSnapshot<T>(db: Database, orgId: string, fn: (tx: TenantTx) => Promise<T>): Promise<T> {
  if (db.kind === 'postgres') {
    return withTenant(db, orgId, async (tx) => {
      await tx.query('set transaction isolation level repeatable read, read only');
      return fn(tx);
    });
  }
  return fn(tenantReads(db, orgId));
}

export interface ExportServiceDeps {
  db: Database;
  clock: Clock;
  /** The receipts' signer: the organization's current key signs the manifest (MANIFEST.jws). */
  signer: ReceiptSigner;
  /** Seals the audit entries written so far and signs a checkpoint of them before the export reads. */
  sequencer: Pick<Sequencer, 'sealNow'>;
}

export function createExportService({ db, clock, signer, sequencer }: ExportServiceDeps) {
  function start(org: ExportedOrganization): ExportStarted {
    const exportedAt = clock.now();
    const root = `${org.slug}-export-${stamp(exportedAt)}`;
    const writer = new ArchiveWriter(root, exportedAt);
    const sink = (name: string, content: Buffer) => writer.add(name, content);
    // Every entry committed so far sealed, with a checkpoint of them; then the current key, read (or, for
    // an organization older than its key, made) before the read-only snapshot.
    const key = sequencer.sealNow(org.id).then(() => withTenant(db, org.id, async (tx) => (await signer.prepare(tx, null)).key));
    const done = key.then((signingKey) => readSnapshot(db, org.id, async (tx) => {
      const settings = await organizationOf(tx);
      const head = await auditHeadOf(tx);
      const jwks = await publishedKeysOf(tx);
      await sink(JWKS, Buffer.from(JSON.stringify(jwks, null, 2) + '\n'));
      const tables: Record<string, { rows: number; parts: string[] }> = {};
      let latest: LatestCheckpoint | null = null;
      for (const table of TABLES) {
        const parts = new PartWriter(table, sink);
        const extra = table === 'audit-log' || table === 'audit-checkpoints' ? [head.tree.size] : [];
        if (table === 'audit-checkpoints') latest = null;
        for await (const row of rowsOf(tx, table, extra)) {
          const shaped = shapeRow(table, row);
          if (table === 'audit-checkpoints') latest = shaped as unknown as LatestCheckpoint;
          await parts.push(shaped);
        }
        await parts.flush();
        tables[table] = { rows: parts.rows, parts: parts.parts };
      }
      const meta = {
        format: FORMAT,
        organization: { id: org.id, slug: org.slug, name: org.name, grievance_period_days: settings?.grievance_period_days ?? null },
        exported_at: exportedAt.toISOString(),
        snapshot: db.kind === 'postgres' ? 'one transaction' : 'batches; the audit log up to its head',
        audit_chain_head: head.chain,
        audit_tree: head.tree,
        audit_unsealed: head.unsealed,
        tables,
      };
      await sink(META, Buffer.from(JSON.stringify(meta, null, 2) + '\n'));
      const manifestSha256 = await writer.finish((sha256) =>
        signManifest(
          {
            format: FORMAT,
            organization: { id: org.id, slug: org.slug },
            exported_at: meta.exported_at,
            manifest_sha256: sha256,
            audit_chain_head: head.chain,
            audit_checkpoint: latest ? { tree_size: latest.tree_size, root_hash: latest.root_hash, jws: latest.jws } : null,
          },
          signingKey,
        ),
      );
      return {
        manifestSha256,
        kid: signingKey.kid,
        checkpoint: latest as LatestCheckpoint | null,
        rows: Object.fromEntries(Object.entries(tables).map(([t, v]) => [t, v.rows])) as Record<TableName, number>,
      };
    }));
    done.catch((e: Error) => writer.fail(e));
    return { stream: writer.output, filename: `${root}.tar.gz`, done };
  }

  return {
    /** For the CLI: the organization's archive (the operator who runs it is not an actor of the audit log). */
    exportOrganization: start,
    /** For an owner through the API: the export is recorded in the audit log first, so the archive holds its own entry. */
    async exportForOwner(ctx: TenantContext): Promise<ExportStarted> {
      await withTenant(db, ctx.orgId, (tx) => recordAudit(tx, ctx, clock.now(), { action: 'organization.exported', targetType: 'organization', targetId: ctx.orgId }));
      return start({ id: ctx.orgId, slug: ctx.slug, name: ctx.orgName });
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
