// Issue 17 item 8, in the harness (bench/run.ts) at the write target: what safe retries and webhooks cost a
// write. Two more measured writes beside the plain `POST /grievance`:
// - `POST /grievance (Idempotency-Key)`: the same creation, each request with a new key (the key is read,
//   locked and stored in the change's transaction: src/platform/http/idempotency.ts);
// - `POST /grievance (3 webhooks)`: the creation in an organization with three endpoints subscribed to
//   grievance.created, so each write also stores its event and three deliveries, and the service's webhook
//   worker delivers them, signed, to a receiver in this process (127.0.0.1; the servers run with
//   WEBHOOK_ALLOW_PRIVATE=1). The delivery is part of the cost: it runs in the service's process, beside
//   the requests. Before the service is stopped the bench waits for the receiver to fall quiet, so no
//   backlog of deliveries is left for the next process to send.
// The baseline answers both with its bare POST /grievance (the same service call; it has no idempotency
// layer and no worker).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createAccountsService } from '../src/features/accounts/index.js';
import { GRIEVANCE_CATEGORIES } from '../src/features/grievances/index.js';
import { systemClock } from '../src/platform/clock.js';
import { newSigningSecret } from '../src/platform/webhooks/secrets.js';
import type { Database } from '../src/platform/db/types.js';

export const HOOK_ENDPOINTS = 3;

/** A receiver for the webhook deliveries: answers 204 at once, counts what arrives. */
export interface HookReceiver {
  url: string;
  received: number;
  /** Resolves once nothing has arrived for quietMs (at most maxMs). */
  quiet(quietMs?: number, maxMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  let last = Date.now();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      r.received++;
      last = Date.now();
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const r: HookReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: 0,
    async quiet(quietMs = 1000, maxMs = 120_000) {
      const until = Date.now() + maxMs;
      last = Math.max(last, Date.now());
      while (Date.now() - last < quietMs && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return r;
}

export interface HookOrg {
  slug: string;
  key: string;
}

/** An organization of its own (so the other writes send no events) with three endpoints at the receiver. */
export async function seedHookOrg(db: Database, receiverUrl: string): Promise<HookOrg> {
  const accounts = createAccountsService({ db, clock: systemClock });
  const slug = 'bench-hooks';
  const org = await accounts.createOrganization({ slug, name: 'Bench organization with webhooks' });
  const key = await accounts.createApiKey(slug, { scopes: ['grievances'], name: 'bench' });
  const now = new Date();
  for (let e = 0; e < HOOK_ENDPOINTS; e++) {
    // Stored as the API stores it when ASSENT_SECRET_KEY is unset (the bench's servers run without it).
    await db.system.query(
      `insert into webhook_endpoints (org_id, id, url, description, events, secret, enabled, created_at, updated_at)
       values ($1, $2, $3, $4, array['grievance.created'], $5, true, $6, $6)`,
      [org.id, randomUUID(), `${receiverUrl}/${e}`, `bench receiver ${e}`, newSigningSecret(), now],
    );
  }
  return { slug, key: key.key };
}

const grievanceBody = (i: number, users: number, random: () => number) =>
  JSON.stringify({
    client_user_id: `user-${Math.floor(random() * users)}`,
    subject: `Benchmark request ${i}`,
    description: 'Please send me a copy of all the personal data you hold about me, with where it came from and who received it.',
    category: GRIEVANCE_CATEGORIES[i % GRIEVANCE_CATEGORIES.length],
  });

interface Built {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The two write endpoints (bench/run.ts's Endpoint shape). */
export function integrationEndpoints(
  orgs: { slug: string; key: string; grievanceUsers: number }[],
  hooks: HookOrg,
  receiver: HookReceiver,
  log: (line: string) => void = () => {},
): { name: string; kind: 'write'; build(random: () => number, i: number): Built; after?(port: number, server: 'service' | 'baseline'): Promise<void> }[] {
  return [
    {
      name: 'POST /grievance (Idempotency-Key)',
      kind: 'write',
      build: (random, i) => {
        const org = orgs[Math.floor(random() * orgs.length)]!;
        return {
          method: 'POST',
          path: '/grievance',
          // A new key per request: each is a first request (the stored answer is written, never replayed).
          headers: { host: `${org.slug}.localhost`, 'x-api-key': org.key, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body: grievanceBody(i, org.grievanceUsers, random),
        };
      },
    },
    {
      name: `POST /grievance (${HOOK_ENDPOINTS} webhooks)`,
      kind: 'write',
      build: (random, i) => ({
        method: 'POST',
        path: '/grievance',
        headers: { host: `${hooks.slug}.localhost`, 'x-api-key': hooks.key, 'content-type': 'application/json' },
        body: grievanceBody(i, 500, random),
      }),
      // The service's worker sends what the writes queued before the process is stopped.
      after: async (_port, server) => {
        if (server !== 'service') return;
        const before = receiver.received;
        const started = Date.now();
        await receiver.quiet();
        log(`webhook deliveries received so far: ${receiver.received} (${receiver.received - before} after the load, drained in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
      },
    },
  ];
}
