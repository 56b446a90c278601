// `npm run web:size`: the built dashboard's files (web/dist/_app) with their raw, gzip and brotli sizes,
// and what the first page (index.html's bundles plus the overview's chunks) downloads.
import { readdirSync, readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../web/dist/', import.meta.url));
const files = readdirSync(`${dist}_app`).filter((f) => !/\.(br|gz)$/.test(f));
const rows = files
  .map((name) => {
    const data = readFileSync(`${dist}_app/${name}`);
    return { name, raw: data.length, gzip: gzipSync(data, { level: 9 }).length, brotli: brotliCompressSync(data).length };
  })
  .sort((a, b) => b.gzip - a.gzip);
const kb = (n) => (n / 1024).toFixed(1).padStart(7);
const sum = (list, k) => list.reduce((t, r) => t + r[k], 0);
process.stdout.write(`${'file'.padEnd(40)}    raw KB  gzip KB  brotli KB\n`);
for (const r of rows) process.stdout.write(`${r.name.padEnd(40)} ${kb(r.raw)}  ${kb(r.gzip)}  ${kb(r.brotli)}\n`);
process.stdout.write(`${'all'.padEnd(40)} ${kb(sum(rows, 'raw'))}  ${kb(sum(rows, 'gzip'))}  ${kb(sum(rows, 'brotli'))}\n`);
// The first page: the entry's chunks and styles, and those of the overview it loads (Vite's manifest).
const manifest = JSON.parse(readFileSync(`${dist}.vite/manifest.json`, 'utf8'));
const needed = new Set();
const visit = (key) => {
  const chunk = manifest[key];
  if (!chunk || needed.has(chunk.file)) return;
  needed.add(chunk.file);
  for (const css of chunk.css ?? []) needed.add(css);
  for (const dep of chunk.imports ?? []) visit(dep);
};
visit('index.html');
visit('src/pages/OverviewPage.tsx');
const first = rows.filter((r) => needed.has(`_app/${r.name}`));
process.stdout.write(`first page, the overview (${first.length} files): gzip ${kb(sum(first, 'gzip')).trim()} KB, brotli ${kb(sum(first, 'brotli')).trim()} KB\n`);
