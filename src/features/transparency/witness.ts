// `assent witness <url...>` (issue 32 item 2): anyone keeps an organization's signed audit checkpoints
// outside its reach, and checks that each new one extends the last one kept. For each organization's
// address: fetch its JWKS and its latest checkpoint, verify the checkpoint's signature (and its key's
// validity at the checkpoint's time, and, with a TSA certificate, its RFC 3161 token), compare it with
// the checkpoints kept in DIR/<host>/, fetch and verify an RFC 9162 consistency proof from the last kept
// one, and keep it. A fork is refused: the same size with another root, a tree that shrank, or a
// consistency proof that fails. Nothing here needs the organization's database or any credential.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import type { JSONWebKeySet, JWK } from 'jose';
import { fromHex, isHashHex, verifyConsistency } from '../audit/merkle.js';
import { TimestampVerificationError, verifyCheckpointTimestamp } from '../audit/index.js';
import { CheckpointError, verifyCheckpointJws, type PublishedCheckpoint } from './checkpoints.js';

export const WITNESS_DEFAULT_DIR = 'assent-witness';
const FETCH_TIMEOUT_MS = 10_000;
const MAX_BODY = 1 << 20;

export type WitnessStatus = 'first' | 'unchanged' | 'consistent' | 'no_checkpoint' | 'fork' | 'refused' | 'error';

/**
 * A kept checkpoint's file: the checkpoint exactly as the organization published it (so `export verify
 * --checkpoint` and `audit verify --checkpoint` read the file as it is), and what this witness knew of it.
 */
export type KeptCheckpoint = PublishedCheckpoint & {
  witness: {
    /** The organization's address the witness asked. */
    url: string;
    organization: { id: string; slug: string };
    /** When this witness fetched it. */
    fetched_at: string;
    /** The proof that it extends the checkpoint kept before it (null for the first kept). */
    consistency: { from_size: number; from_root: string; proof: string[] } | null;
    /** The TSA token's content, when checked with --tsa-cert. */
    tsa: { gen_time: string; serial: string; policy: string } | null;
  };
};

export interface WitnessResult {
  url: string;
  /** Where this organization's checkpoints are kept. */
  dir: string;
  ok: boolean;
  status: WitnessStatus;
  organization: { id: string; slug: string } | null;
  checkpoint: { tree_size: number; root_hash: string; timestamp: string; kid: string } | null;
  /** The last checkpoint kept before this run. */
  previous: { tree_size: number; root_hash: string; timestamp: string } | null;
  /** How many hashes the consistency proof held (status consistent). */
  proof_length: number | null;
  /** The TSA token: checked (its time), present but not checked (no --tsa-cert), or absent. */
  tsa: { checked: true; gen_time: string; serial: string } | { checked: false; present: boolean };
  /** Checkpoints kept in dir after this run. */
  kept: number;
  problem: string | null;
  /** One line for a person. */
  summary: string;
}

export interface WitnessOptions {
  /** The parent directory: each organization's checkpoints go to <dir>/<host>/. */
  dir: string;
  /** PEM of the TSA's certificate (or its CA's): checkpoints' RFC 3161 tokens are verified with it. */
  tsaCertPem?: string | null;
  timeoutMs?: number;
  now?: () => Date;
}

/** What makes a run stop: a refusal (the organization's answers contradict what was kept or signed) or an error (could not ask). */
class Stop extends Error {
  constructor(
    readonly status: 'fork' | 'refused' | 'error',
    message: string,
  ) {
    super(message);
  }
}

/** The organization's base URL: scheme (https when none is given), host and port; a path prefix is kept. */
export function witnessBase(raw: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new Stop('error', `${raw} is not an address: give the organization's URL, e.g. https://acme.privacy.example.com`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Stop('error', `${raw}: only http:// and https:// addresses can be witnessed`);
  u.pathname = u.pathname.replace(/\/+$/, '');
  u.search = '';
  u.hash = '';
  return u;
}

/** The folder name of an address: its host, the port after an underscore (colons are awkward in paths). */
export const hostDirName = (u: URL): string => u.host.replace(/:/g, '_');

/**
 * Names under .localhost are this machine (RFC 6761 6.3), as browsers treat them; the system resolver
 * often does not know them, and an organization of a local server lives at <slug>.localhost.
 */
function lookup(hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
  if (/(^|\.)localhost\.?$/i.test(hostname)) {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dnsLookup(hostname, { ...options, all: options.all === true } as LookupOptions & { all: boolean }, callback);
}

interface Answer {
  status: number;
  body: unknown;
}

/** GET a JSON document (at most 1 MiB, within the timeout); the status and the parsed body. */
function getJson(url: URL, timeoutMs: number): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers: { accept: 'application/json', 'user-agent': 'assent-witness' }, lookup, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) req.destroy(new Error(`its answer is larger than ${MAX_BODY} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = null;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          if (res.statusCode === 200) return reject(new Error(`it answered ${text.length} bytes that are not JSON`));
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

async function ask(url: URL, what: string, timeoutMs: number): Promise<Answer> {
  try {
    return await getJson(url, timeoutMs);
  } catch (e) {
    throw new Stop('error', `could not get ${what} from ${url.href}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function isCheckpoint(o: unknown): o is PublishedCheckpoint {
  const c = o as PublishedCheckpoint;
  return (
    typeof c === 'object' &&
    c !== null &&
    Number.isSafeInteger(c.tree_size) &&
    c.tree_size >= 1 &&
    isHashHex(c.root_hash) &&
    typeof c.timestamp === 'string' &&
    typeof c.kid === 'string' &&
    typeof c.jws === 'string' &&
    (c.tsa_token === null || typeof c.tsa_token === 'string')
  );
}

const short = (h: string) => `${h.slice(0, 12)}…`;
const describe = (c: { tree_size: number; root_hash: string; timestamp: string }) => `size ${c.tree_size}, root ${c.root_hash}, signed ${c.timestamp}`;

/** The files of one organization's folder. */
function keptFiles(dir: string) {
  return {
    latest: join(dir, 'latest.json'),
    jwks: join(dir, 'jwks.json'),
    checkpoint: (size: number) => join(dir, 'checkpoints', `${String(size).padStart(12, '0')}.json`),
    count: () => (existsSync(join(dir, 'checkpoints')) ? readdirSync(join(dir, 'checkpoints')).filter((f) => f.endsWith('.json')).length : 0),
  };
}

/** Written whole or not at all: a crash mid-write never leaves half a file as the last kept checkpoint. */
function writeAtomic(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n');
  renameSync(tmp, path);
}

function readKept<T>(path: string): T | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (e) {
    throw new Stop('error', `the kept file ${path} cannot be read: ${(e as Error).message}; move it aside to start again`);
  }
}

const keyMaterial = (k: JWK) => JSON.stringify([k.kty, k.crv, k.x, k.n, k.e, (k as { not_before?: string }).not_before]);

/**
 * The keys to verify with: those kept from earlier runs, unchanged, plus new ones. A key the witness saw
 * before must still be published with the same public key and not_before (it may gain a not_after): an
 * organization that replaced a key could sign a rewritten past with it.
 */
function mergeKeys(kept: JSONWebKeySet | null, fetched: JSONWebKeySet, origin: string): JSONWebKeySet {
  if (!kept) return fetched;
  const now = new Map(fetched.keys.map((k) => [k.kid, k]));
  for (const k of kept.keys) {
    const n = now.get(k.kid);
    if (!n) throw new Stop('refused', `${origin} no longer publishes key ${k.kid}, which this witness kept: the organization's keys were changed`);
    if (keyMaterial(n) !== keyMaterial(k)) throw new Stop('refused', `${origin} publishes key ${k.kid} with another public key or not_before than this witness kept: the organization's keys were replaced`);
  }
  return fetched;
}

/** One organization: fetch, verify, compare, keep. Never throws for what it finds; the result says. */
export async function witnessOrganization(rawUrl: string, options: WitnessOptions): Promise<WitnessResult> {
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  const now = options.now ?? (() => new Date());
  const result: WitnessResult = {
    url: rawUrl,
    dir: '',
    ok: false,
    status: 'error',
    organization: null,
    checkpoint: null,
    previous: null,
    proof_length: null,
    tsa: { checked: false, present: false },
    kept: 0,
    problem: null,
    summary: '',
  };
  let label = rawUrl;
  try {
    const base = witnessBase(rawUrl);
    label = base.host;
    result.url = base.href.replace(/\/$/, '');
    const dir = join(options.dir, hostDirName(base));
    result.dir = dir;
    const files = keptFiles(dir);
    const at = (path: string) => new URL(base.pathname.replace(/\/+$/, '') + path, base.origin);
    const latestKept = readKept<KeptCheckpoint>(files.latest);
    result.kept = files.count();
    if (latestKept) result.previous = { tree_size: latestKept.tree_size, root_hash: latestKept.root_hash, timestamp: latestKept.timestamp };

    const jwksAnswer = await ask(at('/.well-known/jwks.json'), "the organization's keys", timeoutMs);
    const fetchedJwks = jwksAnswer.body as JSONWebKeySet;
    if (jwksAnswer.status !== 200 || !Array.isArray(fetchedJwks?.keys)) {
      throw new Stop('error', `${at('/.well-known/jwks.json').href} answered ${jwksAnswer.status} without a JWK Set: is ${base.href} an Assent organization's address?`);
    }
    const jwks = mergeKeys(readKept<JSONWebKeySet>(files.jwks), fetchedJwks, base.host);

    const latest = await ask(at('/.well-known/assent/checkpoints/latest'), 'the latest checkpoint', timeoutMs);
    if (latest.status === 404 && (latest.body as { code?: string } | null)?.code === 'no_checkpoint') {
      if (latestKept) {
        throw new Stop('fork', `${base.host} says it has no checkpoint, but this witness kept checkpoint ${describe(latestKept)}: the log was removed or rolled back`);
      }
      Object.assign(result, { ok: true, status: 'no_checkpoint', summary: `${label}: no checkpoint published yet; nothing kept` });
      return result;
    }
    if (latest.status !== 200 || !isCheckpoint(latest.body)) {
      throw new Stop('error', `${at('/.well-known/assent/checkpoints/latest').href} answered ${latest.status} without a checkpoint ({tree_size, root_hash, timestamp, kid, jws, tsa_token})`);
    }
    const cp = latest.body;
    result.checkpoint = { tree_size: cp.tree_size, root_hash: cp.root_hash, timestamp: cp.timestamp, kid: cp.kid };

    // The signature, with the organization's keys, and its key valid at the checkpoint's time.
    let signed;
    try {
      signed = await verifyCheckpointJws(cp.jws, jwks);
    } catch (e) {
      if (!(e instanceof CheckpointError)) throw e;
      throw new Stop('refused', `${base.host}'s latest checkpoint (${describe(cp)}) does not verify: ${e.message}`);
    }
    const p = signed.checkpoint;
    if (p.tree_size !== cp.tree_size || p.root_hash !== cp.root_hash || p.timestamp !== cp.timestamp || signed.kid !== cp.kid) {
      throw new Stop('refused', `${base.host}'s latest checkpoint says ${describe(cp)} (key ${cp.kid}) but its signed JWS says ${describe(p)} (key ${signed.kid})`);
    }
    result.organization = p.organization;
    if (latestKept && latestKept.witness.organization.id !== p.organization.id) {
      throw new Stop('refused', `${base.host} now signs as organization ${p.organization.slug} (${p.organization.id}); this witness kept the checkpoints of ${latestKept.witness.organization.slug} (${latestKept.witness.organization.id})`);
    }

    // Trusted time: the TSA's token over the JWS, checked with the TSA's certificate only.
    let tsa: KeptCheckpoint['witness']['tsa'] = null;
    if (cp.tsa_token && options.tsaCertPem) {
      let info;
      try {
        info = await verifyCheckpointTimestamp({ ...cp, tsa_token: cp.tsa_token }, options.tsaCertPem);
      } catch (e) {
        if (!(e instanceof TimestampVerificationError)) throw e;
        throw new Stop('refused', `${base.host}'s checkpoint (${describe(cp)}): ${e.message}`);
      }
      tsa = { gen_time: info.genTime.toISOString(), serial: info.serial, policy: info.policy };
      result.tsa = { checked: true, gen_time: tsa.gen_time, serial: tsa.serial };
    } else {
      result.tsa = { checked: false, present: Boolean(cp.tsa_token) };
    }

    // Against what was kept: the same tree, or a proven extension of it; never a fork.
    let consistency: KeptCheckpoint['witness']['consistency'] = null;
    if (latestKept) {
      const k = latestKept;
      if (cp.tree_size < k.tree_size) {
        throw new Stop('fork', `the tree shrank: this witness kept checkpoint ${describe(k)}, and ${base.host} now answers checkpoint ${describe(cp)}`);
      }
      if (cp.tree_size === k.tree_size) {
        if (cp.root_hash !== k.root_hash) {
          throw new Stop('fork', `two checkpoints of size ${k.tree_size} with different roots: kept ${describe(k)}; now ${describe(cp)}`);
        }
        writeAtomic(files.jwks, mergeJwksForKeeping(readKept<JSONWebKeySet>(files.jwks), fetchedJwks));
        result.kept = files.count();
        Object.assign(result, { ok: true, status: 'unchanged', summary: `${label}: checkpoint ${cp.tree_size} (root ${short(cp.root_hash)}) unchanged since kept; ${result.kept} kept in ${dir}` });
        return result;
      }
      const q = at('/.well-known/assent/checkpoints/consistency');
      q.searchParams.set('first', String(k.tree_size));
      q.searchParams.set('second', String(cp.tree_size));
      const answer = await ask(q, 'a consistency proof', timeoutMs);
      const body = answer.body as { first?: unknown; second?: unknown; proof?: unknown } | null;
      if (answer.status !== 200 || !Array.isArray(body?.proof) || !body.proof.every(isHashHex)) {
        throw new Stop('error', `${q.href} answered ${answer.status} without a consistency proof ({first, second, proof: [hex, ...]})`);
      }
      if (body.first !== k.tree_size || body.second !== cp.tree_size) {
        throw new Stop('refused', `${q.href} answered a proof from ${String(body.first)} to ${String(body.second)}, not from ${k.tree_size} to ${cp.tree_size}`);
      }
      const proof = body.proof as string[];
      if (!verifyConsistency(k.tree_size, cp.tree_size, fromHex(k.root_hash), fromHex(cp.root_hash), proof.map(fromHex))) {
        throw new Stop('fork', `the consistency proof from kept checkpoint ${describe(k)} to ${base.host}'s checkpoint ${describe(cp)} fails: the log before ${k.tree_size} was rewritten`);
      }
      consistency = { from_size: k.tree_size, from_root: k.root_hash, proof };
      result.proof_length = proof.length;
    }

    // Keep it: one file per checkpoint, then latest.json (written last, so it never names a missing file).
    const { tree_size, root_hash, timestamp, kid, jws, tsa_token } = cp;
    const kept: KeptCheckpoint = { tree_size, root_hash, timestamp, kid, jws, tsa_token, witness: { url: result.url, organization: p.organization, fetched_at: now().toISOString(), consistency, tsa } };
    mkdirSync(join(dir, 'checkpoints'), { recursive: true });
    writeAtomic(files.jwks, mergeJwksForKeeping(readKept<JSONWebKeySet>(files.jwks), fetchedJwks));
    writeAtomic(files.checkpoint(cp.tree_size), kept);
    writeAtomic(files.latest, kept);
    result.kept = files.count();
    const time = tsa ? `; TSA time ${tsa.gen_time}` : cp.tsa_token ? '; TSA token not checked (no --tsa-cert)' : '';
    Object.assign(result, {
      ok: true,
      status: latestKept ? 'consistent' : 'first',
      summary: latestKept
        ? `${label}: checkpoint ${cp.tree_size} (root ${short(cp.root_hash)}) extends kept ${latestKept.tree_size}: consistency proof of ${consistency!.proof.length} hashes verified${time}; ${result.kept} kept in ${dir}`
        : `${label}: first checkpoint kept, ${cp.tree_size} (root ${short(cp.root_hash)}, ${p.organization.slug}, key ${cp.kid})${time}; in ${dir}`,
    });
    return result;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    result.status = e.status;
    result.problem = e.message;
    result.summary = `${label}: ${e.status === 'fork' ? 'FORK REFUSED' : e.status === 'refused' ? 'REFUSED' : 'ERROR'}: ${e.message}`;
    return result;
  }
}

/** The JWKS to keep: the keys kept before (they were checked unchanged) with the newly published ones added and not_after updated. */
function mergeJwksForKeeping(kept: JSONWebKeySet | null, fetched: JSONWebKeySet): JSONWebKeySet {
  const byKid = new Map<string | undefined, JWK>((kept?.keys ?? []).map((k) => [k.kid, k]));
  for (const k of fetched.keys) byKid.set(k.kid, k);
  return { keys: [...byKid.values()] };
}

/** Every address in turn (one organization's failure does not stop the others). */
export async function witness(urls: string[], options: WitnessOptions): Promise<WitnessResult[]> {
  const out: WitnessResult[] = [];
  for (const url of urls) out.push(await witnessOrganization(url, options));
  return out;
}
