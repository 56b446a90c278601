// The embedded store's control socket. PGlite allows one process per data directory, so while a server
// holds DATA_DIR the `assent` command cannot open the store itself. Instead the server listens on a
// Unix socket in the data directory (DATA_DIR/assent.sock, mode 0600: only the user who runs the
// server, and root, can connect), and a CLI that finds the directory held by a server sends it its
// command: the command's name and its parsed input (arguments, options, the password read from
// standard input) as one line of JSON. The server runs the same execute() from the command table on
// its own services (app.services: a key revoked this way is refused at once by the server's cache) and
// answers with the same output ({human, data, exitCode}) or the error, which the CLI prints as if it
// had run the command itself. `assent stop` asks the server to shut down the same way.
//
// One request per connection; a request is at most 1 MiB; a connection that sends nothing for 30 s is
// dropped. While a command runs (a backup of a large store takes minutes) the server sends a space every
// few seconds, which JSON ignores, so neither end's idle timeout cuts a command that is still working.
// Without a data directory (PostgreSQL) there is no socket: the CLI opens the database itself.
import net from 'node:net';
import { chmodSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppError } from '../platform/http/errors.js';
import { COMMANDS, UsageError, type CommandContext, type CommandInput, type CommandOutput } from './commands.js';

export const CONTROL_SOCKET = 'assent.sock';
/** sun_path holds 108 bytes on Linux, 104 on macOS, counting the terminating NUL. */
const MAX_SOCKET_PATH = 103;
const MAX_REQUEST = 1024 * 1024;
const IDLE_MS = 30_000;

export function controlSocketPath(dataDir: string): string {
  return join(resolve(dataDir), CONTROL_SOCKET);
}

export interface ControlRequest {
  /** A command's name from the table ('key create'), or 'stop'. */
  command: string;
  input?: CommandInput;
}

export type ControlResponse =
  | { ok: true; output: CommandOutput }
  /** usage: exit 2; refused: exit 1 with the message (an AppError, as when the CLI runs it); unexpected: exit 1. */
  | { ok: false; kind: 'usage' | 'refused' | 'unexpected'; message: string };

/** An error the server reported for a handed-over command: main.ts prints it as its own (exit 1). */
export class ControlRefusedError extends Error {}

export interface ControlServer {
  path: string;
  /** Stops accepting, waits for the commands in flight, removes the socket file. */
  close(): Promise<void>;
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Listens on DATA_DIR/assent.sock. Call only while holding the data directory's lock: a socket file
 * found there is then a dead server's, and is replaced. Returns null (with a warning) when the path is
 * too long for a Unix socket: the CLI then refuses as before, naming the lock's holder.
 */
export async function listenControl(options: {
  dataDir: string;
  context: () => CommandContext;
  /** `assent stop`: called once the answer is sent. */
  onStop: () => void;
  log: Logger;
  /** A connection silent this long is dropped (default 30 s); a running command is heard every third of it, at most every 5 s. */
  idleMs?: number;
}): Promise<ControlServer | null> {
  const idleMs = options.idleMs ?? IDLE_MS;
  const path = controlSocketPath(options.dataDir);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    options.log.warn({ path }, 'the data directory path is too long for a control socket: the CLI cannot run commands while this server runs');
    return null;
  }
  rmSync(path, { force: true });
  const inFlight = new Set<Promise<void>>();
  const sockets = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(idleMs, () => socket.destroy());
    let buffered = '';
    let done = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (done) return;
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end < 0) {
        if (buffered.length > MAX_REQUEST) {
          done = true;
          socket.end(JSON.stringify({ ok: false, kind: 'usage', message: 'control request over 1 MiB' } satisfies ControlResponse) + '\n');
        }
        return;
      }
      done = true;
      const heartbeat = setInterval(() => socket.write(' '), Math.min(5_000, Math.floor(idleMs / 3)));
      const work = handle(buffered.slice(0, end))
        .then(({ response, after }) => {
          clearInterval(heartbeat);
          socket.end(JSON.stringify(response) + '\n', () => after?.());
        })
        .finally(() => {
          clearInterval(heartbeat);
          inFlight.delete(work);
        });
      inFlight.add(work);
    });
  });

  async function handle(line: string): Promise<{ response: ControlResponse; after?: () => void }> {
    let request: ControlRequest;
    try {
      request = JSON.parse(line) as ControlRequest;
    } catch {
      return { response: { ok: false, kind: 'usage', message: 'the control request is not JSON' } };
    }
    if (request.command === 'stop') {
      options.log.info({ command: 'stop' }, 'assent stop: shutting down');
      return { response: { ok: true, output: { human: `Stopping the Assent server (pid ${process.pid})`, data: { pid: process.pid } } }, after: options.onStop };
    }
    const command = COMMANDS.find((c) => c.name === request.command && c.execute);
    if (!command || !request.input || !Array.isArray(request.input.args) || typeof request.input.options !== 'object') {
      return { response: { ok: false, kind: 'usage', message: `the server cannot run "${String(request.command)}"` } };
    }
    try {
      command.check?.(request.input);
      const output = await command.execute!(request.input, options.context());
      options.log.info({ command: command.name }, 'ran a command for the assent CLI');
      return { response: { ok: true, output } };
    } catch (e) {
      if (e instanceof UsageError) return { response: { ok: false, kind: 'usage', message: e.message } };
      if (e instanceof AppError) return { response: { ok: false, kind: 'refused', message: e.message } };
      options.log.error({ err: e, command: command.name }, 'a command from the assent CLI failed');
      return { response: { ok: false, kind: 'unexpected', message: `the server failed to run ${command.name}: ${(e as Error).message}` } };
    }
  }

  // Created owner-only: the umask covers the moment between bind() and the chmod below.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(path, () => {
        server.off('error', fail);
        ok();
      });
    });
  } finally {
    process.umask(umask);
  }
  chmodSync(path, 0o600);

  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((ok) => server.close(() => ok()));
        await Promise.allSettled([...inFlight]);
        for (const s of sockets) s.destroy();
        await closed;
        rmSync(path, { force: true });
      })();
      return closing;
    },
  };
}

/**
 * Sends one request to the server holding dataDir. Null when no server answers on the socket (none, or
 * one that does not listen on it); otherwise the server's answer.
 */
export function sendControl(dataDir: string, request: ControlRequest, timeoutMs = 600_000): Promise<ControlResponse | null> {
  const path = controlSocketPath(dataDir);
  return new Promise((resolvePromise, reject) => {
    let connected = false;
    let answer = '';
    const socket = net.createConnection(path);
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`the server did not answer within ${timeoutMs / 1000} s`)));
    socket.on('connect', () => {
      connected = true;
      socket.write(JSON.stringify(request) + '\n');
    });
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected && ['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'EACCES', 'ENAMETOOLONG', 'EINVAL'].includes(e.code ?? '')) resolvePromise(null);
      else reject(new ControlRefusedError(`the server's control socket ${path} failed: ${e.message}`));
    });
    socket.on('end', () => {
      try {
        resolvePromise(JSON.parse(answer) as ControlResponse);
      } catch {
        reject(new ControlRefusedError(`the server closed its control socket ${path} without an answer`));
      }
    });
    // After 'end' or 'error' this changes nothing (a promise settles once).
    socket.on('close', () => reject(new ControlRefusedError(`the server closed its control socket ${path} without an answer`)));
  });
}
