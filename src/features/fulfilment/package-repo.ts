// Access-package SQL: the systems' encrypted parts (a row each, content in chunks) and the compiled
// packages. Built from a tenant transaction; org_id is stamped here from it.
import type { TenantTx } from '../../platform/db/tenant-tx.js';
import { isUniqueViolation } from '../../platform/db/tenant-tx.js';
import { AppError } from '../../platform/http/errors.js';

export interface PartRow {
  id: string;
  task_id: string;
  ticket_id: string;
  system_id: string;
  system_name: string;
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: Date;
  erased_at: Date | null;
}

export interface PackageRow {
  id: string;
  ticket_id: string;
  dp_id: string;
  manifest: string;
  manifest_jws: string;
  created_at: Date;
  expires_at: Date;
  erased_at: Date | null;
  downloads: number;
  last_downloaded_at: Date | null;
}

const PART_COLUMNS = `p.id, p.task_id, p.ticket_id, p.system_id, s.name as system_name, p.name, p.content_type, p.size::float8 as size, p.sha256, p.created_at, p.erased_at`;
const PACKAGE_COLUMNS = 'id, ticket_id, dp_id, manifest, manifest_jws, created_at, expires_at, erased_at, downloads, last_downloaded_at';

export function packageRepo(tx: TenantTx) {
  return {
    /** A part and its encrypted chunks, in one statement. */
    async insertPart(p: { id: string; taskId: string; ticketId: string; systemId: string; name: string; contentType: string; size: number; sha256: string; keyEnc: string; chunks: Buffer[] }, at: Date): Promise<void> {
      try {
        await tx.query(
          `with part as (
             insert into fulfilment_parts (org_id, id, task_id, ticket_id, system_id, name, content_type, size, sha256, key_enc, created_at)
             values ($1::uuid, $2::uuid, $3::uuid, $4::text, $5::uuid, $6::text, $7::text, $8::bigint, $9::text, $10::text, $11::timestamptz)
             returning id
           )
           insert into fulfilment_part_chunks (org_id, part_id, seq, data)
           select $1::uuid, part.id, c.seq::int - 1, decode(c.data, 'base64') from part cross join unnest($12::text[]) with ordinality as c(data, seq)`,
          // Chunks travel as base64 text: a bytea[] parameter is not sent alike by both drivers.
          [tx.orgId, p.id, p.taskId, p.ticketId, p.systemId, p.name, p.contentType, p.size, p.sha256, p.keyEnc, at, p.chunks.map((c) => c.toString('base64'))],
        );
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('conflict', `The task already has a part named "${p.name}"`);
        throw e;
      }
    },

    partsOfTicket(ticketId: string): Promise<PartRow[]> {
      return tx.query<PartRow>(
        `select ${PART_COLUMNS} from fulfilment_parts p join fulfilment_systems s on s.org_id = p.org_id and s.id = p.system_id
          where p.org_id = $1::uuid and p.ticket_id = $2::text order by s.name, p.name, p.id`,
        [tx.orgId, ticketId],
      );
    },

    partsOfTask(taskId: string): Promise<PartRow[]> {
      return tx.query<PartRow>(
        `select ${PART_COLUMNS} from fulfilment_parts p join fulfilment_systems s on s.org_id = p.org_id and s.id = p.system_id
          where p.org_id = $1::uuid and p.task_id = $2::uuid order by p.name, p.id`,
        [tx.orgId, taskId],
      );
    },

    async partKey(partId: string): Promise<string | null> {
      const rows = await tx.query<{ key_enc: string | null }>('select key_enc from fulfilment_parts where org_id = $1::uuid and id = $2::uuid', [tx.orgId, partId]);
      return rows[0]?.key_enc ?? null;
    },

    /** A few chunks at a time (the download reads a part in slices, never whole). */
    chunks(partId: string, fromSeq: number, count: number): Promise<{ seq: number; data: Buffer | Uint8Array }[]> {
      return tx.query(
        'select seq, data from fulfilment_part_chunks where org_id = $1::uuid and part_id = $2::uuid and seq >= $3::int order by seq limit $4::int',
        [tx.orgId, partId, fromSeq, count],
      );
    },

    insertPackage(p: { id: string; ticketId: string; dpId: string; manifest: string; manifestJws: string; summary: string; expiresAt: Date }, at: Date): Promise<void> {
      return tx
        .query(
          `insert into access_packages (org_id, id, ticket_id, dp_id, manifest, manifest_jws, summary, created_at, expires_at)
           values ($1::uuid, $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::text, $8::timestamptz, $9::timestamptz)
           on conflict (org_id, ticket_id) do nothing`,
          [tx.orgId, p.id, p.ticketId, p.dpId, p.manifest, p.manifestJws, p.summary, at, p.expiresAt],
        )
        .then(() => undefined);
    },

    async packageOfTicket(ticketId: string): Promise<PackageRow | null> {
      const rows = await tx.query<PackageRow>(`select ${PACKAGE_COLUMNS} from access_packages where org_id = $1::uuid and ticket_id = $2::text`, [tx.orgId, ticketId]);
      return rows[0] ?? null;
    },

    /** One person's packages, newest first. */
    packagesOf(dpId: string): Promise<PackageRow[]> {
      return tx.query<PackageRow>(`select ${PACKAGE_COLUMNS} from access_packages where org_id = $1::uuid and dp_id = $2::text order by created_at desc, id desc`, [tx.orgId, dpId]);
    },

    /** One of the person's packages (another person's: null), with its summary. */
    async packageOf(dpId: string, id: string): Promise<(PackageRow & { summary: string | null }) | null> {
      const rows = await tx.query<PackageRow & { summary: string | null }>(
        `select ${PACKAGE_COLUMNS}, summary from access_packages where org_id = $1::uuid and dp_id = $2::text and id = $3::uuid`,
        [tx.orgId, dpId, id],
      );
      return rows[0] ?? null;
    },

    countDownload(id: string, at: Date): Promise<unknown> {
      return tx.query('update access_packages set downloads = downloads + 1, last_downloaded_at = $3::timestamptz where org_id = $1::uuid and id = $2::uuid', [tx.orgId, id, at]);
    },

    /**
     * Erases the content of the organization's packages past their 14 days: the parts' chunks and data
     * keys and the packaged summary go; the package row, its signed manifest (names, sizes, SHA-256) and
     * the part rows stay, with erased_at: the fact is kept. Returns the packages erased.
     */
    async eraseExpired(now: Date, limit: number): Promise<string[]> {
      const rows = await tx.query<{ id: string; ticket_id: string }>(
        `with due as (
           select id, ticket_id from access_packages where org_id = $1::uuid and erased_at is null and expires_at <= $2::timestamptz
            order by expires_at limit $3::int for update skip locked
         ), pkg as (
           update access_packages a set erased_at = $2::timestamptz, summary = null from due where a.org_id = $1::uuid and a.id = due.id returning a.id, a.ticket_id
         ), parts as (
           update fulfilment_parts p set erased_at = $2::timestamptz, key_enc = null from pkg where p.org_id = $1::uuid and p.ticket_id = pkg.ticket_id returning p.id
         ), gone as (
           delete from fulfilment_part_chunks c using parts where c.org_id = $1::uuid and c.part_id = parts.id
         )
         select id, ticket_id from pkg`,
        [tx.orgId, now, limit],
      );
      return rows.map((r) => r.id);
    },
  };
}
