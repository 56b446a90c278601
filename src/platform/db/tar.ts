// The embedded store's data directory as a gzipped tar (ustar) that PGlite's loadDataDir unpacks.
// Not PGlite's own dumpDataDir: that one stats every entry of the directory through the engine's file
// system, which fails (EINVAL) on the server's control socket, DATA_DIR/assent.sock. Here only regular
// files and directories are taken, and the process's own files (the lock, the socket) are left out.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

/** Files of the running process that live in DATA_DIR beside the database: never part of a store. */
export const PROCESS_FILES = new Set(['assent.lock', 'assent.sock']);

function field(value: string, length: number): Buffer {
  const b = Buffer.alloc(length);
  b.write(value, 'utf8');
  return b;
}

function octal(value: number, length: number): Buffer {
  return field(value.toString(8).padStart(length - 1, '0'), length);
}

function header(name: string, mode: number, size: number, mtime: Date, type: '0' | '5'): Buffer {
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(name.slice(cut + 1)) > 100) throw new Error(`path too long for a tar header: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  const h = Buffer.concat([
    field(base, 100),
    octal(mode & 0o7777, 8),
    octal(0, 8),
    octal(0, 8),
    octal(size, 12),
    octal(Math.floor(mtime.getTime() / 1000), 12),
    Buffer.from('        '), // checksum, computed below over these spaces
    Buffer.from(type),
    field('', 100),
    field('ustar', 6),
    Buffer.from('00'),
    field('', 32),
    field('', 32),
    field('', 8),
    field('', 8),
    field(prefix, 155),
    Buffer.alloc(12),
  ]);
  let sum = 0;
  for (const byte of h) sum += byte;
  field(sum.toString(8).padStart(6, '0') + '\0 ', 8).copy(h, 148);
  return h;
}

/** Every directory and regular file under dir (the process's files left out), as a gzipped tar. */
export async function tarDirectory(dir: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  const walk = async (relative: string) => {
    const entries = (await readdir(join(dir, relative), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (relative === '' && PROCESS_FILES.has(entry.name)) continue;
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      const path = join(dir, name);
      if (entry.isDirectory()) {
        const s = await stat(path);
        parts.push(header(`${name}/`, s.mode, 0, s.mtime, '5'));
        await walk(name);
      } else if (entry.isFile()) {
        const [s, data] = await Promise.all([stat(path), readFile(path)]);
        parts.push(header(name, s.mode, data.length, s.mtime, '0'), data);
        const pad = (512 - (data.length % 512)) % 512;
        if (pad) parts.push(Buffer.alloc(pad));
      }
      // Sockets, pipes and links: not part of a store.
    }
  };
  await walk('');
  parts.push(Buffer.alloc(1024));
  return promisify(gzip)(Buffer.concat(parts));
}
