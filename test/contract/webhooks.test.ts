// Webhooks (contract §9): endpoints through the API, events written in the transaction of their change,
// deliveries signed with the Standard Webhooks scheme to real HTTP receivers on 127.0.0.1, back-off with
// the injected clock, disabling after 3 days, a dead receiver that blocks nobody, and the address guard.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { withTenant } from '../../src/platform/db/tenant-tx.js';
import { recordEvent } from '../../src/platform/webhooks/events.js';
import { createWebhookWorker, webhookRetryDelayMs } from '../../src/platform/webhooks/worker.js';
import { secretBox } from '../../src/platform/webhooks/secrets.js';
import { createMetrics } from '../../src/platform/metrics.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t?.close();
});

async function receiver(answer: number | 'hang' = 200): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

const call = (a: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, key = a.key) => t.call({ method, url, org: a, key, body });

async function endpoint(a: Tenant, url: string, events: string[] = ['grievance.created']) {
  const res = await call(a, 'POST', '/api/v1/webhooks', { url, events, description: 'test receiver' });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string; secret: string }>();
}

async function ticket(a: Tenant) {
  const res = await call(a, 'POST', '/grievance', { client_user_id: 'user-1', subject: 'Copy of my data', description: 'Please send a copy.', category: 'data_access' });
  expect(res.statusCode).toBe(201);
  return res.json<{ ticket_id: string; id: string }>();
}

async function deliveries(a: Tenant, id: string) {
  const res = await call(a, 'GET', `/api/v1/webhooks/${id}/deliveries`);
  expect(res.statusCode).toBe(200);
  return res.json<{ data: Array<Record<string, any>>; count: number }>();
}

/** Runs the worker until nothing is due (each run sends up to each endpoint's in_flight_limit). */
async function drain() {
  for (let i = 0; i < 50; i++) {
    const r = await t.app.webhooks.runOnce();
    if (r.delivered + r.retrying + r.failed === 0) return;
  }
}

describe('endpoints', () => {
  test('create shows the secret once; list, get, patch, rotate, delete', async () => {
    const a = await t.tenant();
    const created = await call(a, 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/assent', events: ['grievance.created', 'nominee.created'] });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.any(String),
      url: 'https://hooks.example.com/assent',
      description: null,
      events: ['grievance.created', 'nominee.created'],
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      created_at: t.clock.now().toISOString(),
      updated_at: t.clock.now().toISOString(),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    const { secret, ...shown } = body;
    const list = await call(a, 'GET', '/api/v1/webhooks');
    expect(list.json()).toEqual({ data: [shown] });
    expect(list.body).not.toContain(secret);
    expect((await call(a, 'GET', `/api/v1/webhooks/${body.id}`)).json()).toEqual(shown);

    const patched = await call(a, 'PATCH', `/api/v1/webhooks/${body.id}`, { events: ['consent.withdrawn'], description: 'CRM' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ events: ['consent.withdrawn'], description: 'CRM', url: 'https://hooks.example.com/assent' });

    const rotated = await call(a, 'POST', `/api/v1/webhooks/${body.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(secret);

    expect((await call(a, 'DELETE', `/api/v1/webhooks/${body.id}`)).statusCode).toBe(204);
    expect((await call(a, 'GET', `/api/v1/webhooks/${body.id}`)).json()).toEqual({ error: 'Webhook endpoint not found', code: 'not_found' });
    expect((await call(a, 'DELETE', `/api/v1/webhooks/${body.id}`)).statusCode).toBe(404);
    expect((await call(a, 'GET', '/api/v1/webhooks/not-a-uuid')).statusCode).toBe(404);
  });

  test("another organization's endpoint is not found; a narrower key is refused", async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const e = await endpoint(a, 'https://hooks.example.com/a');
    expect((await call(b, 'GET', `/api/v1/webhooks/${e.id}`)).statusCode).toBe(404);
    expect((await call(b, 'PATCH', `/api/v1/webhooks/${e.id}`, { enabled: false })).statusCode).toBe(404);
    expect((await call(b, 'GET', '/api/v1/webhooks')).json()).toEqual({ data: [] });
    const narrow = await t.key(a, ['grievances']);
    const res = await call(a, 'GET', '/api/v1/webhooks', undefined, narrow);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'API key lacks the required scope: admin', code: 'missing_scope' });
  });

  test('bad bodies: 400 naming the field', async () => {
    const a = await t.tenant();
    const unknownEvent = await call(a, 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/x', events: ['grievance.exploded'] });
    expect(unknownEvent.statusCode).toBe(400);
    expect(unknownEvent.json().code).toBe('validation_failed');
    expect(unknownEvent.json().details[0].field).toMatch(/^events/);
    const ftp = await call(a, 'POST', '/api/v1/webhooks', { url: 'ftp://hooks.example.com/x', events: ['grievance.created'] });
    expect(ftp.statusCode).toBe(400);
    expect(ftp.json().details).toEqual([{ field: 'url', message: 'must be an http(s) URL' }]);
    const none = await call(a, 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/x', events: [] });
    expect(none.statusCode).toBe(400);
    const secret = await call(a, 'POST', '/api/v1/webhooks', { url: 'https://hooks.example.com/x', events: ['grievance.created'], secret: 'mine' });
    expect(secret.statusCode).toBe(400);
    expect(secret.json().details[0].field).toBe('secret');
  });
});

describe('address guard', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await buildTestApp();
  });
  afterAll(async () => strict?.close());

  test('private, loopback, link-local and own-host URLs are refused without WEBHOOK_ALLOW_PRIVATE', async () => {
    const a = await strict.tenant();
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/hook',
      'http://192.168.1.10/hook',
      'http://172.20.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:10.0.0.1]/hook',
      'http://0.0.0.0/hook',
      `http://${a.slug}.localhost:3000/grievance`,
    ]) {
      const res = await strict.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url, events: ['grievance.created'] } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().details, url).toEqual([{ field: 'url', message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE=1') }]);
    }
    // A public address is taken (no DNS needed for an address).
    const ok = await strict.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: 'https://93.184.215.14/hook', events: ['grievance.created'] } });
    expect(ok.statusCode).toBe(201);
    // Changing the URL is checked too.
    const patched = await strict.call({ method: 'PATCH', url: `/api/v1/webhooks/${ok.json().id}`, org: a, key: a.key, body: { url: 'http://127.0.0.1/x' } });
    expect(patched.statusCode).toBe(400);
  });

  test('the worker refuses to connect to a forbidden address even if one was stored', async () => {
    const a = await strict.tenant();
    const r = await receiver();
    const e = await strict.call({ method: 'POST', url: '/api/v1/webhooks', org: a, key: a.key, body: { url: 'https://93.184.215.14/hook', events: ['grievance.created'] } });
    // As if the name had pointed elsewhere when it was saved.
    await strict.db.system.query('update webhook_endpoints set url = $1 where id = $2', [r.url, e.json().id]);
    await strict.call({ method: 'POST', url: '/grievance', org: a, key: a.key, body: { client_user_id: 'u', subject: 's', description: 'd', category: 'other' } });
    expect(await strict.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 1, failed: 0 });
    expect(r.started).toBe(0);
    const [d] = (await strict.call({ method: 'GET', url: `/api/v1/webhooks/${e.json().id}/deliveries`, org: a, key: a.key })).json().data;
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_error: 'the endpoint URL points at an address webhooks may not reach' });
  });
});

describe('event data', () => {
  // A creation's event leaves in the change's own batch, its data built before the insert answers (a
  // nominee, a consent) or read in SQL from the row just written (a grievance's due date and person):
  // it must be exactly the row the store holds.
  test('a grievance.created and a nominee.created event carry exactly the row their change stored', async () => {
    const a = await t.tenant();
    await endpoint(a, (await receiver()).url, ['grievance.created', 'nominee.created']);
    await t.db.system.query(`insert into data_principals (org_id, id, dp_id, created_at) values ($1, gen_random_uuid(), 'person-1', now())`, [a.id]);
    const filed = [];
    for (const user of ['person-1', 'nobody-yet']) {
      const res = await call(a, 'POST', '/grievance', { client_user_id: user, subject: 'Copy', description: 'Please send "all" of it.', category: 'data_access', attachment_url: 'https://files.example.com/a.pdf' });
      expect(res.statusCode).toBe(201);
      filed.push(res.json<{ ticket_id: string }>().ticket_id);
    }
    const nominee = await call(a, 'POST', '/nominee', { user_id: 'person-1', nominee_name: 'Asha Rao', nominee_email: 'Asha@Example.com', nominee_mobile: '9876543210', relationship: 'spouse' });
    expect(nominee.statusCode).toBe(201);
    const json = (rows: unknown[]) => JSON.parse(JSON.stringify(rows)) as Record<string, unknown>[];
    const [events, tickets, nominees] = await t.db.tenantTransaction(a.id, (tx) =>
      Promise.all([
        tx.query<{ type: string; data: Record<string, unknown> }>('select type, data from webhook_events order by type, created_at, id'),
        tx.query('select id, ticket_id, client_user_id, user_id, subject, description, category, status, attachment_url, created_at, updated_at, due_at, paused, resolved_at from grievances order by client_user_id desc'),
        tx.query('select id, client_user_id, nominee_name, nominee_email, nominee_mobile, relationship, purpose_of_appointment, status, verified_at, created_at, updated_at from nominees'),
      ]),
    );
    const stored = json(tickets);
    expect(stored.map((r) => r.ticket_id)).toEqual(filed);
    expect(stored[0]!.user_id).toEqual(expect.any(String));
    expect(stored[1]!.user_id).toBeNull();
    expect(events.map((e) => e.type)).toEqual(['grievance.created', 'grievance.created', 'nominee.created']);
    expect(events.slice(0, 2).map((e) => e.data).sort((x, y) => ((x.ticket as { client_user_id: string }).client_user_id < (y.ticket as { client_user_id: string }).client_user_id ? 1 : -1))).toEqual(stored.map((ticket) => ({ ticket })));
    expect(events[2]!.data).toEqual({ nominee: json(nominees)[0] });
    await drain();
  });
});

describe('delivery', () => {
  test('a grievance is delivered once, signed with the Standard Webhooks scheme, to subscribed endpoints only', async () => {
    t.clock.set(new Date()); // the library checks the signature's timestamp against the real time
    const a = await t.tenant();
    const r = await receiver();
    const other = await receiver();
    const e = await endpoint(a, r.url, ['grievance.created', 'grievance.status_changed']);
    await endpoint(a, other.url, ['nominee.created']);
    const g = await ticket(a);
    // Nothing leaves inside the request.
    expect(r.started).toBe(0);
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 1, retrying: 0, failed: 0 });
    expect(r.received).toHaveLength(1);
    expect(other.received).toHaveLength(0);
    const [got] = r.received;
    const payload = new Webhook(e.secret).verify(got!.body, got!.headers as Record<string, string>) as Record<string, any>;
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(payload).toEqual({
      id: got!.headers['webhook-id'],
      type: 'grievance.created',
      created_at: t.clock.now().toISOString(),
      organization: { id: a.id, slug: a.slug },
      data: { ticket: expect.objectContaining({ ticket_id: g.ticket_id, status: 'open', client_user_id: 'user-1' }) },
    });
    // A wrong secret does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(24, 1).toString('base64')).verify(got!.body, got!.headers as Record<string, string>)).toThrow();

    const list = await deliveries(a, e.id);
    expect(list.data).toEqual([
      {
        id: expect.any(String),
        endpoint_id: e.id,
        event_id: payload.id,
        event_type: 'grievance.created',
        status: 'delivered',
        attempts: 1,
        next_attempt_at: null,
        last_attempt_at: t.clock.now().toISOString(),
        last_response_status: 200,
        last_error: null,
        delivered_at: t.clock.now().toISOString(),
        created_at: t.clock.now().toISOString(),
      },
    ]);
    // Delivered once: nothing more to send.
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 0, failed: 0 });

  });

  test('a change that rolls back sends nothing', async () => {
    const a = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.created']);
    await expect(
      withTenant(t.db, a.id, async (tx) => {
        await recordEvent(tx, 'grievance.created', { ticket: { ticket_id: 'GRV-ROLLBACK' } }, t.clock.now());
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await drain();
    expect(r.started).toBe(0);
    expect((await deliveries(a, e.id)).count).toBe(0);
    // A refused request (409: already in that status) sends nothing either.
    const g = await ticket(a);
    await drain();
    const before = r.received.length;
    const same = await t.call({ method: 'POST', url: `/api/v1/grievances/${g.ticket_id}/status`, org: a, key: a.key, body: { status: 'open' } });
    expect(same.statusCode).toBe(409);
    await drain();
    expect(r.received.length).toBe(before);
  });

  test('back-off: 30 s, 1 min, 2 min ... then failed after 3 days, the endpoint disabled and its owners emailed', async () => {
    const start = new Date('2026-11-22T09:30:00.000Z');
    t.clock.set(start);
    const a = await t.tenant();
    const owner = await t.app.services.users.createUser({ email: `owner-${a.slug}@example.com`, password: 'a long enough password' });
    await t.app.services.users.addMember(a.id, owner.id, 'owner');
    const r = await receiver(500);
    const e = await endpoint(a, r.url, ['grievance.created']);
    await ticket(a);

    const due = async () => (await deliveries(a, e.id)).data[0]!;
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 1, failed: 0 });
    let d = await due();
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_response_status: 500, last_error: 'answered 500' });
    expect(new Date(d.next_attempt_at).getTime() - start.getTime()).toBe(30_000);
    // Not due yet: nothing is sent.
    t.clock.advance(29_000);
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 0, failed: 0 });
    t.clock.advance(1_000);
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 1, failed: 0 });
    d = await due();
    expect(new Date(d.next_attempt_at).getTime() - t.clock.now().getTime()).toBe(60_000);
    expect([1, 2, 3, 4, 11, 12, 13, 20].map(webhookRetryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 30_720_000, 43_200_000, 43_200_000, 43_200_000]);

    // Follow the schedule to the end: every attempt is at its due time.
    let attempts = 2;
    for (;;) {
      d = await due();
      if (d.status !== 'pending') break;
      t.clock.set(d.next_attempt_at);
      await t.app.webhooks.runOnce();
      attempts++;
      expect(attempts).toBeLessThan(40);
    }
    expect(d).toMatchObject({ status: 'failed', attempts, next_attempt_at: null });
    expect(t.clock.now().getTime() - start.getTime()).toBeLessThanOrEqual(3 * 24 * 3_600_000);
    expect(r.received).toHaveLength(attempts);
    const shown = (await call(a, 'GET', `/api/v1/webhooks/${e.id}`)).json();
    expect(shown).toMatchObject({ enabled: false, disabled_reason: 'Deliveries failed for 3 days', disabled_at: t.clock.now().toISOString() });
    const mail = await t.db.system.query<{ recipient: string; body: string }>(
      "select recipient, body from outbound_messages where org_id = $1 and channel = 'email'",
      [a.id],
    );
    expect(mail).toEqual([{ recipient: owner.email, body: expect.stringContaining(`disabled the webhook endpoint ${r.url}`) }]);

    // A disabled endpoint gets no new deliveries; retry and test answer 409 until it is enabled again.
    await ticket(a);
    expect((await deliveries(a, e.id)).count).toBe(1);
    expect((await call(a, 'POST', `/api/v1/webhooks/${e.id}/test`)).statusCode).toBe(409);
    expect((await call(a, 'POST', `/api/v1/webhooks/${e.id}/deliveries/${d.id}/retry`)).statusCode).toBe(409);
    const enabled = await call(a, 'PATCH', `/api/v1/webhooks/${e.id}`, { enabled: true });
    expect(enabled.json()).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    r.answer = 204;
    const retried = await call(a, 'POST', `/api/v1/webhooks/${e.id}/deliveries/${d.id}/retry`);
    expect(retried.statusCode).toBe(202);
    expect(retried.json()).toMatchObject({ id: d.id, status: 'pending', attempts });
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 1, retrying: 0, failed: 0 });
    expect((await due()).status).toBe('delivered');

    // The delivery log keeps every attempt (issue 30 item 6), not only the last: each failed 500 at its
    // due time, then the retried one delivered (204), numbered on from the earlier ones.
    const log = await call(a, 'GET', `/api/v1/webhooks/${e.id}/deliveries/${d.id}/attempts`);
    expect(log.statusCode).toBe(200);
    const body = log.json<{ delivery: Record<string, unknown>; attempts: Array<Record<string, any>> }>();
    expect(body.delivery).toMatchObject({ id: d.id, status: 'delivered', attempts: attempts + 1, last_response_status: 204 });
    expect(body.attempts).toHaveLength(attempts + 1);
    expect(body.attempts.map((x) => x.attempt)).toEqual(Array.from({ length: attempts + 1 }, (_, i) => i + 1));
    expect(body.attempts.slice(0, -1).every((x) => x.response_status === 500 && x.error === 'answered 500')).toBe(true);
    expect(body.attempts.at(-1)).toMatchObject({ response_status: 204, error: null, attempted_at: t.clock.now().toISOString() });
    expect(body.attempts[0]).toMatchObject({ attempted_at: start.toISOString() });
    expect(body.attempts[1]).toMatchObject({ attempted_at: new Date(start.getTime() + 30_000).toISOString() });
    expect(body.attempts.every((x) => Number.isInteger(x.duration_ms) && x.duration_ms >= 0 && x.duration_ms < 10_000)).toBe(true);
    // Another organization's key, an unknown delivery, a malformed id: 404, nothing shown.
    const b = await t.tenant(['admin']);
    expect((await call(b, 'GET', `/api/v1/webhooks/${e.id}/deliveries/${d.id}/attempts`)).json()).toEqual({ error: 'Webhook endpoint not found', code: 'not_found' });
    expect((await call(a, 'GET', `/api/v1/webhooks/${e.id}/deliveries/00000000-0000-7000-8000-000000000000/attempts`)).json()).toEqual({ error: 'Webhook delivery not found', code: 'not_found' });
    expect((await call(a, 'GET', `/api/v1/webhooks/${e.id}/deliveries/nope/attempts`)).statusCode).toBe(404);
    // Append-only: the application's role may add attempts but neither change nor delete them.
    await expect(withTenant(t.db, a.id, (tx) => tx.query('update webhook_attempts set error = null'))).rejects.toThrow(/permission denied/);
    await expect(withTenant(t.db, a.id, (tx) => tx.query('delete from webhook_attempts'))).rejects.toThrow(/permission denied/);
  });

  test('an attempt with no answer is logged with no status and why', async () => {
    t.clock.set(new Date());
    const a = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.created']);
    await r.close();
    await ticket(a);
    expect(await t.app.webhooks.runOnce()).toEqual({ delivered: 0, retrying: 1, failed: 0 });
    const d = (await deliveries(a, e.id)).data[0]!;
    const body = (await call(a, 'GET', `/api/v1/webhooks/${e.id}/deliveries/${d.id}/attempts`)).json<{ attempts: Array<Record<string, unknown>> }>();
    expect(body.attempts).toEqual([
      { attempt: 1, attempted_at: t.clock.now().toISOString(), duration_ms: expect.any(Number), response_status: null, error: 'request failed: ECONNREFUSED' },
    ]);
  });

  test('a test event goes to that endpoint only', async () => {
    const a = await t.tenant();
    const r = await receiver();
    const other = await receiver();
    const e = await endpoint(a, r.url, ['nominee.deleted']);
    await endpoint(a, other.url, ['nominee.deleted']);
    const res = await call(a, 'POST', `/api/v1/webhooks/${e.id}/test`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ endpoint_id: e.id, event_type: 'webhook.test', status: 'pending', attempts: 0 });
    await drain();
    expect(other.received).toHaveLength(0);
    expect(JSON.parse(r.received[0]!.body)).toMatchObject({ type: 'webhook.test', data: { endpoint_id: e.id } });
    expect((await call(a, 'POST', `/api/v1/webhooks/${e.id}/deliveries/00000000-0000-7000-8000-000000000000/retry`)).json()).toEqual({
      error: 'Webhook delivery not found',
      code: 'not_found',
    });
  });

  test('a dead receiver does not hold up another endpoint: a new endpoint has one attempt in flight', async () => {
    const a = await t.tenant();
    const dead = await receiver('hang');
    const live = await receiver();
    const gone = await endpoint(a, dead.url, ['grievance.created']);
    await endpoint(a, live.url, ['grievance.created']);
    for (let i = 0; i < 3; i++) await ticket(a);
    t.app.webhooks.start();
    try {
      await live.waitFor(3, 10_000);
      // The dead one got its first request and holds it; its other two wait their turn (a new endpoint is
      // sent one at a time until it delivers: webhook-throughput.test.ts has the rest). On a loaded machine
      // its first request may still be on its way when the live one is done: wait for it, then count.
      for (let waited = 0; dead.started === 0 && waited < 5000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 200));
      expect(dead.started).toBe(1);
    } finally {
      await t.app.webhooks.stop();
    }
    const [d] = (await t.db.system.query<{ n: number }>(
      "select count(*)::int as n from webhook_deliveries where org_id = $1 and status = 'pending'",
      [a.id],
    ));
    expect(d!.n).toBe(3);
    // The worker is shared by the tests in this file: the dead receiver goes away with its endpoint.
    expect((await call(a, 'DELETE', `/api/v1/webhooks/${gone.id}`)).statusCode).toBe(204);
  });
});

describe('events from each feature', () => {
  test('grievance and nominee changes each send their event', async () => {
    t.clock.set(new Date());
    const a = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.created', 'grievance.status_changed', 'nominee.created', 'nominee.updated', 'nominee.deleted']);
    const g = await ticket(a);
    expect((await t.call({ method: 'PUT', url: `/grievance/${g.ticket_id}`, org: a, key: a.key, body: { status: 'in_progress' } })).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `/api/v1/grievances/${g.ticket_id}/status`, org: a, key: a.key, body: { status: 'resolved', note: 'Sent' } })).statusCode).toBe(200);
    const n = await t.call({
      method: 'POST',
      url: '/nominee',
      org: a,
      key: a.key,
      body: { user_id: 'user-1', nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse' },
    });
    expect(n.statusCode).toBe(201);
    const id = n.json().id;
    expect((await t.call({ method: 'PUT', url: `/nominee/${id}`, org: a, key: a.key, body: { relationship: 'sibling' } })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/nominee/${id}`, org: a, key: a.key })).statusCode).toBe(200);
    await drain();
    const events = r.received.map((x) => new Webhook(e.secret).verify(x.body, x.headers as Record<string, string>) as Record<string, any>);
    expect(events.map((x) => x.type).sort()).toEqual(
      ['grievance.created', 'grievance.status_changed', 'grievance.status_changed', 'nominee.created', 'nominee.updated', 'nominee.deleted'].sort(),
    );
    const changes = events.filter((x) => x.type === 'grievance.status_changed').map((x) => x.data);
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ status: 'in_progress', previous_status: 'open', note: null }),
        expect.objectContaining({ status: 'resolved', previous_status: 'in_progress', note: 'Sent' }),
      ]),
    );
    expect(events.find((x) => x.type === 'nominee.updated')!.data).toMatchObject({ changed_fields: ['relationship'], nominee: { id, relationship: 'sibling' } });
    expect(events.find((x) => x.type === 'nominee.deleted')!.data).toEqual({ nominee_id: id });
  });

  test("a message on a ticket, from the organization or from the person, sends grievance.message_created; another organization's ticket sends nothing", async () => {
    t.clock.set(new Date());
    const a = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.message_created']);
    const g = await ticket(a);
    const agent = await t.call({ method: 'POST', url: `/grievance/${g.ticket_id}/messages`, org: a, key: a.key, body: { message: 'We are on it' } });
    expect(agent.statusCode).toBe(201);
    const minted = await t.call({ method: 'POST', url: '/api/v1/data-principals/user-1/tokens', org: a, key: a.key, body: {} });
    expect(minted.statusCode).toBe(201);
    const person = await t.call({
      method: 'POST',
      url: `/api/v1/me/grievances/${g.ticket_id}/messages`,
      org: a,
      headers: { authorization: `Bearer ${minted.json().access_token}` },
      body: { message: 'Thank you' },
    });
    expect(person.statusCode).toBe(201);
    const b = await t.tenant();
    expect((await t.call({ method: 'POST', url: `/grievance/${g.ticket_id}/messages`, org: b, key: b.key, body: { message: 'Not yours' } })).statusCode).toBe(404);
    await drain();
    const events = r.received.map((x) => new Webhook(e.secret).verify(x.body, x.headers as Record<string, string>) as Record<string, any>);
    expect(events.map((x) => [x.type, x.data.ticket_id, x.data.message.sender, x.data.message.message]).sort()).toEqual(
      [
        ['grievance.message_created', g.ticket_id, 'agent', 'We are on it'],
        ['grievance.message_created', g.ticket_id, 'user', 'Thank you'],
      ].sort(),
    );
    expect(events.find((x) => x.data.message.sender === 'agent')!.data.message).toEqual(agent.json());
  });

  test('consent links, consents and withdrawals each send their event; the link itself and the phone never', async () => {
    t.clock.set(new Date());
    const a = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['consent_link.created', 'consent_link.completed', 'consent.recorded', 'consent.withdrawn']);
    const asset = await call(a, 'POST', '/api/v1/assets', { name: 'Website', kind: 'website' });
    expect(asset.statusCode).toBe(201);
    const point = await call(a, 'POST', '/api/v1/collection-points', { asset_id: asset.json().id, name: 'Sign-up', notice: 'Notice v1', purposes: [{ name: 'Account', required: true }] });
    expect(point.statusCode).toBe(201);
    const p = point.json();
    const link = await call(a, 'POST', '/api/v1/external/public/consent-link', { asset_id: asset.json().id, collection_point_id: p.id, phone: '+919876543210', dp_id: 'dp-1' });
    expect(link.statusCode).toBe(201);
    const purposes = p.purposes.map((x: { id: string }) => ({ id: x.id, granted: true }));
    expect((await call(a, 'POST', `/consent/${p.id}/consent`, { dp_id: 'dp-1', event_id: link.json().event_id, purposes })).statusCode).toBe(201);
    expect((await call(a, 'POST', `/consent/${p.id}/withdraw`, { dp_id: 'dp-1' })).statusCode).toBe(201);
    await drain();
    const events = r.received.map((x) => new Webhook(e.secret).verify(x.body, x.headers as Record<string, string>) as Record<string, any>);
    expect(events.map((x) => x.type).sort()).toEqual(['consent.recorded', 'consent.withdrawn', 'consent_link.completed', 'consent_link.created']);
    const byType = Object.fromEntries(events.map((x) => [x.type, x.data]));
    expect(byType['consent_link.created']).toMatchObject({ request_id: link.json().request_id, event_id: link.json().event_id, collection_point_id: p.id, dp_id: 'dp-1' });
    const created = r.received.find((x) => x.body.includes('consent_link.created'))!.body;
    expect(created).not.toContain(link.json().consent_link);
    expect(created).not.toContain('9876543210');
    expect(byType['consent_link.completed']).toMatchObject({ request_id: link.json().request_id, consent_action: expect.any(String) });
    expect(byType['consent.recorded'].consent).toMatchObject({ dp_id: 'dp-1', collection_point_id: p.id });
    expect(byType['consent.withdrawn'].consent).toMatchObject({ dp_id: 'dp-1', consent_action: 'revoked' });
  });

  test('the webhook gauges read the deliveries table', async () => {
    const a = await t.tenant();
    const r = await receiver(500);
    const e = await endpoint(a, r.url, ['grievance.created']);
    await ticket(a);
    const metrics = createMetrics({ db: t.db, perOrg: false, poolSizes: {} });
    const gauge = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await metrics.registry.metrics())?.[1]);
    const pending = await gauge('assent_webhook_deliveries_pending');
    expect(pending).toBeGreaterThanOrEqual(1);
    expect(Number.isFinite(await gauge('assent_webhook_deliveries_failed'))).toBe(true);
    expect(await gauge('assent_webhook_delivery_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect((await call(a, 'DELETE', `/api/v1/webhooks/${e.id}`)).statusCode).toBe(204);
    expect(await gauge('assent_webhook_deliveries_pending')).toBe(pending - 1);
    await metrics.close();
  });

  test('two workers on one store send each delivery once', async () => {
    const a = await t.tenant();
    const rs = await Promise.all([1, 2, 3, 4].map(() => receiver()));
    for (const r of rs) await endpoint(a, r.url, ['grievance.created']);
    for (let i = 0; i < 5; i++) await ticket(a);
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    const policy = { allowPrivate: true, ownHosts: ['localhost'] };
    const workers = [1, 2].map(() => createWebhookWorker({ db: t.db, clock: t.clock, secrets: secretBox(null), policy, log: quiet }));
    let sent = [0, 0];
    for (let round = 0; round < 20; round++) {
      const runs = await Promise.all(workers.map((w) => w.runOnce()));
      sent = sent.map((n, i) => n + runs[i]!.delivered);
      if (runs.every((r) => r.delivered + r.retrying + r.failed === 0)) break;
    }
    expect(sent[0]! + sent[1]!).toBe(20);
    for (const r of rs) {
      expect(r.received).toHaveLength(5);
      expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(5);
    }
  });
});

describe('grievance.overdue', () => {
  const DAY = 86_400_000;
  const HOUR = 3_600_000;
  const setStatus = async (a: Tenant, ticketId: string, status: string) => {
    const res = await call(a, 'POST', `/api/v1/grievances/${ticketId}/status`, { status, ...(status === 'on_hold' ? { note: 'waiting for documents' } : {}) });
    expect(res.statusCode, res.body).toBe(200);
  };
  // The clock is weeks ahead of the real time here, so the Standard Webhooks timestamp check would refuse the
  // deliveries: the signature itself is tested above; here the bodies are read as they came.
  const received = (r: Receiver, _secret: string) => r.received.map((x) => JSON.parse(x.body) as Record<string, any>);

  test('a ticket that goes late sends one event, however many jobs run at once; finished, paused and not-yet-due tickets send none; a ticket paused in time goes late later, once; one paused late, resumed, or reopened sends no second; an organization with no subscriber claims nothing', async () => {
    const { runOverdueEvents } = await import('../../src/features/grievances/overdue.js');
    const run = () => runOverdueEvents({ db: t.db, clock: t.clock });
    t.clock.set(new Date());
    const a = await t.tenant();
    const quiet = await t.tenant();
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.overdue']);
    const late = await ticket(a);
    const done = await ticket(a);
    const held = await ticket(a);
    const unsubscribed = await ticket(quiet);
    await setStatus(a, done.ticket_id, 'resolved');
    await setStatus(a, held.ticket_id, 'on_hold');
    t.clock.advance(20 * DAY);
    const fresh = await ticket(a);
    expect((await run()).events).toBe(0); // nothing due yet

    t.clock.advance(10 * DAY + HOUR); // late: an hour past due; fresh: due in 20 days
    const runs = await Promise.all([run(), run(), run()]);
    expect(runs.reduce((n, x) => n + x.events, 0)).toBe(1);
    expect((await run()).events).toBe(0); // announced once
    await drain();
    let events = received(r, e.secret);
    expect(events.map((x) => [x.type, x.data.ticket.ticket_id, x.data.ticket.overdue, x.data.ticket.days_left])).toEqual([['grievance.overdue', late.ticket_id, true, -1]]);
    expect(events[0]!.data.ticket).toMatchObject({ id: late.id, status: 'open', client_user_id: 'user-1', due_at: expect.any(String), paused: [] });
    expect(new Date(events[0]!.data.ticket.due_at).getTime()).toBe(t.clock.now().getTime() - HOUR);

    // Put on hold already late, for two hours, then resumed: due_at is pushed by the pause, and the ticket
    // is late again at once: the same lateness, no second event. The ticket put on hold in time resumes
    // on time (its due_at pushed by its month on hold) and goes late later: its one event.
    await setStatus(a, late.ticket_id, 'on_hold');
    t.clock.advance(2 * HOUR);
    expect((await run()).events).toBe(0);
    await setStatus(a, late.ticket_id, 'in_progress');
    await setStatus(a, held.ticket_id, 'in_progress');
    expect((await run()).events).toBe(0);
    t.clock.advance(30 * DAY - 3 * HOUR); // held ran 0 days of 30 so far: 3 hours to go
    expect((await run()).events).toBe(0);
    t.clock.advance(4 * HOUR);
    expect((await run()).events).toBe(1);
    expect((await run()).events).toBe(0);
    // Finished and reopened, still past due: no new event.
    await setStatus(a, late.ticket_id, 'resolved');
    await setStatus(a, late.ticket_id, 'open');
    expect((await run()).events).toBe(0);
    await drain();
    events = received(r, e.secret);
    expect(events.map((x) => [x.data.ticket.ticket_id, x.data.ticket.days_left])).toEqual([
      [late.ticket_id, -1],
      [held.ticket_id, -1],
    ]);
    const heldPause = events[1]!.data.ticket.paused;
    expect(heldPause).toHaveLength(1);
    expect(heldPause[0]).toMatchObject({ reason: 'waiting for documents', to: expect.any(String) });

    const claimed = await t.db.system.query<{ org_id: string; grievance_id: string }>('select org_id, grievance_id from grievance_overdue_events where org_id = any($1::uuid[])', [[a.id, quiet.id]]);
    expect(claimed.map((c) => c.grievance_id).sort()).toEqual([late.id, held.id].sort());
    for (const skipped of [done, fresh, unsubscribed]) expect(claimed.some((c) => c.grievance_id === skipped.id)).toBe(false);
  });

  test('only latenesses of the last 7 days: a new subscriber hears of a ticket late for 2 days, not of one late for 9', async () => {
    const { runOverdueEvents } = await import('../../src/features/grievances/overdue.js');
    t.clock.set(new Date());
    const a = await t.tenant();
    const old = await ticket(a);
    t.clock.advance(7 * DAY);
    const recent = await ticket(a);
    t.clock.advance(32 * DAY); // old: due 9 days ago; recent: due 2 days ago
    const r = await receiver();
    const e = await endpoint(a, r.url, ['grievance.overdue']);
    expect((await runOverdueEvents({ db: t.db, clock: t.clock })).events).toBe(1);
    await drain();
    const events = received(r, e.secret);
    expect(events.map((x) => [x.data.ticket.ticket_id, x.data.ticket.days_left])).toEqual([[recent.ticket_id, -2]]);
    const claimed = await t.db.system.query<{ grievance_id: string }>('select grievance_id from grievance_overdue_events where org_id = $1', [a.id]);
    expect(claimed.map((c) => c.grievance_id)).toEqual([recent.id]);
    expect(claimed.map((c) => c.grievance_id)).not.toContain(old.id);
  });
});
