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
