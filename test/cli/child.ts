// Runs the real `assent` command (node bin/assent.mjs) as a child process on the store of the current
// vitest project: a fresh DATA_DIR (pglite) or a scratch database (postgres), each a copy of the
// migrated template (test/support/templates.ts) unless a test asks for an empty one. Every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/platform/db/open.js';
import type { Database } from '../../src/platform/db/types.js';
import { createScratchPostgres, storeKind, type StoreKind } from '../support/store.js';
import { copyPgliteTemplate } from '../support/templates.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Everything loadConfig reads: a child sees only the values a test sets, never the parent's. */
const CONFIG_VARS = [
  'PORT', 'HOST', 'BASE_DOMAIN', 'PUBLIC_URL', 'DATA_DIR', 'DATABASE_URL', 'TRUST_PROXY', 'LOG_LEVEL',
  'DEFAULT_COUNTRY_CODE', 'ASSENT_RLS', 'ASSENT_SECRET_KEY', 'ASSENT_NEW_SECRET_KEY', 'MESSAGE_PROVIDER',
];

/** The children's ASSENT_SECRET_KEY unless a test sets its own (a server on PostgreSQL refuses to start without one). */
export const CHILD_SECRET_KEY = 'child-process-secret-key-for-tests-0123456789';

export interface CliStore {
  kind: StoreKind;
  /** DATA_DIR (pglite) or DATABASE_URL (postgres). */
  env: Record<string, string>;
  dataDir: string | null;
  /** Opens the store in this process: on pglite only while no child holds the data directory. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/**
 * A store of the current project for child processes: migrated (a copy of the template), or with
 * `empty`, a data directory or database the first child initializes and migrates.
 */
export async function createCliStore(options: { empty?: boolean } = {}): Promise<CliStore> {
  const withDb = async <T>(open: () => Promise<Database>, fn: (db: Database) => Promise<T>): Promise<T> => {
    const db = await open();
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  if (storeKind() === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'assent-cli-'));
    if (!options.empty) await copyPgliteTemplate(dataDir);
    return {
      kind: 'pglite',
      env: { DATA_DIR: dataDir },
      dataDir,
      query: (text, params) => withDb(() => openDatabase({ databaseUrl: null, dataDir }), (db) => db.system.query(text, params)),
      async drop() {
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const scratch = await createScratchPostgres({ migrated: !options.empty });
  return {
    kind: 'postgres',
    env: { DATABASE_URL: scratch.url },
    dataDir: null,
    query: (text, params) =>
      withDb(() => openDatabase({ databaseUrl: scratch.url, dataDir: '', poolSize: 1 }), (db) => db.system.query(text, params)),
    drop: () => scratch.drop(),
  };
}

export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARS) delete env[name];
  // Rate limits high enough never to be met by a test's requests from one address. MESSAGE_PROVIDER=log
  // said explicitly: a server on PostgreSQL refuses the default (the tests read the codes from the log).
  return { ...env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ADDRESS: '1000000', ASSENT_SECRET_KEY: CHILD_SECRET_KEY, MESSAGE_PROVIDER: 'log', ...extra };
}

export function uniqueSlug(): string {
  return `c${randomBytes(5).toString('hex')}`;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function assent(args: string[], env: Record<string, string>, stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  return spawn(process.execPath, ['bin/assent.mjs', ...args], { cwd: ROOT, env: childEnv(env), stdio: [stdin, 'pipe', 'pipe'] });
}

/** Runs one CLI command to completion (killed after timeoutMs); `stdin`, when given, is its standard input. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000, stdin?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = assent(args, env, stdin === undefined ? 'ignore' : 'pipe');
    if (stdin !== undefined) child.stdin!.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`assent ${args.join(' ')} took over ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Like runCli, but the command must succeed; returns its parsed --json output. */
export async function cliJson<T = any>(args: string[], env: Record<string, string>): Promise<T> {
  const r = await runCli([...args, '--json'], env);
  if (r.code !== 0) throw new Error(`assent ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface LogLine {
  level?: number;
  msg?: string;
  [field: string]: unknown;
}

export interface ServerProcess {
  port: number;
  child: ChildProcess;
  logs: LogLine[];
  stderr(): string;
  /** SIGTERM, then the exit code (rejects when the server is still running after timeoutMs). */
  stop(timeoutMs?: number): Promise<number | null>;
  /** SIGKILL if still running; waits for the exit. */
  kill(): Promise<void>;
}

const running = new Set<ServerProcess>();

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Starts `assent serve` on a free port (or `port`: a process restarted in its place) and resolves once it has logged "Assent listening". */
export async function startServer(env: Record<string, string>, timeoutMs = 90_000, fixedPort?: number): Promise<ServerProcess> {
  const port = fixedPort ?? (await freePort());
  const child = assent(['serve'], { HOST: '127.0.0.1', ...env, PORT: String(port), LOG_LEVEL: 'info' });
  const logs: LogLine[] = [];
  let stderr = '';
  let partial = '';
  const server: ServerProcess = {
    port,
    child,
    logs,
    stderr: () => stderr,
    async stop(stopTimeoutMs = 10_000) {
      child.kill('SIGTERM');
      const code = await within(exited(child), stopTimeoutMs, 'assent serve after SIGTERM');
      running.delete(server);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await within(exited(child), 5_000, 'assent serve after SIGKILL');
      running.delete(server);
    },
  };
  running.add(server);

  let announce: (() => void) | undefined;
  child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        logs.push({ msg: line });
      }
      if (logs.at(-1)?.msg?.includes('Assent listening')) announce?.();
    }
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d));

  const listening = new Promise<void>((resolve, reject) => {
    announce = resolve;
    child.once('exit', (code) => reject(new Error(`assent serve exited (${code}) before listening:\n${stderr}`)));
  });
  try {
    await within(listening, timeoutMs, 'assent serve to log "Assent listening"');
  } catch (e) {
    await server.kill();
    throw new Error(`${(e as Error).message}\nstdout: ${JSON.stringify(logs)}\nstderr: ${stderr}`);
  }
  return server;
}

/** Kills every server still running (afterEach/afterAll), whatever the test did. */
export async function killServers(): Promise<void> {
  await Promise.all([...running].map((s) => s.kill()));
}

export interface HttpResponse {
  status: number;
  body: string;
  json<T = any>(): T;
}

/** A real HTTP request to 127.0.0.1 with a chosen Host (fetch cannot set Host). */
export function request(
  port: number,
  options: { method: string; path: string; host: string; key?: string; body?: unknown; headers?: Record<string, string> },
  timeoutMs = 10_000,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...options.headers, host: options.host };
    if (options.key !== undefined) headers['x-api-key'] = options.key;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = http.request({ host: '127.0.0.1', port, path: options.path, method: options.method, headers, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, json: () => JSON.parse(body) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${options.method} ${options.path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
