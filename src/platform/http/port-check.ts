// Whether the server's port is free, asked before anything is created: `assent serve` on a port in use
// must not first make a data directory, migrate it and write a secret key (issue 30 item 5). The port is
// bound for a moment and released; a process that takes it in between still meets the listen's own
// EADDRINUSE, answered with the same sentence.
import net from 'node:net';

export class PortInUseError extends Error {
  constructor(readonly port: number, host: string) {
    super(`port ${port} is already in use (${host}): stop the other server or set PORT. Nothing was started or created.`);
  }
}

/** Resolves when host:port can be bound (port 0 always can); throws PortInUseError when it is taken. */
export async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'EADDRINUSE' ? new PortInUseError(port, host) : e));
    // exclusive: a cluster worker must not share the primary's handle; this is a question about the port itself.
    probe.listen({ port, host, exclusive: true }, resolve);
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
