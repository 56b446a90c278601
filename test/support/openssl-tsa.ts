// A real RFC 3161 time-stamping authority for tests, made of OpenSSL's own `openssl ts` (Debian's
// openssl package): in a temporary directory, a CA certificate, a TSA certificate it issued (extended key
// usage critical timeStamping, as RFC 3161 requires) and an `openssl ts` configuration; an HTTP server
// on 127.0.0.1 answers each POST (application/timestamp-query) by running
// `openssl ts -reply -config … -queryfile … -out …` and sending the reply it wrote. Nothing is faked:
// every token is OpenSSL's, signed with the TSA's key.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface OpensslTsaOptions {
  /** The digests the TSA accepts (openssl ts `digests`); default sha256, sha384, sha512. */
  digests?: string[];
  /** The TSA certificate's extended key usage line (default `critical,timeStamping`). */
  extendedKeyUsage?: string;
  /** The TSA's policy OID (default 1.3.6.1.4.1.99999.1). */
  policy?: string;
  /** openssl ts `ess_cert_id_alg`: sha256 (default; ESS signing-certificate v2) or sha1 (v1). */
  essCertIdAlg?: 'sha1' | 'sha256';
}

export interface OpensslTsa {
  /** http://127.0.0.1:<port>/ : POST a TimeStampReq here. */
  url: string;
  dir: string;
  /** The CA certificate (PEM) that issued the TSA certificate. */
  caCertPem: string;
  caCertFile: string;
  /** The TSA's own certificate (PEM). */
  tsaCertPem: string;
  tsaCertFile: string;
  /** How many requests it has answered. */
  requests: number;
  /** When true, every answer is the previous real reply again (a stale or replayed answer). */
  replayLast: boolean;
  /** Runs openssl with these arguments in the TSA's directory; stdout and stderr. */
  openssl(args: string[]): Promise<{ stdout: string; stderr: string }>;
  close(): Promise<void>;
}

/** Throws unless the `openssl` command exists (Debian: apt-get install -y openssl). */
export async function opensslVersion(): Promise<string> {
  try {
    return (await run('openssl', ['version'])).stdout.trim();
  } catch (e) {
    throw new Error(`the openssl command is needed for the local TSA (apt-get install -y openssl): ${(e as Error).message}`);
  }
}

/** A CA, a TSA certificate of its issue and a CA certificate that did not issue it, in `dir`. */
async function makeCertificates(dir: string, o: OpensslTsaOptions): Promise<void> {
  const openssl = (args: string[]) => run('openssl', args, { cwd: dir });
  writeFileSync(
    join(dir, 'tsa.ext'),
    [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature, nonRepudiation',
      `extendedKeyUsage = ${o.extendedKeyUsage ?? 'critical, timeStamping'}`,
      'subjectKeyIdentifier = hash',
      'authorityKeyIdentifier = keyid, issuer',
      '',
    ].join('\n'),
  );
  const ca = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/O=Assent tests/CN=Test TSA Root CA', ...ca]);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', '/O=Assent tests/CN=Test Time Stamping Authority']);
  await openssl(['x509', '-req', '-in', 'tsa.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tsa.pem', '-days', '30', '-sha256', '-extfile', 'tsa.ext']);
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  writeFileSync(
    join(dir, 'openssl-ts.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa_config1',
      '',
      '[ tsa_config1 ]',
      `dir = ${dir}`,
      'serial = $dir/tsaserial',
      'crypto_device = builtin',
      'signer_cert = $dir/tsa.pem',
      'certs = $dir/ca.pem',
      'signer_key = $dir/tsa.key',
      'signer_digest = sha256',
      `default_policy = ${o.policy ?? '1.3.6.1.4.1.99999.1'}`,
      'other_policies = 1.3.6.1.4.1.99999.2',
      `digests = ${(o.digests ?? ['sha256', 'sha384', 'sha512']).join(', ')}`,
      'accuracy = secs:1',
      'ordering = yes',
      'tsa_name = yes',
      'ess_cert_id_chain = no',
      `ess_cert_id_alg = ${o.essCertIdAlg ?? 'sha256'}`,
      '',
    ].join('\n'),
  );
}

/** Starts the TSA; close() stops it and removes its directory. */
export async function startOpensslTsa(options: OpensslTsaOptions = {}): Promise<OpensslTsa> {
  await opensslVersion();
  const dir = mkdtempSync(join(tmpdir(), 'assent-tsa-'));
  await makeCertificates(dir, options);
  let seq = 0;
  let last: Buffer | null = null;
  // One openssl at a time: it reads and writes the serial file.
  let queue: Promise<unknown> = Promise.resolve();
  const reply = (query: Buffer): Promise<Buffer> => {
    const next = queue.then(async () => {
      const n = ++seq;
      const q = join(dir, `q${n}.tsq`);
      const r = join(dir, `r${n}.tsr`);
      writeFileSync(q, query);
      await run('openssl', ['ts', '-reply', '-config', join(dir, 'openssl-ts.cnf'), '-queryfile', q, '-out', r], { cwd: dir });
      return readFileSync(r);
    });
    queue = next.catch(() => undefined);
    return next;
  };
  const tsa: OpensslTsa = {
    url: '',
    dir,
    caCertFile: join(dir, 'ca.pem'),
    caCertPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    tsaCertFile: join(dir, 'tsa.pem'),
    tsaCertPem: readFileSync(join(dir, 'tsa.pem'), 'utf8'),
    requests: 0,
    replayLast: false,
    openssl: (args) => run('openssl', args, { cwd: dir }),
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(415, { 'content-type': 'text/plain' }).end('POST an application/timestamp-query\n');
        return;
      }
      tsa.requests++;
      const answer = tsa.replayLast && last ? Promise.resolve(last) : reply(Buffer.concat(chunks));
      answer.then(
        (body) => {
          last = body;
          res.writeHead(200, { 'content-type': 'application/timestamp-reply', 'content-length': body.length }).end(body);
        },
        (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`openssl ts -reply failed: ${e.message}\n`),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  tsa.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  return tsa;
}
