// `assent receipt verify FILE --jwks URL|FILE`: one receipt checked by anyone, with the organization's
// public keys fetched from its /.well-known/jwks.json (online) or read from a file (offline): the
// signature, and that it was signed within its key's validity (verifyReceipt). No database.
import { readFile } from 'node:fs/promises';
import type { JSONWebKeySet } from 'jose';
import { ReceiptVerificationError, verifyReceipt, type ConsentReceipt } from './document.js';

export interface ReceiptFileReport {
  ok: boolean;
  /** Why it does not verify (null when it does). */
  problem: string | null;
  /** The key that signed it. */
  kid: string | null;
  /** Where the keys came from: the URL or the file. */
  jwks: string;
  receipt: ConsentReceipt | null;
}

class Problem extends Error {}

/** The receipt in a file: a compact JWS, or the JSON an API answers ({"receipt": "<jws>", ...}). */
async function readReceipt(file: string): Promise<string> {
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new Problem(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (text.startsWith('{')) {
    try {
      const body = JSON.parse(text) as { receipt?: unknown };
      if (typeof body.receipt === 'string') return body.receipt.trim();
    } catch {
      // not JSON after all: reported below as not a JWS
    }
    throw new Problem(`${file} is JSON without a "receipt" field: give the receipt (a compact JWS) or an API answer that carries one`);
  }
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(text)) throw new Problem(`${file} does not hold a compact JWS (three base64url parts joined by dots)`);
  return text;
}

/** What went wrong getting a JWKS from a URL or a file, in words. */
export class JwksSourceError extends Error {}

/** A JWK Set from a URL (fetched, 10 s at most) or a file: the organization's keys as a verifier gets them. */
export async function loadJwks(source: string): Promise<JSONWebKeySet> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    let res: Response;
    try {
      res = await fetch(source, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    } catch (e) {
      throw new JwksSourceError(`could not fetch the keys at ${source}: ${((e as Error).cause as Error | undefined)?.message ?? (e as Error).message}`);
    }
    if (!res.ok) throw new JwksSourceError(`the keys at ${source} answered ${res.status}: give the organization's /.well-known/jwks.json`);
    text = await res.text();
  } else {
    try {
      text = await readFile(source, 'utf8');
    } catch (e) {
      throw new JwksSourceError(`cannot read the keys file ${source}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(text) as JSONWebKeySet;
  } catch {
    throw new JwksSourceError(`the keys at ${source} are not JSON`);
  }
  if (!Array.isArray(jwks?.keys)) throw new JwksSourceError(`the keys at ${source} are not a JWK Set ({"keys": [...]})`);
  return jwks;
}

export async function verifyReceiptFile(file: string, jwksSource: string): Promise<ReceiptFileReport> {
  const report: ReceiptFileReport = { ok: false, problem: null, kid: null, jwks: jwksSource, receipt: null };
  try {
    const [jws, jwks] = await Promise.all([readReceipt(file), loadJwks(jwksSource)]);
    const { receipt, kid } = await verifyReceipt(jws, jwks);
    Object.assign(report, { ok: true, kid, receipt });
  } catch (e) {
    if (!(e instanceof Problem || e instanceof JwksSourceError || e instanceof ReceiptVerificationError)) throw e;
    report.problem = e.message;
  }
  return report;
}
