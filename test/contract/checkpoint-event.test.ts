// The checkpoint.published webhook event (issue 32 item 2): a witness's endpoint subscribes to it like to
// any other event, and recordCheckpointPublished (the sequencer calls it in the transaction that stores a
// checkpoint) delivers the checkpoint to it, signed with the endpoint's secret, over real HTTP.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, type TestApp } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { recordCheckpointPublished, type PublishedCheckpoint } from '../../src/features/transparency/index.js';

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  receiver = await startReceiver(200);
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const checkpoint: PublishedCheckpoint = {
  tree_size: 3,
  root_hash: 'a'.repeat(64),
  timestamp: '2026-11-29T09:00:00.000Z',
  kid: 'kid-1',
  jws: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln',
  tsa_token: null,
};

test('an endpoint subscribes to checkpoint.published; the checkpoint is delivered, signed, to it alone', async () => {
  t.clock.set(new Date()); // the library checks the signature's timestamp against the real time
  const a = await t.tenant();
  const created = await t.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: receiver.url, events: ['checkpoint.published'], description: 'witness' } });
  expect(created.statusCode, created.body).toBe(201);
  const { id, secret } = created.json<{ id: string; secret: string }>();
  // Another endpoint of the same organization that did not subscribe gets nothing.
  const other = await t.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: receiver.url + 'other', events: ['grievance.created'] } });
  expect(other.statusCode).toBe(201);

  await withTenant(t.db, a.id, (tx) => recordCheckpointPublished(tx, checkpoint, t.clock.now()));
  for (let i = 0; i < 5 && receiver.received.length === 0; i++) await t.app.webhooks.runOnce();
  await receiver.waitFor(1);
  expect(receiver.received).toHaveLength(1);
  const got = receiver.received[0]!;
  const event = new Webhook(secret).verify(got.body, {
    'webhook-id': got.headers['webhook-id'] as string,
    'webhook-timestamp': got.headers['webhook-timestamp'] as string,
    'webhook-signature': got.headers['webhook-signature'] as string,
  }) as Record<string, unknown>;
  expect(event).toMatchObject({ type: 'checkpoint.published', organization: { id: a.id, slug: a.slug }, data: { checkpoint } });
  const list = await t.call({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries`, org: a, key: a.key });
  expect(list.json<{ data: { status: string }[] }>().data.map((d) => d.status)).toEqual(['delivered']);
});

test('checkpoint.published is among the event types the API offers', async () => {
  const a = await t.tenant();
  const bad = await t.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: receiver.url, events: ['checkpoint.nope'] } });
  expect(bad.statusCode).toBe(400);
  const doc = (await t.call({ method: 'GET', url: '/openapi.json' })).body;
  expect(doc).toContain('"checkpoint.published"');
});

test('the sequencer publishes each new checkpoint to the subscribed endpoints (app wiring)', async () => {
  t.clock.set(new Date());
  const a = await t.tenant();
  const r = await startReceiver(200);
  try {
    const created = await t.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: r.url, events: ['checkpoint.published'] } });
    expect(created.statusCode).toBe(201);
    const { secret } = created.json<{ secret: string }>();
    const g = await t.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'u1', subject: 'Copy', description: 'Please.', category: 'data_access' } });
    expect(g.statusCode).toBe(201);
    const sealed = await t.app.sequencer.sealNow(a.id);
    expect(sealed.checkpoint).not.toBeNull();
    for (let i = 0; i < 5 && r.received.length === 0; i++) await t.app.webhooks.runOnce();
    await r.waitFor(1);
    const got = r.received[0]!;
    const event = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: { checkpoint: Record<string, unknown> } };
    const latest = (await t.call({ method: 'GET', url: '/.well-known/assent/checkpoints/latest', org: a })).json<Record<string, unknown>>();
    expect(event.type).toBe('checkpoint.published');
    // As published, but for the TSA token, which is asked for after the checkpoint's commit (none here: no TSA_URL).
    expect(event.data.checkpoint).toEqual({ ...latest, tsa_token: null });
  } finally {
    await r.close();
  }
});

test('TSA_URL unreachable: the checkpoint is signed and stored without a token, writes go on', async () => {
  const down = await buildTestApp({ env: { TSA_URL: 'http://127.0.0.1:9/tsa' } });
  try {
    const a = await down.tenant();
    const g = await down.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'u1', subject: 'Copy', description: 'Please.', category: 'data_access' } });
    expect(g.statusCode).toBe(201);
    const sealed = await down.app.sequencer.sealNow(a.id);
    expect(sealed.checkpoint).toMatchObject({ tree_size: expect.any(Number), tsa_token: null });
    const latest = await down.call({ method: 'GET', url: '/.well-known/assent/checkpoints/latest', org: a });
    expect(latest.statusCode).toBe(200);
    expect(latest.json()).toMatchObject({ tree_size: sealed.checkpoint!.tree_size, tsa_token: null });
  } finally {
    await down.close();
  }
});
