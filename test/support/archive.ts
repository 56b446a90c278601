// Reading and rewriting export archives in tests: every file of a .tar.gz, and a copy with files changed.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { readArchive } from '../../src/features/export/archive.js';

export interface ArchiveFile {
  root: string;
  name: string;
  content: Buffer;
}

export async function archiveFiles(file: string): Promise<ArchiveFile[]> {
  const files: ArchiveFile[] = [];
  for await (const e of readArchive(file)) files.push({ root: e.root, name: e.name, content: e.content });
  return files;
}

export function jsonLines<T = any>(files: ArchiveFile[], table: string): T[] {
  return files
    .filter((f) => f.name.startsWith(`${table}/`))
    .flatMap((f) => f.content.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T));
}

/** Writes `to`: the archive `from` with each file passed through `change` (the new content, or null to leave it out), then `add`. */
export async function rewriteArchive(from: string, to: string, change: (f: ArchiveFile) => Buffer | null, add: { name: string; content: Buffer }[] = []): Promise<void> {
  const files = await archiveFiles(from);
  files.push(...add.map((a) => ({ root: files[0]!.root, ...a })));
  const pack = tar.pack();
  const written = pipeline(pack, createGzip(), createWriteStream(to));
  for (const f of files) {
    const content = change(f);
    if (content === null) continue;
    await new Promise<void>((resolve, reject) => pack.entry({ name: `${f.root}/${f.name}`, size: content.length }, content, (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  await written;
}

/** A line of MANIFEST.sha256 for the content. */
export function sha256Line(content: Buffer, name: string): string {
  return `${createHash('sha256').update(content).digest('hex')}  ${name}`;
}
