// One socket write per batch of a tenant transaction (issue 31).
//
// postgres.js buffers a connection's messages and writes them on the next setImmediate, but writes at
// once as soon as the buffer passes 1,024 bytes (its connection.js `write`; no option changes it). A
// tenant transaction's first batch (BEGIN and the tenant, the change, its audit entry and its webhook
// event, the fulfilment's reads) is 1.2–2 KB with its parameters, so it left in two writes, and the
// server woke for each: measured with `strace -c` on `POST /grievance`, 3.3 writes and 3.4 reads per
// request, 2.3 writes with the threshold raised (docs/performance.md). This socket corks on the first
// write of a turn of the event loop and uncorks on the second setImmediate after it, which runs after
// postgres.js's own setImmediate for the rest of the buffer: the batch leaves in one write (a writev).
//
// postgres.js takes a ready socket from its `socket` option (it then skips its own connect: no host
// rotation, so this is only used for a URL with one host; connect_timeout is kept here).
import net from 'node:net';

/** The parts of postgres.js's parsed options the socket needs. */
export interface SocketOptions {
  host: string[];
  port: number[];
  path?: string | false;
  connect_timeout?: number | null;
}

/** Corks the socket from its first write in a turn of the event loop to the second setImmediate after it. */
export function coalesceWrites(socket: net.Socket): net.Socket {
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: net.Socket, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(() => setImmediate(uncork));
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof socket.write;
  return socket;
}

/** A connected socket for postgres.js's `socket` option: TCP or a Unix socket, as the URL says. */
export function coalescingSocket(options: SocketOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = options.path ? net.connect(options.path) : net.connect(options.port[0]!, options.host[0]!);
    const seconds = options.connect_timeout ?? 30;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`connect ETIMEDOUT ${options.host[0]}:${options.port[0]}`), { code: 'ETIMEDOUT' }));
    }, seconds * 1000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', failed);
      resolve(coalesceWrites(socket));
    });
    const failed = (e: Error) => {
      clearTimeout(timer);
      reject(e);
    };
    socket.once('error', failed);
  });
}

/** One host in the URL (postgres.js rotates through several itself, which a given socket would stop). */
export function singleHost(url: string): boolean {
  try {
    return !new URL(url).host.includes(',');
  } catch {
    return false;
  }
}
