// `assent export verify FILE`: checks an export with nothing but the file (no database, no network).
// First pass: every file's SHA-256 against MANIFEST.sha256, and no file more or less; MANIFEST.jws, the
// manifest's signature by the organization's key (format 2), with the archive's keys or, given from
// outside (--jwks), the organization's published ones, which the archive's must agree with. Second pass:
// every notice version's SHA-256, every consent record's receipt (its signature with the keys of
// jwks.json, verifyReceipt; that it says what the record says, receiptMismatch; that its notice is the
// exported version's), the audit log's hash chain (createChainVerifier, the same rule as `assent audit
// verify`) up to the head export.json names, and the row counts. The first problem found is named.
import { createHash } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { createChainVerifier, TimestampVerificationError, verifyCheckpointTimestamp, type ExportedAuditEntry } from '../audit/index.js';
import { leafHash, MerkleFrontier, toHex } from '../audit/merkle.js';
import { CheckpointError, verifyCheckpointJws, type CheckpointPayload, type PublishedCheckpoint } from '../transparency/index.js';
import { noticeSha256, receiptMismatch, ReceiptVerificationError, verifyReceipt } from '../receipts/index.js';
import { ArchiveError, FORMAT, FORMATS_READ, JWKS, LATER_TABLES, MANIFEST, MANIFEST_SIGNATURE, META, TABLES, readArchive, type TableName } from './archive.js';
import { verifyManifestSignature } from './manifest.js';

export interface VerifyReport {
  ok: boolean;
  /** The first problem, in words (null when the archive verified). */
  problem: string | null;
  organization: { id: string; slug: string; name: string } | null;
  exported_at: string | null;
  files: number;
  /** SHA-256 of MANIFEST.sha256: the one value that pins the whole archive. */
  manifest_sha256: string | null;
  /** The key whose signature (MANIFEST.jws) the manifest carries; null for a format 1 archive, which has none. */
  manifest_signed_by: string | null;
  /** Whose keys the signatures were checked with: `jwks.json` (the archive's own) or the --jwks source given. */
  keys_from: string;
  audit: { entries: number; head: { seq: number; hash: string } | null } | null;
  /** Format 3: the Merkle tree rebuilt from the entries, the signed checkpoints it matched, and how many entries were not sealed yet when exported. */
  tree: { size: number; root_hash: string; checkpoints: number; unsealed: number } | null;
  /** The checkpoint given from outside (--checkpoint), once it matched. */
  kept: { tree_size: number; root_hash: string; timestamp: string } | null;
  /** With --tsa-cert only: the checkpoints' RFC 3161 tokens verified with it, the checkpoints without one, and the TSA times of the first and last verified. */
  timestamps?: { verified: number; without_token: number; first: string | null; last: string | null };
  /**
   * Receipts whose signature verified; of those, late ones (signed by the backfill after the record,
   * issued_late); records written before receipts existed (migration 0018) and not yet backfilled have none.
   */
  receipts: { verified: number; issued_late: number; without_receipt: number; keys: number } | null;
  rows: Partial<Record<TableName, number>>;
}

interface Meta {
  format: string;
  organization: { id: string; slug: string; name: string };
  exported_at: string;
  audit_chain_head: { seq: number; hash: string } | null;
  audit_tree?: { size: number; root_hash: string };
  audit_unsealed?: number;
  tables: Record<string, { rows: number; parts: string[] }>;
}

/** What pass 1 learnt that pass 2 checks: the checkpoint the signed manifest names. */
interface Signed {
  checkpoint: { tree_size: number; root_hash: string; jws: string } | null | undefined;
}

export interface VerifyOptions {
  /**
   * The organization's public keys from outside the archive (its /.well-known/jwks.json, or a copy a
   * regulator kept): every key of the archive's jwks.json must be among them, unchanged, and every
   * signature is checked with them. Without it the archive's own jwks.json is trusted.
   */
  jwks?: { keys: JSONWebKeySet['keys']; source: string };
  /**
   * A checkpoint kept from before the export (its compact JWS; from /.well-known/assent/checkpoints/latest,
   * a witness or an earlier export): the archive's audit log must contain the tree it signs, unchanged.
   */
  checkpoint?: { jws: string; source: string };
  /** The TSA's certificate or its CA's (PEM): every checkpoint's RFC 3161 token is verified with it (issue 32 item 4). */
  tsaCertPem?: string;
}

class Problem extends Error {}

const SUM_LINE = /^([0-9a-f]{64}) {2}(.+)$/;

export async function verifyExport(file: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const report: VerifyReport = {
    ok: false,
    problem: null,
    organization: null,
    exported_at: null,
    files: 0,
    manifest_sha256: null,
    manifest_signed_by: null,
    keys_from: options.jwks?.source ?? JWKS,
    audit: null,
    tree: null,
    kept: null,
    receipts: null,
    rows: {},
  };
  try {
    const { meta, jwks, signed } = await checkManifest(file, report, options);
    let kept: CheckpointPayload | null = null;
    if (options.checkpoint) {
      try {
        kept = (await verifyCheckpointJws(options.checkpoint.jws, jwks)).checkpoint;
      } catch (e) {
        if (!(e instanceof CheckpointError)) throw e;
        throw new Problem(`the checkpoint from ${options.checkpoint.source}: ${e.message}`);
      }
      if (kept.organization.id !== meta.organization.id) {
        throw new Problem(`the checkpoint from ${options.checkpoint.source} is of organization ${kept.organization.slug} (${kept.organization.id}), the archive of ${meta.organization.slug}`);
      }
    }
    if (options.tsaCertPem) report.timestamps = { verified: 0, without_token: 0, first: null, last: null };
    await checkContents(file, meta, jwks, report, signed, kept && { payload: kept, source: options.checkpoint!.source }, options.tsaCertPem);
    report.ok = true;
  } catch (e) {
    if (!(e instanceof Problem || e instanceof ArchiveError || isArchiveReadError(e))) throw e;
    report.problem = e instanceof Problem || e instanceof ArchiveError ? e.message : `the file is not a readable .tar.gz archive (${(e as Error).message})`;
  }
  return report;
}

function isArchiveReadError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR' || code === 'ENOENT' || code === 'EISDIR' || /tar|header|Unexpected end/i.test((e as Error).message ?? '');
}

/** Pass 1: the sums. Returns export.json and jwks.json, read from the archive once their sums matched. */
async function checkManifest(file: string, report: VerifyReport, options: VerifyOptions): Promise<{ meta: Meta; jwks: JSONWebKeySet; signed: Signed }> {
  const sums = new Map<string, string>();
  const order: string[] = [];
  let root: string | null = null;
  let manifest: Buffer | null = null;
  let metaText: Buffer | null = null;
  let jwksText: Buffer | null = null;
  let signature: Buffer | null = null;
  for await (const entry of readArchive(file)) {
    if (entry.type !== 'file') throw new Problem(`${entry.root}/${entry.name} is a ${entry.type}, not a file: an export holds only files`);
    root ??= entry.root;
    if (entry.root !== root || entry.name === '') throw new Problem(`${entry.root}/${entry.name} is outside the archive's one folder ${root}/`);
    if (sums.has(entry.name)) throw new Problem(`${entry.name} is in the archive twice`);
    sums.set(entry.name, createHash('sha256').update(entry.content).digest('hex'));
    order.push(entry.name);
    if (entry.name === MANIFEST) manifest = entry.content;
    if (entry.name === META) metaText = entry.content;
    if (entry.name === JWKS) jwksText = entry.content;
    if (entry.name === MANIFEST_SIGNATURE) signature = entry.content;
  }
  if (!manifest) throw new Problem(`${MANIFEST} is missing: the archive is incomplete or not an Assent export`);
  report.manifest_sha256 = sums.get(MANIFEST)!;
  const listed = new Map<string, string>();
  for (const [i, line] of manifest.toString('utf8').split('\n').entries()) {
    if (line === '') continue;
    const m = SUM_LINE.exec(line);
    if (!m) throw new Problem(`${MANIFEST} line ${i + 1} is not "<sha256>  <file>"`);
    if (listed.has(m[2]!)) throw new Problem(`${MANIFEST} lists ${m[2]} twice`);
    listed.set(m[2]!, m[1]!);
  }
  for (const name of order) {
    if (name === MANIFEST || name === MANIFEST_SIGNATURE) continue;
    const expected = listed.get(name);
    if (!expected) throw new Problem(`${name} is not in ${MANIFEST}: a file was added`);
    if (expected !== sums.get(name)) throw new Problem(`${name}: its SHA-256 is ${sums.get(name)}, ${MANIFEST} says ${expected}: the file was changed`);
  }
  for (const name of listed.keys()) if (!sums.has(name)) throw new Problem(`${name} is listed in ${MANIFEST} but missing from the archive`);
  report.files = order.length;
  if (!metaText) throw new Problem(`${META} is missing`);
  let meta: Meta;
  try {
    meta = JSON.parse(metaText.toString('utf8')) as Meta;
  } catch {
    throw new Problem(`${META} is not JSON`);
  }
  if (!FORMATS_READ.includes(meta.format)) throw new Problem(`${META} says format ${JSON.stringify(meta.format)}; this verifier reads ${FORMATS_READ.join(' and ')}`);
  report.organization = meta.organization;
  report.exported_at = meta.exported_at;
  if (!jwksText) throw new Problem(`${JWKS} is missing`);
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(jwksText.toString('utf8')) as JSONWebKeySet;
  } catch {
    throw new Problem(`${JWKS} is not JSON`);
  }
  if (!Array.isArray(jwks?.keys)) throw new Problem(`${JWKS} is not a JWK Set ({"keys": [...]})`);
  if (options.jwks) jwks = agreedKeys(jwks, options.jwks);
  const signed: Signed = { checkpoint: undefined };
  if (meta.format !== 'assent-export/1' || signature) {
    if (!signature) throw new Problem(`${MANIFEST_SIGNATURE} is missing: a ${meta.format} archive's manifest is signed by the organization's key`);
    const checked = await checkSignature(signature, report.manifest_sha256, meta, jwks);
    report.manifest_signed_by = checked.kid;
    signed.checkpoint = checked.checkpoint;
  }
  if (meta.format === FORMAT && signed.checkpoint === undefined) throw new Problem(`${MANIFEST_SIGNATURE} names no audit checkpoint: a ${FORMAT} manifest signs the latest one`);
  return { meta, jwks, signed };
}

/**
 * The keys to check signatures with when the organization's published keys are given from outside:
 * each key of the archive's jwks.json must be one of them, with the same public key and the same
 * not_before (a key retired since the export may have gained a not_after). Returns the outside set.
 */
function agreedKeys(archived: JSONWebKeySet, outside: NonNullable<VerifyOptions['jwks']>): JSONWebKeySet {
  for (const key of archived.keys) {
    const published = outside.keys.find((k) => k.kid === key.kid);
    if (!published) throw new Problem(`${JWKS} holds key ${key.kid}, which is not among the organization's keys at ${outside.source}: the archive's keys were replaced`);
    if (published.x !== key.x) throw new Problem(`${JWKS} gives key ${key.kid} another public key than ${outside.source}: the archive's keys were replaced`);
    const nb = (k: object) => (k as { not_before?: string }).not_before;
    if (nb(published) !== nb(key)) throw new Problem(`${JWKS} gives key ${key.kid} not_before ${nb(key)}, ${outside.source} says ${nb(published)}: the archive's keys were changed`);
  }
  return { keys: outside.keys };
}

/** MANIFEST.jws: signed by a key of `jwks`, valid at the export's time, over this manifest, organization, time, audit head and (format 3) latest checkpoint. */
async function checkSignature(signature: Buffer, manifestSha256: string | null, meta: Meta, jwks: JSONWebKeySet): Promise<{ kid: string; checkpoint: Signed['checkpoint'] }> {
  let signed;
  try {
    signed = await verifyManifestSignature(signature.toString('utf8'), jwks);
  } catch (e) {
    throw new Problem(`${MANIFEST_SIGNATURE}: ${(e as Error).message}`);
  }
  const m = signed.manifest;
  if (m.manifest_sha256 !== manifestSha256) {
    throw new Problem(`${MANIFEST_SIGNATURE} signs a manifest whose SHA-256 is ${m.manifest_sha256}, ${MANIFEST} has ${manifestSha256}: the manifest was rewritten`);
  }
  if (m.organization?.id !== meta.organization.id) throw new Problem(`${MANIFEST_SIGNATURE} was signed for organization ${m.organization?.id}, ${META} names ${meta.organization.id}`);
  if (m.exported_at !== meta.exported_at) throw new Problem(`${MANIFEST_SIGNATURE} says exported at ${m.exported_at}, ${META} says ${meta.exported_at}`);
  if (JSON.stringify(m.audit_chain_head ?? null) !== JSON.stringify(meta.audit_chain_head ?? null)) {
    throw new Problem(`${MANIFEST_SIGNATURE} signs audit chain head ${JSON.stringify(m.audit_chain_head)}, ${META} says ${JSON.stringify(meta.audit_chain_head)}`);
  }
  return { kid: signed.kid, checkpoint: m.audit_checkpoint };
}

function parseLines(name: string, content: Buffer): unknown[] {
  const text = content.toString('utf8');
  if (text !== '' && !text.endsWith('\n')) throw new Problem(`${name} does not end with a newline: it was cut short`);
  return text
    .split('\n')
    .slice(0, -1)
    .map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new Problem(`${name} line ${i + 1} is not JSON`);
      }
    });
}

interface ExportedRecord {
  id: string;
  collection_point_id: string;
  dp_id: string;
  consent_action: string;
  purposes: { id: string; granted: boolean }[];
  notice_version: number;
  channel: string;
  created_at: string;
  receipt: string | null;
}

/**
 * A consent record's receipt: signed by a key of jwks.json, saying what the record says, over the
 * notice version exported. A late receipt must say when it was signed, not before the record; only a
 * late one may leave the notice's SHA-256 null, and only for a version the export does not hold.
 * Returns whether it is late.
 */
async function checkReceipt(r: ExportedRecord, where: string, jwks: JSONWebKeySet, notices: Map<string, string>): Promise<boolean> {
  let receipt;
  try {
    ({ receipt } = await verifyReceipt(r.receipt!, jwks));
  } catch (e) {
    if (e instanceof ReceiptVerificationError) throw new Problem(`consent record ${r.id}, ${where}: ${e.message}`);
    throw e;
  }
  const field = receiptMismatch(receipt, { ...r, consent_id: r.id });
  if (field) throw new Problem(`consent record ${r.id}, ${where}: the receipt's ${field} differs from the record's`);
  const late = receipt.issued_late === true;
  if (late && !(typeof receipt.issued_at === 'string' && Date.parse(receipt.issued_at) >= Date.parse(receipt.time))) {
    throw new Problem(`consent record ${r.id}, ${where}: the late receipt's issued_at is missing or before the record's time`);
  }
  const notice = notices.get(`${r.collection_point_id}:${r.notice_version}`);
  if (receipt.notice.sha256 === null) {
    if (!late || notice !== undefined) {
      throw new Problem(`consent record ${r.id}, ${where}: the receipt gives no notice SHA-256${late ? `, yet notice version ${r.notice_version} is in notice-versions` : ''}`);
    }
  } else if (notice !== undefined && notice !== receipt.notice.sha256) {
    throw new Problem(`consent record ${r.id}, ${where}: the receipt's notice SHA-256 is not that of notice version ${r.notice_version} in notice-versions`);
  }
  return late;
}

/** A checkpoint's RFC 3161 token, with --tsa-cert: over its JWS, by the TSA given, not dated ahead of the TSA's time. */
async function checkTimestamp(c: PublishedCheckpoint, where: string, tsaCertPem: string, counts: NonNullable<VerifyReport['timestamps']>): Promise<void> {
  if (!c.tsa_token) {
    counts.without_token += 1;
    return;
  }
  try {
    const info = await verifyCheckpointTimestamp({ ...c, tsa_token: c.tsa_token }, tsaCertPem);
    counts.verified += 1;
    counts.first ??= info.genTime.toISOString();
    counts.last = info.genTime.toISOString();
  } catch (e) {
    if (!(e instanceof TimestampVerificationError)) throw e;
    throw new Problem(`audit checkpoint, ${where}: ${e.message}`);
  }
}

/** Pass 2: notices, receipts, the audit chain and the row counts (the sums already hold, so the files are as exported). */
async function checkContents(
  file: string,
  meta: Meta,
  jwks: JSONWebKeySet,
  report: VerifyReport,
  signed: Signed,
  kept: { payload: CheckpointPayload; source: string } | null,
  tsaCertPem?: string,
): Promise<void> {
  const chain = createChainVerifier();
  const tree = new MerkleFrontier();
  /** Checkpoint roots by size (audit-checkpoints/ comes before audit-log/), and the last one. */
  const roots = new Map<number, { root: string; timestamp: string }>();
  let lastCheckpoint: PublishedCheckpoint | null = null;
  const treeProblem = (): string | null => {
    const root = toHex(tree.root());
    const c = roots.get(tree.size);
    if (c && c.root !== root) return `the first ${tree.size} entries do not hash to the root of the archive's checkpoint ${tree.size} (signed ${c.timestamp}): entries were changed after it was signed`;
    if (kept && kept.payload.tree_size === tree.size && kept.payload.root_hash !== root) {
      return `the first ${tree.size} entries do not hash to the root of the checkpoint from ${kept.source} (signed ${kept.payload.timestamp}): entries were changed after it was signed`;
    }
    return null;
  };
  const notices = new Map<string, string>();
  const receipts = { verified: 0, issued_late: 0, without_receipt: 0, keys: jwks.keys.length };
  const counted: Partial<Record<TableName, number>> = {};
  const parts: Partial<Record<TableName, string[]>> = {};
  for await (const entry of readArchive(file)) {
    const slash = entry.name.indexOf('/');
    const table = entry.name.slice(0, slash) as TableName;
    if (slash === -1 || !TABLES.includes(table)) {
      if (![MANIFEST, MANIFEST_SIGNATURE, META, JWKS].includes(entry.name)) throw new Problem(`${entry.name} is not a file of an Assent export`);
      continue;
    }
    (parts[table] ??= []).push(entry.name);
    const rows = parseLines(entry.name, entry.content);
    counted[table] = (counted[table] ?? 0) + rows.length;
    if (table === 'notice-versions') {
      for (const [i, row] of rows.entries()) {
        const n = row as { collection_point_id: string; version: number; notice: string; notice_sha256: string };
        if (typeof n.notice !== 'string' || noticeSha256(n.notice) !== n.notice_sha256) throw new Problem(`${entry.name} line ${i + 1}: notice_sha256 is not the SHA-256 of the notice`);
        notices.set(`${n.collection_point_id}:${n.version}`, n.notice_sha256);
      }
    }
    if (table === 'consent-records') {
      for (const [i, row] of rows.entries()) {
        const r = row as ExportedRecord;
        if (r.receipt === null || r.receipt === undefined) {
          receipts.without_receipt += 1;
          continue;
        }
        if (await checkReceipt(r, `${entry.name} line ${i + 1}`, jwks, notices)) receipts.issued_late += 1;
        receipts.verified += 1;
      }
    }
    if (table === 'audit-checkpoints') {
      for (const [i, row] of rows.entries()) {
        const c = row as PublishedCheckpoint;
        const where = `${entry.name} line ${i + 1}`;
        let p: CheckpointPayload;
        try {
          p = (await verifyCheckpointJws(String(c.jws), jwks)).checkpoint;
        } catch (e) {
          if (!(e instanceof CheckpointError)) throw e;
          throw new Problem(`audit checkpoint, ${where}: ${e.message}`);
        }
        if (p.organization.id !== meta.organization.id) throw new Problem(`audit checkpoint, ${where}: signed for organization ${p.organization.id}, the archive is of ${meta.organization.id}`);
        if (p.tree_size !== c.tree_size || p.root_hash !== c.root_hash || p.timestamp !== c.timestamp) {
          throw new Problem(`audit checkpoint, ${where}: its fields say size ${c.tree_size}, root ${c.root_hash}; its signature says size ${p.tree_size}, root ${p.root_hash}`);
        }
        if (lastCheckpoint && c.tree_size <= lastCheckpoint.tree_size) throw new Problem(`audit checkpoint, ${where}: sizes must grow (${lastCheckpoint.tree_size} then ${c.tree_size})`);
        if (tsaCertPem) await checkTimestamp(c, where, tsaCertPem, report.timestamps!);
        roots.set(c.tree_size, { root: c.root_hash, timestamp: c.timestamp });
        lastCheckpoint = c;
      }
    }
    if (table === 'audit-log') {
      for (const [i, row] of rows.entries()) {
        let broken;
        try {
          broken = chain.add(row as ExportedAuditEntry);
        } catch {
          throw new Problem(`${entry.name} line ${i + 1} is not an audit log entry`);
        }
        if (broken) throw new Problem(`audit log entry ${broken.seq}${broken.id ? ` (${broken.id})` : ''}, ${entry.name} line ${i + 1}: ${broken.reason}`);
        tree.append(leafHash((row as ExportedAuditEntry).canonical));
        const problem = treeProblem();
        if (problem) throw new Problem(`audit log, ${entry.name} line ${i + 1}: ${problem}`);
      }
    }
  }
  const audit = chain.finish(meta.audit_chain_head ?? null);
  if (audit.broken) throw new Problem(`audit log: ${audit.broken.reason}`);
  report.audit = { entries: audit.entries, head: audit.head };
  const last = lastCheckpoint as PublishedCheckpoint | null;
  if (last && last.tree_size > tree.size) throw new Problem(`audit log: checkpoint ${last.tree_size} covers more entries than the archive holds (${tree.size}): entries were removed`);
  if (kept && kept.payload.tree_size > tree.size) {
    throw new Problem(`audit log: the checkpoint from ${kept.source} (signed ${kept.payload.timestamp}) covers ${kept.payload.tree_size} entries, the archive holds ${tree.size}: entries were removed`);
  }
  if (meta.format === FORMAT) {
    const root = toHex(tree.root());
    if (meta.audit_tree?.size !== tree.size || meta.audit_tree?.root_hash !== root) {
      throw new Problem(`audit log: ${META} gives the tree as ${JSON.stringify(meta.audit_tree)}, the entries make size ${tree.size}, root ${root}`);
    }
    const named = signed.checkpoint ?? null;
    if (JSON.stringify(named && { tree_size: named.tree_size, root_hash: named.root_hash, jws: named.jws }) !== JSON.stringify(last && { tree_size: last.tree_size, root_hash: last.root_hash, jws: last.jws })) {
      throw new Problem(`${MANIFEST_SIGNATURE} names checkpoint ${named ? named.tree_size : 'none'}, the archive's latest is ${last ? last.tree_size : 'none'}: checkpoints were removed or added`);
    }
    report.tree = { size: tree.size, root_hash: root, checkpoints: roots.size, unsealed: meta.audit_unsealed ?? 0 };
  }
  if (kept) report.kept = { tree_size: kept.payload.tree_size, root_hash: kept.payload.root_hash, timestamp: kept.payload.timestamp };
  report.receipts = receipts;
  for (const table of TABLES) {
    const said = meta.tables?.[table];
    // An archive of format 1 or 2 was written before these tables existed: it has neither their description nor their parts.
    if (!said && meta.format !== FORMAT && LATER_TABLES.includes(table) && !parts[table]) continue;
    if (!said) throw new Problem(`${META} does not describe ${table}`);
    if (JSON.stringify(said.parts) !== JSON.stringify(parts[table] ?? [])) throw new Problem(`${table}: ${META} lists parts ${said.parts.join(', ') || 'none'}, the archive holds ${(parts[table] ?? []).join(', ') || 'none'}`);
    if (said.rows !== (counted[table] ?? 0)) throw new Problem(`${table}: ${META} says ${said.rows} rows, the parts hold ${counted[table] ?? 0}`);
  }
  report.rows = counted;
}
