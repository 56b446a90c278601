// The export archive's layout and its two ends: ArchiveWriter packs files into a gzipped tar as they
// are produced (each file is one part of at most PART_BYTES, so nothing larger is ever held) and keeps
// their SHA-256 sums for MANIFEST.sha256; readArchive walks a .tar.gz file entry by entry.
import { createReadStream } from 'node:fs';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import tar from 'tar-stream';

/**
 * The format this service writes: 2 added MANIFEST.jws, the manifest signed with the organization's
 * key; 3 adds the audit log's signed checkpoints (audit-checkpoints/) and names the latest in the
 * signed manifest, and export.json gives the tree's size and root.
 */
export const FORMAT = 'assent-export/3';
/** The formats `export verify` reads: 1 (no signed manifest, reported as unsigned), 2 (no checkpoints) and 3. */
export const FORMATS_READ = ['assent-export/1', 'assent-export/2', FORMAT];
export const MANIFEST = 'MANIFEST.sha256';
/** The manifest's signature: not listed in MANIFEST.sha256, which it signs. */
export const MANIFEST_SIGNATURE = 'MANIFEST.jws';
export const META = 'export.json';
export const JWKS = 'jwks.json';
/** A part of a table is flushed once it holds this much: the bound on what an export keeps in memory. */
export const PART_BYTES = 4 * 1024 * 1024;

/** Each table as exported: a folder of JSON Lines parts, 000001.jsonl, 000002.jsonl, ... in order. */
export const TABLES = [
  'assets',
  'collection-points',
  'notice-versions',
  'consent-records',
  'consent-links',
  'grievances',
  'grievance-history',
  'grievance-messages',
  'nominees',
  'data-categories',
  'systems',
  'fulfilment-tasks',
  'fulfilment-transitions',
  'audit-checkpoints',
  'audit-log',
] as const;
export type TableName = (typeof TABLES)[number];

/** Tables format 3 added (issues 32 and 33): an archive of format 1 or 2 has none. */
export const LATER_TABLES: readonly TableName[] = ['data-categories', 'systems', 'fulfilment-tasks', 'fulfilment-transitions', 'audit-checkpoints'];

export function partName(table: TableName, n: number): string {
  return `${table}/${String(n).padStart(6, '0')}.jsonl`;
}

/** Writes files into `<root>/` of a gzipped tar, with backpressure: add() settles once the consumer took the file. */
export class ArchiveWriter {
  readonly output: Gzip;
  private readonly pack = tar.pack();
  private readonly sums: string[] = [];
  private finished = false;

  constructor(
    private readonly root: string,
    private readonly mtime: Date,
  ) {
    this.output = createGzip();
    this.pack.pipe(this.output);
    // A reader that goes away (a closed connection) ends the export: the pending add() rejects, so
    // the reads stop and their transaction ends instead of waiting for a drain that never comes.
    this.output.on('close', () => {
      if (!this.finished) this.pack.destroy(new Error('the archive was closed before it was complete'));
    });
  }

  async add(name: string, content: Buffer): Promise<void> {
    this.sums.push(`${createHash('sha256').update(content).digest('hex')}  ${name}\n`);
    await this.entry(name, content);
  }

  /**
   * Writes MANIFEST.sha256 (every file above, in order, as `sha256sum -c` reads it), then its signature
   * MANIFEST.jws (what `sign` makes of the manifest's SHA-256), and ends the archive. Returns the
   * manifest's own SHA-256.
   */
  async finish(sign: (manifestSha256: string) => Promise<string>): Promise<string> {
    const manifest = Buffer.from(this.sums.join(''));
    const sha256 = createHash('sha256').update(manifest).digest('hex');
    await this.entry(MANIFEST, manifest);
    await this.entry(MANIFEST_SIGNATURE, Buffer.from((await sign(sha256)) + '\n'));
    this.finished = true;
    this.pack.finalize();
    return sha256;
  }

  fail(error: Error): void {
    this.pack.destroy(error);
    this.output.destroy(error);
  }

  private entry(name: string, content: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pack.entry({ name: `${this.root}/${name}`, size: content.length, mtime: this.mtime, mode: 0o644 }, content, (err) => (err ? reject(err) : resolve()));
    });
  }
}

/** Collects JSON lines and hands them on in parts of about PART_BYTES. */
export class PartWriter {
  private lines: Buffer[] = [];
  private bytes = 0;
  rows = 0;
  parts: string[] = [];

  constructor(
    private readonly table: TableName,
    private readonly sink: (name: string, content: Buffer) => Promise<void>,
  ) {}

  async push(row: unknown): Promise<void> {
    const line = Buffer.from(JSON.stringify(row) + '\n');
    this.lines.push(line);
    this.bytes += line.length;
    this.rows += 1;
    if (this.bytes >= PART_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const name = partName(this.table, this.parts.length + 1);
    const content = Buffer.concat(this.lines);
    this.lines = [];
    this.bytes = 0;
    this.parts.push(name);
    await this.sink(name, content);
  }
}

export interface ArchiveEntry {
  /** The path below the archive's one top folder. */
  name: string;
  root: string;
  type: string;
  content: Buffer;
}

/** Each entry of a .tar.gz file in order, whole (parts are small; a hostile entry over maxBytes is refused). */
export async function* readArchive(file: string, maxBytes = 64 * PART_BYTES): AsyncGenerator<ArchiveEntry> {
  const extract = tar.extract();
  const source = createReadStream(file).pipe(createGunzip());
  source.on('error', (e) => extract.destroy(e));
  source.pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of entry as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new ArchiveError(`${entry.header.name} is larger than ${maxBytes} bytes: not a part of an Assent export`);
      chunks.push(chunk);
    }
    const full = entry.header.name;
    const slash = full.indexOf('/');
    yield {
      root: slash === -1 ? '' : full.slice(0, slash),
      name: slash === -1 ? full : full.slice(slash + 1),
      type: entry.header.type ?? 'file',
      content: Buffer.concat(chunks),
    };
  }
}

export class ArchiveError extends Error {}
