// Concurrent fuzzing (issue 34): the races the route fuzzer cannot see. fast-check draws a batch of 2-8
// operations on ONE record and fires them at once: a new data principal met by consents, tokens,
// contacts, tickets and nominees in parallel; a webhook endpoint tested, patched, rotated, retried,
// delivered by the worker and deleted at once; a nominee changed, verified and deleted at once; an API
// key used while it is revoked. On PostgreSQL the batch really runs side by side (the pool has 4
// connections); on the embedded store it interleaves. Every answer is a success or a 4xx with a JSON
// `error`, never a 5xx; afterwards the store holds: one person per dp_id, no delivery without its
// endpoint, a revoked key refused. A failure prints the seed and the batch: FUZZ_SEED=<seed> replays it.
// `npm run fuzz -- --concurrent --minutes N` runs longer.
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import fc from 'fast-check';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

const MINUTES = Number(process.env.FUZZ_MINUTES ?? 0);
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const TIMEOUT = Math.max(120_000, MINUTES * 60_000 + 120_000);

type Tenant = TestOrg & { key: string };
type Answer = Awaited<ReturnType<TestApp['call']>>;

let t: TestApp;
let a: Tenant;
let point: { id: string; purposes: Array<{ id: string; granted: boolean }> };
let deadUrl: string;
let serial = 0;
const fresh = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${serial++}`;

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  a = await t.tenant(['admin']);
  const asset = await call('POST', '/api/v1/assets', { name: 'Website', kind: 'website' });
  const cp = await call('POST', '/api/v1/collection-points', { asset_id: asset.json().id, name: 'Sign-up', notice: 'Notice', purposes: [{ name: 'Account', required: true }, { name: 'Offers' }] });
  expect(cp.statusCode, cp.body).toBe(201);
  point = { id: cp.json().id, purposes: cp.json().purposes.map((p: { id: string }) => ({ id: p.id, granted: true })) };
  // A dead receiver: a port nothing listens on.
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  deadUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  await new Promise<void>((r) => server.close(() => r()));
});
afterAll(async () => t?.close());

function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, key = a.key): Promise<Answer> {
  return t.call({ method, url, org: a, key, body });
}

/** A success or a 4xx with a JSON error: never a 5xx. */
function expectSound(label: string, res: Answer): void {
  expect(res.statusCode, `${label} -> ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode >= 400) expect(typeof res.json().error, `${label} -> ${res.body.slice(0, 300)}`).toBe('string');
}

async function fireAll(ops: Array<[string, () => Promise<Answer | null>]>): Promise<Map<string, Answer[]>> {
  const answers = await Promise.all(ops.map(([, run]) => run()));
  const byName = new Map<string, Answer[]>();
  answers.forEach((res, i) => {
    const [name] = ops[i]!;
    if (!res) return;
    expectSound(name, res);
    byName.set(name, [...(byName.get(name) ?? []), res]);
  });
  return byName;
}

const batch = <T extends string>(names: readonly T[]) => fc.array(fc.constantFrom(...names), { minLength: 2, maxLength: 8 });

const PERSON_OPS = ['consent', 'withdraw', 'token', 'contact', 'read', 'grievance', 'nominee'] as const;
const ENDPOINT_OPS = ['test', 'delete', 'disable', 'enable', 'rotate', 'retry', 'deliveries', 'event', 'worker'] as const;
const NOMINEE_OPS = ['update', 'delete', 'verify', 'reject', 'read'] as const;
const KEY_OPS = ['revoke', 'use'] as const;

async function property<T>(arb: fc.Arbitrary<T>, run: (v: T) => Promise<void>): Promise<number> {
  let runs = 0;
  const deadline = Date.now() + MINUTES * 60_000;
  do {
    await fc.assert(
      fc.asyncProperty(arb, async (v) => {
        await run(v);
        runs++;
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
    );
  } while (Date.now() < deadline);
  return runs;
}

test('a new data principal met by several requests at once: never a 5xx, one person', async () => {
  const runs = await property(batch(PERSON_OPS), async (names) => {
    const dp = fresh('dp');
    const ops: Record<(typeof PERSON_OPS)[number], () => Promise<Answer>> = {
      consent: () => call('POST', `/consent/${point.id}/consent`, { dp_id: dp, purposes: point.purposes }),
      withdraw: () => call('POST', `/consent/${point.id}/withdraw`, { dp_id: dp }),
      token: () => call('POST', `/api/v1/data-principals/${dp}/tokens`, { ttl_seconds: 120 }),
      contact: () => call('PUT', `/api/v1/data-principals/${dp}`, { email: `${dp}@example.com` }),
      read: () => call('GET', `/api/v1/data-principals/${dp}`),
      grievance: () => call('POST', '/grievance', { client_user_id: dp, subject: 'Copy', description: 'Please send a copy.', category: 'data_access' }),
      nominee: () => call('POST', '/nominee', { user_id: dp, nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse' }),
    };
    await fireAll(names.map((n) => [n, ops[n]]));
    const rows = await t.db.system.query<{ n: number }>('select count(*)::int as n from data_principals where org_id = $1::uuid and dp_id = $2::text', [a.id, dp]);
    expect(rows[0]!.n, names.join(',')).toBeLessThanOrEqual(1);
  });
  console.log(`concurrent fuzz: ${runs} batches on new data principals`);
}, TIMEOUT);

test('a webhook endpoint used, delivered by the worker and deleted at once: never a 5xx, no delivery outlives it', async () => {
  const runs = await property(batch(ENDPOINT_OPS), async (names) => {
    const created = await call('POST', '/api/v1/webhooks', { url: deadUrl, events: ['grievance.created', 'nominee.created'] });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const first = await call('POST', `/api/v1/webhooks/${id}/test`);
    expect(first.statusCode, first.body).toBe(202);
    const deliveryId = first.json().id as string;
    const ops: Record<(typeof ENDPOINT_OPS)[number], () => Promise<Answer | null>> = {
      test: () => call('POST', `/api/v1/webhooks/${id}/test`),
      delete: () => call('DELETE', `/api/v1/webhooks/${id}`),
      disable: () => call('PATCH', `/api/v1/webhooks/${id}`, { enabled: false }),
      enable: () => call('PATCH', `/api/v1/webhooks/${id}`, { enabled: true }),
      rotate: () => call('POST', `/api/v1/webhooks/${id}/rotate-secret`),
      retry: () => call('POST', `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`),
      deliveries: () => call('GET', `/api/v1/webhooks/${id}/deliveries`),
      event: () => call('POST', '/grievance', { client_user_id: fresh('u'), subject: 'Copy', description: 'Please send a copy.', category: 'data_access' }),
      worker: async () => {
        await t.app.webhooks.runOnce();
        return null;
      },
    };
    const answers = await fireAll(names.map((n) => [n, ops[n]]));
    const deleted = (answers.get('delete') ?? []).some((r) => r.statusCode === 204);
    if (!deleted) expect((await call('DELETE', `/api/v1/webhooks/${id}`)).statusCode).toBe(204);
    const left = await t.db.system.query('select 1 from webhook_deliveries where org_id = $1::uuid and endpoint_id = $2::uuid', [a.id, id]);
    expect(left, names.join(',')).toHaveLength(0);
  });
  console.log(`concurrent fuzz: ${runs} batches on webhook endpoints`);
}, TIMEOUT);

test('a nominee changed, verified, rejected and deleted at once: never a 5xx', async () => {
  const runs = await property(batch(NOMINEE_OPS), async (names) => {
    const dp = fresh('dpn');
    const created = await call('POST', '/nominee', { user_id: dp, nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const ops: Record<(typeof NOMINEE_OPS)[number], () => Promise<Answer>> = {
      update: () => call('PUT', `/nominee/${id}`, { nominee_name: `Asha ${fresh('n')}` }),
      delete: () => call('DELETE', `/nominee/${id}`),
      verify: () => call('POST', `/api/v1/nominees/${id}/verify`),
      reject: () => call('POST', `/api/v1/nominees/${id}/reject`),
      read: () => call('GET', `/nominee/user/${dp}`),
    };
    await fireAll(names.map((n) => [n, ops[n]]));
  });
  console.log(`concurrent fuzz: ${runs} batches on nominees`);
}, TIMEOUT);

test('an API key used while it is revoked: never a 5xx; once revoked it is refused', async () => {
  const runs = await property(batch(KEY_OPS), async (names) => {
    const made = await call('POST', '/api/v1/api-keys', { scopes: ['grievances'], name: fresh('k') });
    expect(made.statusCode, made.body).toBe(201);
    const { id, key } = made.json() as { id: string; key: string };
    const ops: Record<(typeof KEY_OPS)[number], () => Promise<Answer>> = {
      revoke: () => call('DELETE', `/api/v1/api-keys/${id}`),
      use: () => call('GET', '/grievance/user/u-1', undefined, key),
    };
    const answers = await fireAll(names.map((n) => [n, ops[n]]));
    if ((answers.get('revoke') ?? []).some((r) => r.statusCode === 200)) {
      expect((await call('GET', '/grievance/user/u-1', undefined, key)).statusCode).toBe(401);
    }
  });
  console.log(`concurrent fuzz: ${runs} batches on API keys`);
}, TIMEOUT);
