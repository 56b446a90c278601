// Fulfilment writes (issue 33) for bench/run.ts: filing a request that fans out to FANOUT_SYSTEMS
// systems (one task each, in the filing's transaction), and systems claiming their tasks under load
// (each request a claim of one task by one of the systems' keys, FOR UPDATE SKIP LOCKED). An
// organization of its own, seeded with the systems and a backlog of tasks to claim.
import { createAccountsService } from '../src/features/accounts/index.js';
import { createFulfilmentService } from '../src/features/fulfilment/index.js';
import { createGrievanceService } from '../src/features/grievances/index.js';
import { createReceiptService } from '../src/features/receipts/index.js';
import { systemClock } from '../src/platform/clock.js';
import { createSigningKeyring, deriveKey } from '../src/platform/crypto/signing-keys.js';
import type { TenantContext } from '../src/platform/auth/access.js';
import type { Database } from '../src/platform/db/types.js';
import { BENCH_SECRET_KEY } from './secret.js';

export const FANOUT_SYSTEMS = 20;

export interface FulfilmentOrg {
  slug: string;
  /** A `grievances` key: files the requests. */
  key: string;
  /** One system key per system: claims that system's tasks. */
  systemKeys: string[];
}

/** The services wired as app.ts wires them (the baseline server uses the same). */
export function fulfilmentServices(db: Database) {
  const deps = { db, clock: systemClock, publicUrl: new URL('http://localhost:3000') };
  const receipts = createReceiptService({ ...deps, keyring: createSigningKeyring(BENCH_SECRET_KEY) }).signer;
  const fulfilment = createFulfilmentService({
    db,
    clock: systemClock,
    tickets: () => grievances,
    signer: () => receipts,
    sealingKey: deriveKey(BENCH_SECRET_KEY),
    partMaxBytes: 25 * 1024 * 1024,
  });
  const grievances = createGrievanceService({ ...deps, onFiled: (tx, ctx, ticket, at) => fulfilment.startForTicket(tx, ctx, ticket, at) });
  return { fulfilment, grievances };
}

/** The organization, its FANOUT_SYSTEMS systems and their keys, and `backlog` access requests (backlog × systems tasks to claim). */
export async function seedFulfilmentOrg(db: Database, backlog: number): Promise<FulfilmentOrg> {
  const accounts = createAccountsService({ db, clock: systemClock });
  const slug = 'bench-fulfilment';
  const org = await accounts.createOrganization({ slug, name: 'Bench organization with 20 systems' });
  const key = await accounts.createApiKey(slug, { scopes: ['grievances'], name: 'bench' });
  const ctx: TenantContext = { orgId: org.id, slug, orgName: org.name, actor: { type: 'api_key', id: key.id, scopes: ['admin'] }, requestId: 'bench-seed' };
  const { fulfilment, grievances } = fulfilmentServices(db);
  const category = await fulfilment.createCategory(ctx, { key: 'contact', name: 'Contact details', purposes: ['Account'] });
  const systemKeys: string[] = [];
  for (let s = 0; s < FANOUT_SYSTEMS; s++) {
    const system = await fulfilment.createSystem(ctx, { name: `System ${s}`, owner: 'Bench', category_ids: [category.id], can_access: true, can_erase: true, can_correct: true });
    systemKeys.push((await fulfilment.createSystemKey(ctx, system.id, {})).key);
  }
  for (let i = 0; i < backlog; i++) {
    await grievances.create(ctx, { client_user_id: `user-${i}`, subject: 'Copy of my data', description: 'Please send me a copy of my data.', category: 'data_access' });
  }
  return { slug, key: key.key, systemKeys };
}

interface Built {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The two write endpoints (bench/run.ts's Endpoint shape). */
export function fulfilmentEndpoints(org: FulfilmentOrg): { name: string; kind: 'write'; build(random: () => number, i: number): Built }[] {
  return [
    {
      name: `POST /grievance (fan-out to ${FANOUT_SYSTEMS} systems)`,
      kind: 'write',
      build: (random, i) => ({
        method: 'POST',
        path: '/grievance',
        headers: { host: `${org.slug}.localhost`, 'x-api-key': org.key, 'content-type': 'application/json' },
        body: JSON.stringify({ client_user_id: `user-${Math.floor(random() * 5000)}`, subject: `Bench request ${i}`, description: 'Please send me a copy of my data.', category: 'data_access' }),
      }),
    },
    {
      name: 'POST /api/v1/fulfilment/tasks/claim',
      kind: 'write',
      build: (random) => ({
        method: 'POST',
        path: '/api/v1/fulfilment/tasks/claim',
        headers: { host: `${org.slug}.localhost`, 'x-api-key': org.systemKeys[Math.floor(random() * org.systemKeys.length)]!, 'content-type': 'application/json' },
        body: JSON.stringify({ limit: 1, lease_seconds: 600 }),
      }),
    },
  ];
}
