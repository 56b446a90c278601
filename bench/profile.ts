// Summarises a V8 CPU profile (`node --cpu-prof`) of the service under load: where the time per request
// goes. Each sample is charged to the innermost frame on its stack that belongs to a known part (tenant,
// credentials, validation, SQL and driver, serialization, ...); frames of no known part (Node internals,
// compiled code with no file) pass the sample on to their caller.
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const CATEGORIES = [
  'tenant (Host lookup)',
  'credentials',
  'validation',
  'sql: driver',
  'sql: embedded engine',
  'serialization',
  'feature code',
  'fastify routing and hooks',
  'http and sockets',
  'sockets (unattributed reads)',
  'logging',
  'garbage collection',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface ProfileSummary {
  /** Sampled CPU time inside the load window, idle excluded, in ms. */
  busyMs: number;
  idleMs: number;
  windowMs: number;
  requests: number;
  /** Whether the load window could be matched to the profile's clock (otherwise the whole profile). */
  windowed: boolean;
  byCategory: { category: Category; ms: number; share: number; usPerRequest: number }[];
  topFunctions: { name: string; category: Category; ms: number; share: number }[];
}

/** The part of the code a frame belongs to, or null to charge its caller. */
function categoryOf(f: CallFrame): Category | null {
  const { url, functionName: fn } = f;
  if (fn === '(garbage collector)') return 'garbage collection';
  if (url === '') {
    // Ajv compiles validators with new Function: validate10, validate23, ...
    if (/^validate\d*$/.test(fn)) return 'validation';
    return null;
  }
  if (/platform\/auth\/tenant-host/.test(url)) return 'tenant (Host lookup)';
  if (/platform\/auth\/|platform\/crypto\//.test(url)) return 'credentials';
  if (/platform\/http\/validation|node_modules\/(ajv|ajv-formats|fast-uri)\/|fastify\/lib\/validation|fastify\/lib\/content-type-parser|secure-json-parse/.test(url)) {
    return 'validation';
  }
  // PGlite: PostgreSQL itself runs here, as WebAssembly; its JavaScript side is the driver.
  if (/^wasm:/.test(url)) return 'sql: embedded engine';
  if (/platform\/db\/|node_modules\/postgres\/|@electric-sql\/pglite/.test(url)) return 'sql: driver';
  if (/fast-json-stringify|fastify\/lib\/(reply|error-serializer|schemas)/.test(url) && /serial|stringify|asString|asDate|anonymous|main/i.test(fn)) {
    return 'serialization';
  }
  if (/node_modules\/(pino|sonic-boom|thread-stream)\//.test(url) || /fastify\/lib\/logger/.test(url)) return 'logging';
  // src/ (tsx), dist/ or a build beside it (run.ts --dist).
  if (/\/(src|dist[\w-]*)\/features\//.test(url)) return 'feature code';
  if (/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)\//.test(url) || /\/(src|dist[\w-]*)\/(app|platform\/http)/.test(url)) {
    return 'fastify routing and hooks';
  }
  // The HTTP server itself; socket and stream internals charge whoever wrote or read (HTTP or the database driver).
  if (/^node:(_http_|internal\/http)/.test(url)) return 'http and sockets';
  return null;
}

export function summariseProfile(path: string, window: { startUs: number; endUs: number } | null, requests: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const categoryCache = new Map<number, Category>();
  const categoryOfNode = (id: number): Category => {
    const cached = categoryCache.get(id);
    if (cached) return cached;
    let cur: number | undefined = id;
    let found: Category = 'other';
    let socketCode = false;
    while (cur !== undefined) {
      const frame = byId.get(cur)!.callFrame;
      const c = categoryOf(frame);
      if (c) {
        found = c;
        break;
      }
      socketCode ||= /^node:(net|stream|internal\/(stream|net|streams))/.test(frame.url);
      cur = parent.get(cur);
    }
    // Socket reads straight from the event loop: HTTP requests or database replies, not told apart.
    if (found === 'other' && socketCode) found = 'sockets (unattributed reads)';
    categoryCache.set(id, found);
    return found;
  };

  // Sample times on the profile's clock (microseconds, CLOCK_MONOTONIC like process.hrtime).
  let t = profile.startTime;
  const times = profile.timeDeltas.map((d) => (t += d));
  const windowed = window !== null && times.some((x) => x >= window.startUs && x <= window.endUs);
  const inWindow = (x: number) => !windowed || (x >= window!.startUs && x <= window!.endUs);

  const ms = new Map<Category, number>();
  const fnMs = new Map<string, { category: Category; ms: number }>();
  let idle = 0;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    if (!inWindow(times[i]!)) continue;
    const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(profile.samples[i]!)!;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idle += dt;
      continue;
    }
    busy += dt;
    const category = name === '(program)' ? 'other' : categoryOfNode(node.id);
    ms.set(category, (ms.get(category) ?? 0) + dt);
    const where = node.callFrame.url ? ` ${node.callFrame.url.replace(/^.*\/(node_modules|src|dist)\//, '$1/')}:${node.callFrame.lineNumber + 1}` : '';
    const key = `${name || '(anonymous)'}${where}`;
    const e = fnMs.get(key) ?? { category, ms: 0 };
    e.ms += dt;
    fnMs.set(key, e);
  }
  const windowMs = windowed ? (window!.endUs - window!.startUs) / 1000 : (profile.endTime - profile.startTime) / 1000;
  return {
    busyMs: busy,
    idleMs: idle,
    windowMs,
    requests,
    windowed,
    byCategory: CATEGORIES.map((category) => {
      const v = ms.get(category) ?? 0;
      return { category, ms: v, share: busy > 0 ? v / busy : 0, usPerRequest: requests > 0 ? (v * 1000) / requests : 0 };
    }).filter((c) => c.ms > 0),
    topFunctions: [...fnMs.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 12)
      .map(([name, e]) => ({ name, category: e.category, ms: e.ms, share: busy > 0 ? e.ms / busy : 0 })),
  };
}
