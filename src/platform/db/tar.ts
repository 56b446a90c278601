// The embedded store's data directory as a tar (tar-stream), written and read as a stream: a file at a
// time, a chunk at a time, so neither end holds the store in memory.
// Not PGlite's own dumpDataDir and loadDataDir: both hold the whole tarball (and each file) in memory,
// and the dump stats every entry of the directory through the engine's file system, which fails
// (EINVAL) on the server's control socket, DATA_DIR/assent.sock. Here only regular files and
// directories are taken, and the process's own files (the lock, the socket) are left out.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

/** Files of the running process that live in DATA_DIR beside the database: never part of a store. */
const PROCESS_FILES = new Set(['assent.lock', 'assent.sock']);
/** The lock, the socket, and the lock's short-lived siblings (`assent.lock.<pid>.…`, data-dir-lock.ts). */
export function isProcessFile(name: string): boolean {
  return PROCESS_FILES.has(name) || name.startsWith('assent.lock.');
}

/** One file into the archive, read a chunk at a time; settles once the archive took all of it. */
function addFile(pack: tar.Pack, header: Parameters<tar.Pack['entry']>[0], path: string): Promise<void> {
  const source = createReadStream(path);
  return new Promise<void>((resolve, reject) => {
    // The callback runs when the entry is complete, or with the error that ended it (the archive
    // destroyed, or a size that does not match the header's: a file that changed while read).
    const entry = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    source.on('error', (e) => entry.destroy(e));
    source.pipe(entry as unknown as NodeJS.WritableStream);
  }).finally(() => source.destroy());
}

/**
 * Every directory and regular file under `dir` (the process's files left out), in name order, into
 * `pack`, which is finalized at the end. The pack's consumer sets the pace (back-pressure): a file is
 * read only as fast as the archive is written. On a failure the pack is destroyed, so its consumer
 * ends too.
 */
export async function packDirectory(dir: string, pack: tar.Pack): Promise<void> {
  const walk = async (relative: string) => {
    const entries = (await readdir(join(dir, relative), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (relative === '' && isProcessFile(entry.name)) continue;
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      const path = join(dir, name);
      if (entry.isDirectory()) {
        const s = await stat(path);
        await new Promise<void>((resolve, reject) =>
          pack.entry({ name: `${name}/`, type: 'directory', mode: s.mode & 0o7777, mtime: s.mtime }, (err) => (err ? reject(err) : resolve())),
        );
        await walk(name);
      } else if (entry.isFile()) {
        const s = await stat(path);
        await addFile(pack, { name, size: s.size, mode: s.mode & 0o7777, mtime: s.mtime }, path);
      }
      // Sockets, pipes and links: not part of a store.
    }
  };
  try {
    await walk('');
    pack.finalize();
  } catch (e) {
    pack.destroy(e as Error);
    throw e;
  }
}

/** An entry's path inside the directory: relative, without `.` or `..` parts (PGlite's own dumps start with `/`). */
export function entryPath(name: string): string | null {
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0) return null;
  if (parts.includes('..')) throw new Error(`the archive's entry ${JSON.stringify(name)} points outside the directory`);
  return parts.join('/');
}

/**
 * Unpacks a tar stream into `dir` (which should be empty): directories and regular files only, each
 * file written a chunk at a time, owner-only (0700 and 0600, as PostgreSQL keeps its data directory),
 * with the archive's modification times. The process's files, if an archive has them, are left out.
 * Resolves with the number of files written.
 */
export async function unpackInto(source: Readable, dir: string): Promise<number> {
  const extract = tar.extract();
  source.on('error', (e) => extract.destroy(e));
  source.pipe(extract as unknown as NodeJS.WritableStream);
  let files = 0;
  for await (const entry of extract) {
    const name = entryPath(entry.header.name);
    const type = entry.header.type;
    const target = name === null ? dir : join(dir, name);
    if (name !== null && !name.includes('/') && isProcessFile(name)) {
      entry.resume();
    } else if (type === 'directory') {
      await mkdir(target, { recursive: true, mode: 0o700 });
      entry.resume();
    } else if (type === 'file' || type === 'contiguous-file') {
      if (name === null) throw new Error(`the archive's entry ${JSON.stringify(entry.header.name)} has no file name`);
      await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
      // 'wx': an entry twice in the archive is refused, never written over.
      await pipeline(Readable.from(entry), createWriteStream(target, { flags: 'wx', mode: 0o600 }));
      await utimes(target, entry.header.mtime, entry.header.mtime);
      files += 1;
    } else {
      // Links, devices, pax headers' own entries: not part of a store.
      entry.resume();
    }
  }
  return files;
}
