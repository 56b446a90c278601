// Trusted time for checkpoints (issue 32 item 4): an RFC 3161 time-stamp from a time-stamping
// authority (TSA_URL). requestTimestamp asks the TSA to sign "this SHA-256 existed at this time" and
// returns its token; verifyTimestampToken checks a kept token offline against the TSA's certificate.
// The ASN.1 and CMS work is PKI.js (`pkijs`, over `asn1js`): TimeStampReq, TimeStampResp, TSTInfo,
// SignedData and certificate path validation, not hand-made parsing. Pure: no database, no config.
import { createHash, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/** id-ct-TSTInfo: the content type of a time-stamp token's signed content. */
const TST_INFO = '1.2.840.113549.1.9.16.1.4';
const SIGNED_DATA = '1.2.840.113549.1.7.2';
const CONTENT_TYPE_ATTR = '1.2.840.113549.1.9.3';
/** ESS signing-certificate attributes (RFC 2634, RFC 5035): v1 holds a SHA-1 of the signer's certificate, v2 a hash of its choice. */
const SIGNING_CERTIFICATE = '1.2.840.113549.1.9.16.2.12';
const SIGNING_CERTIFICATE_V2 = '1.2.840.113549.1.9.16.2.47';
const EXTENDED_KEY_USAGE = '2.5.29.37';
/** id-kp-timeStamping */
const TIME_STAMPING = '1.3.6.1.5.5.7.3.8';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const HASHES: Record<string, string> = { [SHA256]: 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512' };

/** PKI.js over Node's WebCrypto, passed explicitly (no global engine to depend on). */
const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });

export const DEFAULT_TSA_TIMEOUT_MS = 10_000;

/** Why a time-stamp could not be had from the TSA. */
export class TimestampRequestError extends Error {
  constructor(
    /** unreachable (network, timeout), http (not 200), malformed (not a TimeStampResp), rejected (status not granted), mismatch (not an answer to this request) */
    readonly reason: 'unreachable' | 'http' | 'malformed' | 'rejected' | 'mismatch',
    message: string,
  ) {
    super(message);
    this.name = 'TimestampRequestError';
  }
}

/** Why a time-stamp token does not verify; `check` names the check that failed. */
export class TimestampVerificationError extends Error {
  constructor(
    /** format (not a token), certificate (the given PEM), imprint (not a time-stamp of this data), signature, trust (signer not the given TSA or issued by it), usage (no critical timeStamping key usage), validity (signer's certificate not valid at genTime) */
    readonly check: 'format' | 'certificate' | 'imprint' | 'signature' | 'trust' | 'usage' | 'validity',
    message: string,
  ) {
    super(message);
    this.name = 'TimestampVerificationError';
  }
}

export interface TimestampInfo {
  /** The TSA's time for the token (TSTInfo genTime). */
  genTime: Date;
  /** The token's serial number, hex (unique per TSA). */
  serial: string;
  /** The TSA policy OID it was issued under. */
  policy: string;
}

const toArrayBuffer = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
const hex = (b: ArrayBuffer | Uint8Array): string => Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');

/**
 * What a checkpoint's time-stamp covers: the checkpoint's compact JWS, as UTF-8 bytes. The JWS binds the
 * organization, tree size, root hash and the organization's own time under its key, so the TSA's token
 * then says "this signed checkpoint existed at genTime". One function, so the sequencer that asks and
 * every verifier (export verify, assent witness) time-stamp the same bytes.
 */
export function checkpointTimestampData(jws: string): Buffer {
  return Buffer.from(jws.trim(), 'utf8');
}

/** The TimeStampReq (DER) for SHA-256(data), with the nonce, asking for the TSA's certificate. */
export function buildTimestampRequest(data: Buffer, nonce: Buffer): Buffer {
  const req = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: SHA256, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: toArrayBuffer(createHash('sha256').update(data).digest()) }),
    }),
    nonce: new asn1js.Integer({ valueHex: toArrayBuffer(nonce) }),
    certReq: true,
  });
  return Buffer.from(req.toSchema().toBER(false));
}

interface ParsedToken {
  signedData: pkijs.SignedData;
  tstInfo: pkijs.TSTInfo;
}

/** A TimeStampToken (ContentInfo of SignedData over TSTInfo) parsed, or null with why not. */
function parseToken(token: Uint8Array): ParsedToken | string {
  let contentInfo: pkijs.ContentInfo;
  try {
    contentInfo = pkijs.ContentInfo.fromBER(toArrayBuffer(token));
  } catch (e) {
    return `not a CMS ContentInfo (${(e as Error).message})`;
  }
  if (contentInfo.contentType !== SIGNED_DATA) return `its content is ${contentInfo.contentType}, not CMS SignedData`;
  let signedData: pkijs.SignedData;
  try {
    signedData = new pkijs.SignedData({ schema: contentInfo.content });
  } catch (e) {
    return `its SignedData does not parse (${(e as Error).message})`;
  }
  if (signedData.encapContentInfo.eContentType !== TST_INFO) return `it signs ${signedData.encapContentInfo.eContentType}, not a TSTInfo (a time-stamp)`;
  const eContent = signedData.encapContentInfo.eContent;
  if (!eContent) return 'its TSTInfo is missing';
  try {
    return { signedData, tstInfo: pkijs.TSTInfo.fromBER(eContent.getValue()) };
  } catch (e) {
    return `its TSTInfo does not parse (${(e as Error).message})`;
  }
}

/** The imprint's hash algorithm (Node's name), or null when not SHA-2. */
function imprintHash(tst: pkijs.TSTInfo): string | null {
  return HASHES[tst.messageImprint.hashAlgorithm.algorithmId] ?? null;
}

function imprintMatches(tst: pkijs.TSTInfo, data: Buffer): boolean {
  const name = imprintHash(tst);
  if (!name) return false;
  const expected = createHash(name).update(data).digest();
  return Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView).equals(expected);
}

/**
 * Asks the TSA at tsaUrl for a time-stamp of SHA-256(data): POSTs an RFC 3161 TimeStampReq
 * (application/timestamp-query, a random 64-bit nonce, certReq true) and returns the TimeStampToken
 * (DER, the ContentInfo of the TimeStampResp, byte for byte as the TSA sent it) once the status is
 * granted and the token's imprint and nonce are this request's. Throws TimestampRequestError otherwise.
 */
export async function requestTimestamp(tsaUrl: string, data: Buffer, opts: { timeoutMs?: number } = {}): Promise<Buffer> {
  const nonce = randomBytes(8);
  nonce[0] = (nonce[0]! & 0x7f) | 0x01; // a positive INTEGER with no leading zero byte
  const body = buildTimestampRequest(data, nonce);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TSA_TIMEOUT_MS;
  let res: Response;
  let answer: Buffer;
  try {
    res = await fetch(tsaUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: new Uint8Array(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    answer = Buffer.from(await res.arrayBuffer());
  } catch (e) {
    const err = e as Error;
    const why = err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : ((err.cause as Error | undefined)?.message ?? err.message);
    throw new TimestampRequestError('unreachable', `the time-stamping authority at ${tsaUrl} could not be reached: ${why}`);
  }
  if (res.status !== 200) {
    // Its first line of text, if it sent some (an error page's or a proxy's message), shortened.
    const text = /^(text|application\/(json|problem))/.test(res.headers.get('content-type') ?? '') ? answer.toString('utf8').trim().split('\n')[0]!.slice(0, 200) : '';
    throw new TimestampRequestError('http', `the time-stamping authority at ${tsaUrl} answered HTTP ${res.status}${text ? `: ${text}` : ''}`);
  }
  let resp: pkijs.TimeStampResp;
  let tokenBytes: Buffer | null = null;
  try {
    const asn = asn1js.fromBER(toArrayBuffer(answer));
    if (asn.offset === -1) throw new Error(asn.result.error);
    resp = new pkijs.TimeStampResp({ schema: asn.result });
    // The token exactly as sent (its signature covers its own encoding, never re-encode it).
    const second = (asn.result as asn1js.Sequence).valueBlock.value[1];
    if (second) tokenBytes = Buffer.from(second.valueBeforeDecodeView);
  } catch (e) {
    throw new TimestampRequestError('malformed', `the time-stamping authority at ${tsaUrl} did not answer a TimeStampResp (${res.headers.get('content-type') ?? 'no content type'}, ${answer.length} bytes): ${(e as Error).message}`);
  }
  const status = resp.status.status;
  if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) {
    const text = (resp.status.statusStrings ?? []).map((s) => s.valueBlock.value).join('; ');
    throw new TimestampRequestError('rejected', `the time-stamping authority at ${tsaUrl} refused the request: status ${pkijs.PKIStatus[status] ?? status}${text ? ` (${text})` : ''}${failInfo(resp)}`);
  }
  if (!tokenBytes) throw new TimestampRequestError('malformed', `the time-stamping authority at ${tsaUrl} granted the request but sent no token`);
  const parsed = parseToken(tokenBytes);
  if (typeof parsed === 'string') throw new TimestampRequestError('malformed', `the token from ${tsaUrl} is ${parsed}`);
  if (!imprintMatches(parsed.tstInfo, data)) {
    throw new TimestampRequestError('mismatch', `the token from ${tsaUrl} time-stamps another imprint (${hex(parsed.tstInfo.messageImprint.hashedMessage.valueBlock.valueHexView)}), not SHA-256 of the data sent`);
  }
  const got = parsed.tstInfo.nonce ? Buffer.from(parsed.tstInfo.nonce.valueBlock.valueHexView) : null;
  if (!got || !got.equals(nonce)) {
    throw new TimestampRequestError('mismatch', `the token from ${tsaUrl} carries ${got ? `nonce ${got.toString('hex')}` : 'no nonce'}, not this request's ${nonce.toString('hex')}: a stale or replayed answer`);
  }
  return tokenBytes;
}

/** PKIFailureInfo's bits (RFC 3161 2.4.2) by number. */
const FAIL_INFO: Record<number, string> = { 0: 'badAlg', 2: 'badRequest', 5: 'badDataFormat', 14: 'timeNotAvailable', 15: 'unacceptedPolicy', 16: 'unacceptedExtension', 17: 'addInfoNotAvailable', 25: 'systemFailure' };

function failInfo(resp: pkijs.TimeStampResp): string {
  const bits = resp.status.failInfo;
  if (!bits) return '';
  const bytes = bits.valueBlock.valueHexView;
  const names: string[] = [];
  for (let i = 0; i < bytes.length * 8; i++) if (bytes[i >> 3]! & (0x80 >> (i & 7))) names.push(FAIL_INFO[i] ?? `bit ${i}`);
  return names.length ? `, failure ${names.join(', ')}` : '';
}

/** Every certificate of a PEM text (one or a bundle). */
function readCertificates(pem: string): pkijs.Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new TimestampVerificationError('certificate', 'the TSA certificate given holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return blocks.map((block, i) => {
    try {
      const der = Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64');
      return pkijs.Certificate.fromBER(toArrayBuffer(der));
    } catch (e) {
      throw new TimestampVerificationError('certificate', `certificate ${i + 1} of the TSA certificate given does not parse: ${(e as Error).message}`);
    }
  });
}

const der = (c: pkijs.Certificate): Buffer => Buffer.from(c.toSchema(true).toBER(false));
/** A certificate's subject as one line (Node's reading of it). */
const subjectOf = (c: pkijs.Certificate): string => new X509Certificate(der(c)).subject.replaceAll('\n', ', ');

/**
 * RFC 3161 2.4.1: the signed attributes name the TSA's certificate (ESS signing-certificate, v1 or v2),
 * binding the signature to it. Null when the first ESSCertID's hash is that of `signer`.
 */
function essCertProblem(signerInfo: pkijs.SignerInfo, signer: pkijs.Certificate): string | null {
  const attr = signerInfo.signedAttrs?.attributes.find((a) => a.type === SIGNING_CERTIFICATE_V2 || a.type === SIGNING_CERTIFICATE);
  if (!attr) return 'signed attributes have no ESS signing-certificate (RFC 3161 2.4.1)';
  try {
    const certs = (attr.values[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
    const first = (certs.valueBlock.value[0] as asn1js.Sequence).valueBlock.value;
    let hash = 'sha1';
    let certHash = first[0];
    if (attr.type === SIGNING_CERTIFICATE_V2) {
      hash = 'sha256'; // the default of ESSCertIDv2
      if (first[0] instanceof asn1js.Sequence) {
        const oid = (first[0].valueBlock.value[0] as asn1js.ObjectIdentifier).valueBlock.toString();
        const name = HASHES[oid];
        if (!name) return `ESS signing-certificate uses hash ${oid}, not SHA-256/384/512`;
        hash = name;
        certHash = first[1];
      }
    }
    if (!(certHash instanceof asn1js.OctetString)) return 'ESS signing-certificate does not parse';
    const expected = createHash(hash).update(der(signer)).digest();
    if (!expected.equals(Buffer.from(certHash.valueBlock.valueHexView))) return `ESS signing-certificate names another certificate than its signer's (${subjectOf(signer)})`;
    return null;
  } catch (e) {
    return `ESS signing-certificate does not parse (${(e as Error).message})`;
  }
}

/** The signer's certificate, by the SignerInfo's issuer and serial number or subject key identifier, among these. */
async function findSigner(signerInfo: pkijs.SignerInfo, certs: pkijs.Certificate[]): Promise<pkijs.Certificate | null> {
  const sid = signerInfo.sid as pkijs.IssuerAndSerialNumber | asn1js.Constructed | asn1js.Primitive;
  for (const c of certs) {
    if (sid instanceof pkijs.IssuerAndSerialNumber) {
      if (c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber)) return c;
    } else {
      const keyId = sid.idBlock.isConstructed ? ((sid as asn1js.Constructed).valueBlock.value[0] as asn1js.Primitive).valueBlock.valueHexView : (sid as asn1js.Primitive).valueBlock.valueHexView;
      const digest = createHash('sha1').update(c.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView).digest();
      if (digest.equals(Buffer.from(keyId))) return c;
    }
  }
  return null;
}

/**
 * Checks a time-stamp token against the data it should time-stamp and the TSA's certificate, offline:
 * - the token is a CMS SignedData over a TSTInfo, and its message imprint is the SHA-256 (or SHA-384,
 *   SHA-512, as the TSTInfo says) of `data`;
 * - its signature verifies with the signer's certificate (taken from the token, or from the PEM when the
 *   TSA sent none), and the signed content-type is TSTInfo;
 * - the signer is trusted: `tsaCertPem` is either the TSA's own certificate (the signer must be exactly
 *   it), or the certificate of a CA that issued the TSA's (the path from the signer to it must validate
 *   at genTime); a PEM bundle may hold several, any of them serves;
 * - the signer's certificate has the extended key usage timeStamping, marked critical, and nothing else
 *   (RFC 3161 2.3), and was valid at genTime.
 * Returns genTime, the serial (hex) and the policy; throws TimestampVerificationError naming the check.
 */
export async function verifyTimestampToken(token: Buffer, data: Buffer, tsaCertPem: string): Promise<TimestampInfo> {
  const trusted = readCertificates(tsaCertPem);
  const parsed = parseToken(token);
  if (typeof parsed === 'string') throw new TimestampVerificationError('format', `the time-stamp token is ${parsed}`);
  const { signedData, tstInfo } = parsed;
  const info: TimestampInfo = { genTime: tstInfo.genTime, serial: hex(tstInfo.serialNumber.valueBlock.valueHexView), policy: tstInfo.policy };
  const name = imprintHash(tstInfo);
  if (!name) throw new TimestampVerificationError('imprint', `the token's imprint uses hash ${tstInfo.messageImprint.hashAlgorithm.algorithmId}, not SHA-256/384/512`);
  if (!imprintMatches(tstInfo, data)) {
    throw new TimestampVerificationError('imprint', `the token time-stamps ${name} ${hex(tstInfo.messageImprint.hashedMessage.valueBlock.valueHexView)}, not that of this data (${createHash(name).update(data).digest('hex')}): the data was changed, or the token is another's`);
  }
  const signerInfo = signedData.signerInfos[0];
  if (!signedData.signerInfos.length || !signerInfo) throw new TimestampVerificationError('format', 'the time-stamp token has no signer');
  const included = (signedData.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  const signer = (await findSigner(signerInfo, included)) ?? (await findSigner(signerInfo, trusted));
  if (!signer) throw new TimestampVerificationError('trust', "the token's signer certificate is neither in the token nor the TSA certificate given");
  const contentType = signerInfo.signedAttrs?.attributes.find((a) => a.type === CONTENT_TYPE_ATTR);
  if (contentType && (contentType.values[0] as asn1js.ObjectIdentifier | undefined)?.valueBlock.toString() !== TST_INFO) {
    throw new TimestampVerificationError('signature', "the token's signed content-type attribute is not TSTInfo");
  }

  const ess = essCertProblem(signerInfo, signer);
  if (ess) throw new TimestampVerificationError('signature', `the token's ${ess}`);

  // The signature: PKI.js finds the signer among the SignedData's certificates; give it the one found.
  const forVerify = (parseToken(token) as ParsedToken).signedData;
  forVerify.certificates = [signer];
  let signatureOk = false;
  try {
    const result = await forVerify.verify({ signer: 0, data: toArrayBuffer(data), checkChain: false, extendedMode: true }, engine);
    signatureOk = result.signatureVerified === true;
  } catch (e) {
    const err = e as pkijs.SignedDataVerifyError;
    throw new TimestampVerificationError('signature', `the token's signature does not verify: ${err.message}`);
  }
  if (!signatureOk) throw new TimestampVerificationError('signature', `the token's signature does not verify with its signer's certificate (${subjectOf(signer)}): the token was altered`);

  // Trust: the signer is the certificate given, or a certificate given issued it (a path at genTime).
  const signerDer = der(signer);
  const direct = trusted.some((c) => der(c).equals(signerDer));
  if (!direct) {
    const chain = new pkijs.CertificateChainValidationEngine({ trustedCerts: trusted, certs: [...included.filter((c) => !der(c).equals(signerDer)), signer], checkDate: info.genTime });
    const result = await chain.verify({}, engine).catch((e: { resultMessage?: string; message?: string }) => ({ result: false, resultMessage: e.resultMessage ?? e.message ?? String(e) }));
    if (!result.result) {
      throw new TimestampVerificationError(
        'trust',
        `the token was signed by ${subjectOf(signer)}, which is not the TSA certificate given (${trusted.map(subjectOf).join('; ')}) nor issued by it: ${result.resultMessage}`,
      );
    }
  }

  // RFC 3161 2.3: the TSA's certificate has one extended key usage, timeStamping, marked critical.
  const eku = signer.extensions?.find((x) => x.extnID === EXTENDED_KEY_USAGE);
  const purposes = (eku?.parsedValue as pkijs.ExtKeyUsage | undefined)?.keyPurposes ?? [];
  if (!eku || !purposes.includes(TIME_STAMPING)) {
    throw new TimestampVerificationError('usage', `the signer's certificate (${subjectOf(signer)}) does not have the extended key usage timeStamping: it is not a time-stamping authority's`);
  }
  if (!eku.critical || purposes.length !== 1) {
    throw new TimestampVerificationError('usage', `the signer's certificate (${subjectOf(signer)}) must have timeStamping as its only extended key usage, marked critical (RFC 3161 2.3)`);
  }
  const t = info.genTime.getTime();
  if (t < signer.notBefore.value.getTime() || t > signer.notAfter.value.getTime()) {
    throw new TimestampVerificationError('validity', `the token's time ${info.genTime.toISOString()} is outside its signer's certificate validity (${signer.notBefore.value.toISOString()} to ${signer.notAfter.value.toISOString()})`);
  }
  return info;
}

/** How far a checkpoint's own time may be after its TSA token's genTime (clocks differ a little). */
export const CHECKPOINT_TSA_SKEW_MS = 60_000;

/**
 * A checkpoint's RFC 3161 token checked with the TSA's certificate (what `export verify --tsa-cert` and
 * `assent witness --tsa-cert` do for each checkpoint that carries one): the token must time-stamp the
 * checkpoint's JWS (checkpointTimestampData) and verify as verifyTimestampToken says, and the
 * checkpoint's own `timestamp` must not be after the TSA's genTime (a checkpoint dated ahead). Throws
 * TimestampVerificationError naming the checkpoint's size and what failed.
 */
export async function verifyCheckpointTimestamp(checkpoint: { tree_size: number; timestamp: string; jws: string; tsa_token: string }, tsaCertPem: string): Promise<TimestampInfo> {
  let info: TimestampInfo;
  try {
    info = await verifyTimestampToken(Buffer.from(checkpoint.tsa_token, 'base64'), checkpointTimestampData(checkpoint.jws), tsaCertPem);
  } catch (e) {
    if (!(e instanceof TimestampVerificationError)) throw e;
    throw new TimestampVerificationError(e.check, `the TSA token of checkpoint ${checkpoint.tree_size} does not verify: ${e.message}`);
  }
  if (info.genTime.getTime() + CHECKPOINT_TSA_SKEW_MS < Date.parse(checkpoint.timestamp)) {
    throw new TimestampVerificationError('validity', `checkpoint ${checkpoint.tree_size} claims the time ${checkpoint.timestamp}, after its TSA token's ${info.genTime.toISOString()}: it was dated ahead`);
  }
  return info;
}
