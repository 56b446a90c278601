// Rights fulfilment (issue 33): the data map and its s.11 summary, one task per system for each access,
// correction or erasure request, the lease API (claim, heartbeat, complete, fail; an ended lease goes back
// to the queue), manual tasks, retry, the ticket following its tasks, and every transition recorded and
// audited. Two test systems over real HTTP: one takes its tasks by signed webhook, one by the lease API
// with @assent/client, on both stores.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { compactVerify, createLocalJWKSet } from 'jose';
import { createAssentClient, unwrap } from '../../clients/typescript/src/index.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { startReceiver } from '../support/receiver.js';
import { archiveFiles, jsonLines } from '../support/archive.js';
import { verifyExport } from '../../src/features/export/index.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t?.close());

const call = (a: Tenant, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, key = a.key) => t.call({ method, url, org: a, key, body });

async function ok<T = any>(pending: ReturnType<typeof call>, status = 200): Promise<T> {
  const res = await pending;
  expect(res.statusCode, res.body).toBe(status);
  return res.json<T>();
}

/** An organization with two categories (one with a retention hold) and three systems: lease, webhook, manual. */
async function dataMap(a: Tenant) {
  const contact = await ok(call(a, 'POST', '/api/v1/data-categories', { key: 'contact', name: 'Contact details', purposes: ['Account', 'Support'] }), 201);
  const logs = await ok(
    call(a, 'POST', '/api/v1/data-categories', { key: 'traffic_logs', name: 'Traffic logs', purposes: ['Security'], retention_days: 365, retention_basis: 'DPDP Rule 8(3)' }),
    201,
  );
  const crm = await ok(call(a, 'POST', '/api/v1/systems', { name: 'CRM', owner: 'Sales ops', category_ids: [contact.id], processors: ['MailCo'], can_access: true, can_erase: true, can_correct: true }), 201);
  const billing = await ok(call(a, 'POST', '/api/v1/systems', { name: 'Billing', owner: 'Finance', category_ids: [contact.id, logs.id], processors: ['PayCo', 'MailCo'], can_access: true, can_erase: true }), 201);
  const archive = await ok(call(a, 'POST', '/api/v1/systems', { name: 'Paper archive', owner: 'Legal', category_ids: [contact.id] }), 201);
  // A system that holds nothing gets no task.
  await ok(call(a, 'POST', '/api/v1/systems', { name: 'Empty', owner: 'Nobody' }), 201);
  return { contact, logs, crm, billing, archive };
}

const fileRequest = (a: Tenant, category = 'data_access', user = 'dp-42') =>
  ok(call(a, 'POST', '/grievance', { client_user_id: user, subject: 'My data', description: 'Please act on my request', category }), 201);

describe('data map', () => {
  test('categories and systems: create, list, get, patch; the s.11 summary is generated from them', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    expect(m.logs).toEqual({
      id: expect.any(String),
      key: 'traffic_logs',
      name: 'Traffic logs',
      description: null,
      purposes: ['Security'],
      retention_days: 365,
      retention_basis: 'DPDP Rule 8(3)',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(m.crm).toMatchObject({ name: 'CRM', owner: 'Sales ops', category_ids: [m.contact.id], processors: ['MailCo'], can_access: true, can_correct: true, can_erase: true, status: 'active' });
    const systems = await ok(call(a, 'GET', '/api/v1/systems'));
    expect(systems.data.map((s: { name: string }) => s.name)).toEqual(['Billing', 'CRM', 'Empty', 'Paper archive']);
    expect(systems.count).toBe(4);
    expect((await ok(call(a, 'GET', '/api/v1/data-categories'))).data.map((c: { key: string }) => c.key)).toEqual(['contact', 'traffic_logs']);
    expect(await ok(call(a, 'GET', `/api/v1/systems/${m.crm.id}`))).toEqual(m.crm);
    const patched = await ok(call(a, 'PATCH', `/api/v1/systems/${m.crm.id}`, { processors: ['MailCo', 'AdCo'] }));
    expect(patched.processors).toEqual(['MailCo', 'AdCo']);
    const summary = await ok(call(a, 'GET', '/api/v1/data-map/summary'));
    expect(summary).toEqual({
      organization: { slug: a.slug, name: expect.any(String) },
      categories: [
        { key: 'contact', name: 'Contact details', description: null, purposes: ['Account', 'Support'], systems: ['Billing', 'CRM', 'Paper archive'], shared_with: ['AdCo', 'MailCo', 'PayCo'], retention: null },
        { key: 'traffic_logs', name: 'Traffic logs', description: null, purposes: ['Security'], systems: ['Billing'], shared_with: ['MailCo', 'PayCo'], retention: { days: 365, basis: 'DPDP Rule 8(3)' } },
      ],
      shared_with: ['AdCo', 'MailCo', 'PayCo'],
      generated_at: expect.any(String),
    });
    // The person sees the same summary with their own token.
    const minted = await ok(call(a, 'POST', '/api/v1/data-principals/dp-42/tokens', {}), 201);
    const mine = await t.call({ method: 'GET', url: '/api/v1/me/data-summary', org: a, headers: { authorization: `Bearer ${minted.access_token}` } });
    expect(mine.statusCode).toBe(200);
    expect(mine.json().categories).toEqual(summary.categories);
  });

  test('bad input is a 400 naming the field; duplicates 409; a held category cannot be removed; unknown ids 404', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const dup = await call(a, 'POST', '/api/v1/data-categories', { key: 'contact', name: 'Again' });
    expect([dup.statusCode, dup.json().code]).toEqual([409, 'conflict']);
    const badKey = await call(a, 'POST', '/api/v1/data-categories', { key: 'Bad Key', name: 'x' });
    expect(badKey.statusCode).toBe(400);
    expect(badKey.json().details).toContainEqual({ field: 'key', message: expect.stringContaining('a-z') });
    const halfHold = await call(a, 'POST', '/api/v1/data-categories', { key: 'half', name: 'x', retention_days: 30 });
    expect([halfHold.statusCode, halfHold.json().details]).toEqual([400, [{ field: 'retention_basis', message: 'is required with the other retention field' }]]);
    const other = await t.tenant();
    const otherCategory = await ok(call(other, 'POST', '/api/v1/data-categories', { key: 'theirs', name: 'Theirs' }), 201);
    const foreign = await call(a, 'POST', '/api/v1/systems', { name: 'X', owner: 'Y', category_ids: [otherCategory.id] });
    expect([foreign.statusCode, foreign.json().code, foreign.json().details[0].field]).toEqual([400, 'validation_failed', 'category_ids']);
    const sameName = await call(a, 'POST', '/api/v1/systems', { name: 'CRM', owner: 'Y' });
    expect(sameName.statusCode).toBe(409);
    const held = await call(a, 'DELETE', `/api/v1/data-categories/${m.contact.id}`);
    expect([held.statusCode, held.json().code]).toEqual([409, 'conflict']);
    const unheld = await ok(call(a, 'POST', '/api/v1/data-categories', { key: 'spare', name: 'Spare' }), 201);
    expect(await ok(call(a, 'DELETE', `/api/v1/data-categories/${unheld.id}`))).toEqual({ message: 'Data category deleted' });
    for (const url of [`/api/v1/systems/${m.crm.id}`, `/api/v1/data-categories/${m.contact.id}`]) {
      const res = await call(other, 'GET', url);
      expect(res.statusCode).toBe(404);
    }
    expect((await call(a, 'GET', '/api/v1/systems/not-a-uuid')).statusCode).toBe(404);
    const empty = await call(a, 'PATCH', `/api/v1/systems/${m.crm.id}`, {});
    expect(empty.statusCode).toBe(400);
  });
});

describe('tasks', () => {
  test('filing an access request creates one task per system holding data; manual where the system cannot answer; webhook announced', async () => {
    t.clock.set(new Date()); // the library checks the signature's timestamp against the real time
    const a = await t.tenant();
    const receiver = await startReceiver(200);
    try {
      const hook = await ok(call(a, 'POST', '/api/v1/webhooks', { url: receiver.url, events: ['fulfilment.task_created'] }), 201);
      const m = await dataMap(a);
      const ticket = await fileRequest(a);
      expect(ticket.status).toBe('open');
      const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
      expect(view.status).toBe('waiting');
      expect(view.tasks.map((x: any) => [x.system_name, x.kind, x.mode, x.status, x.dp_id])).toEqual([
        ['Billing', 'access', 'automatic', 'queued', 'dp-42'],
        ['CRM', 'access', 'automatic', 'queued', 'dp-42'],
        ['Paper archive', 'access', 'manual', 'queued', 'dp-42'],
      ]);
      expect(view.tasks[0].category_keys).toEqual(['contact', 'traffic_logs']);
      expect(view.tasks[2].blocked_by).toBe('Waits for a member to do it in Paper archive and report it done.');
      expect(view.transitions.map((x: any) => x.action)).toEqual(['created', 'created', 'created']);
      // The webhook system receives each task, signed (Standard Webhooks).
      for (let i = 0; i < 20 && receiver.received.length < 3; i++) await t.app.webhooks.runOnce();
      expect(receiver.received).toHaveLength(3);
      const wh = new Webhook(hook.secret);
      const events = receiver.received.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as any);
      expect(events.every((e) => e.type === 'fulfilment.task_created')).toBe(true);
      expect(events.map((e) => e.data.task.system_id).sort()).toEqual([m.billing.id, m.crm.id, m.archive.id].sort());
      // A complaint creates no task.
      const complaint = await fileRequest(a, 'complaint');
      expect((await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${complaint.ticket_id}`))).status).toBe('none');
      // Erasure: the webhook system completes its task with its system key, no lease needed.
      const key = await ok(call(a, 'POST', `/api/v1/systems/${m.crm.id}/keys`, {}), 201);
      expect(key).toMatchObject({ scopes: ['fulfilment'], system_id: m.crm.id, key: expect.stringMatching(/^ask_live_/) });
      const erasure = await fileRequest(a, 'erasure');
      const crmTask = (await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${erasure.ticket_id}`))).tasks.find((x: any) => x.system_id === m.crm.id);
      const done = await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${crmTask.id}/complete`, { result: { erased_records: 3 } }, key.key));
      expect(done).toMatchObject({ status: 'done', result: { erased_records: 3 }, completed_at: expect.any(String), blocked_by: null });
    } finally {
      await receiver.close();
    }
  });

  test('the lease API over real HTTP with @assent/client: claim, heartbeat, complete; the ticket follows its tasks to resolved', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const ticket = await fileRequest(a);
    const keyFor = async (id: string) => (await ok(call(a, 'POST', `/api/v1/systems/${id}/keys`, { name: 'worker' }), 201)).key as string;
    const billing = createAssentClient({ baseUrl, apiKey: await keyFor(m.billing.id), retries: 0 });
    const crm = createAssentClient({ baseUrl, apiKey: await keyFor(m.crm.id), retries: 0 });

    const claimed = await unwrap(billing.POST('/api/v1/fulfilment/tasks/claim', { body: { limit: 5, lease_seconds: 60 } }));
    expect(claimed.data).toHaveLength(1);
    const task = claimed.data[0]!;
    expect(task).toMatchObject({ system_id: m.billing.id, status: 'leased', attempts: 1, lease_id: expect.stringMatching(/^lse_/), ticket_id: ticket.ticket_id });
    // Nothing more for Billing; a second claim gets nothing while the lease runs.
    expect((await unwrap(billing.POST('/api/v1/fulfilment/tasks/claim', { body: {} }))).data).toEqual([]);
    // The ticket moved to in_progress with the first claim.
    expect((await ok(call(a, 'GET', `/grievance/user/dp-42`)))[0].status).toBe('in_progress');
    // A system key sees its own tasks only: Billing's task is not CRM's to see or complete.
    const foreign = await crm.GET('/api/v1/fulfilment/tasks/{id}', { params: { path: { id: task.id } } });
    expect(foreign.response.status).toBe(404);
    expect((await unwrap(crm.GET('/api/v1/fulfilment/tasks', { params: { query: {} } }))).data.every((x) => x.system_id === m.crm.id)).toBe(true);
    const beat = await unwrap(billing.POST('/api/v1/fulfilment/tasks/{id}/heartbeat', { params: { path: { id: task.id } }, body: { lease_id: task.lease_id, lease_seconds: 120 } }));
    expect(new Date(beat.lease_expires_at!).getTime()).toBe(t.clock.now().getTime() + 120_000);
    // Completing without the lease, or with a wrong one: 409.
    const noLease = await billing.POST('/api/v1/fulfilment/tasks/{id}/complete', { params: { path: { id: task.id } }, body: {} });
    expect(noLease.response.status).toBe(409);
    const wrongLease = await billing.POST('/api/v1/fulfilment/tasks/{id}/complete', { params: { path: { id: task.id } }, body: { lease_id: 'lse_nope' } });
    expect([wrongLease.response.status, (wrongLease.error as any).code]).toEqual([409, 'conflict']);
    await unwrap(billing.POST('/api/v1/fulfilment/tasks/{id}/complete', { params: { path: { id: task.id } }, body: { lease_id: task.lease_id, result: { rows: 12 } } }));
    const crmTask = (await unwrap(crm.POST('/api/v1/fulfilment/tasks/claim', { body: {} }))).data[0]!;
    await unwrap(crm.POST('/api/v1/fulfilment/tasks/{id}/complete', { params: { path: { id: crmTask.id } }, body: { lease_id: crmTask.lease_id } }));
    let view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(view.status).toBe('waiting');
    // The manual task: a system key cannot report it; a member (admin key) does.
    const manual = view.tasks.find((x: any) => x.mode === 'manual');
    const byKey = await crm.POST('/api/v1/fulfilment/tasks/{id}/complete', { params: { path: { id: manual.id } }, body: {} });
    expect(byKey.response.status).toBe(404);
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${manual.id}/complete`, { result: { note_id: 'box-7' } }));
    view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(view.status).toBe('done');
    const history = await ok(call(a, 'GET', `/grievance/${ticket.ticket_id}/history`));
    expect(history.map((h: any) => h.status)).toEqual(['open', 'in_progress', 'resolved']);
    expect(view.transitions.map((x: any) => x.action)).toEqual(['created', 'created', 'created', 'claimed', 'heartbeat', 'completed', 'claimed', 'completed', 'completed']);
    // Every transition is audited.
    const audit = await ok(call(a, 'GET', '/api/v1/audit-log?limit=200'));
    const actions = audit.data.map((e: any) => e.action);
    for (const action of ['fulfilment.tasks_created', 'fulfilment.tasks_claimed', 'fulfilment.task_heartbeat', 'fulfilment.task_completed']) expect(actions).toContain(action);
    expect(actions.filter((x: string) => x === 'fulfilment.task_completed')).toHaveLength(3);
  });

  test('a worker that dies mid-lease: its task goes back to the queue when the lease ends, and is taken again', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const ticket = await fileRequest(a, 'erasure');
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    const first = await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', { lease_seconds: 30 }, key));
    const task = first.data[0];
    // The worker crashes: no heartbeat. Before the lease ends nothing is claimable.
    t.clock.advance(29_000);
    expect((await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data).toEqual([]);
    t.clock.advance(1_000);
    const shown = await ok(call(a, 'GET', `/api/v1/fulfilment/tasks/${task.id}`, undefined, key));
    expect([shown.status, shown.lease_expires_at]).toEqual(['queued', null]);
    const again = await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key));
    expect(again.data.map((x: any) => [x.id, x.attempts])).toEqual([[task.id, 2]]);
    expect(again.data[0].lease_id).not.toBe(task.lease_id);
    // The dead worker comes back: its lease is no longer its own.
    const late = await call(a, 'POST', `/api/v1/fulfilment/tasks/${task.id}/complete`, { lease_id: task.lease_id }, key);
    expect([late.statusCode, late.json().code]).toEqual([409, 'conflict']);
    const beat = await call(a, 'POST', `/api/v1/fulfilment/tasks/${task.id}/heartbeat`, { lease_id: task.lease_id }, key);
    expect(beat.statusCode).toBe(409);
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${task.id}/complete`, { lease_id: again.data[0].lease_id }, key));
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(view.transitions.filter((x: any) => x.task_id === task.id).map((x: any) => x.action)).toEqual(['created', 'claimed', 'lease_expired', 'claimed', 'completed']);
  });

  test('fail with a reason, the dashboard retries it; only failed tasks retry; done tasks cannot be reported again', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const ticket = await fileRequest(a, 'rectification');
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.crm.id}/keys`, {}), 201)).key as string;
    const claimed = (await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data[0];
    expect(claimed.kind).toBe('correction');
    const failed = await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/fail`, { lease_id: claimed.lease_id, reason: 'CRM API returned 503' }, key));
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'CRM API returned 503', blocked_by: expect.stringContaining('CRM API returned 503') });
    expect((await ok(call(a, 'GET', `/api/v1/fulfilment/tasks?status=failed`))).data.map((x: any) => x.id)).toEqual([claimed.id]);
    const doneWhileFailed = await call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/complete`, {}, key);
    expect(doneWhileFailed.statusCode).toBe(409);
    // The retry is the organization's, not the system key's.
    const bySystem = await call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/retry`, undefined, key);
    expect(bySystem.statusCode).toBe(403);
    const retried = await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/retry`));
    expect([retried.status, retried.failure_reason]).toEqual(['queued', null]);
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/retry`)).statusCode).toBe(409);
    const again = (await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data[0];
    expect([again.id, again.attempts]).toEqual([claimed.id, 2]);
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${again.id}/complete`, { lease_id: again.lease_id }, key));
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${again.id}/complete`, { lease_id: again.lease_id }, key)).statusCode).toBe(409);
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${again.id}/fail`, { reason: 'x' }, key)).statusCode).toBe(409);
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(view.transitions.filter((x: any) => x.task_id === claimed.id).map((x: any) => [x.action, x.detail])).toEqual([
      ['created', null],
      ['claimed', null],
      ['failed', 'CRM API returned 503'],
      ['retried', null],
      ['claimed', null],
      ['completed', null],
    ]);
  });

  test('claim input: an admin key names the system; a system key cannot claim for another; bad bodies are 400s', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    await fileRequest(a);
    const missing = await call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {});
    expect([missing.statusCode, missing.json().details]).toEqual([400, [{ field: 'system_id', message: 'is required with a key that is not bound to a system' }]]);
    const byAdmin = await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', { system_id: m.crm.id }));
    expect(byAdmin.data).toHaveLength(1);
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    const elsewhere = await call(a, 'POST', '/api/v1/fulfilment/tasks/claim', { system_id: m.crm.id }, key);
    expect(elsewhere.statusCode).toBe(404);
    for (const body of [{ limit: 0 }, { limit: 51 }, { lease_seconds: 5 }, { system_id: 'x' }, { extra: 1 }]) {
      const res = await call(a, 'POST', '/api/v1/fulfilment/tasks/claim', body, key);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
    // A system key is a fulfilment key: it reaches nothing else.
    expect((await call(a, 'GET', '/api/v1/systems', undefined, key)).statusCode).toBe(403);
    expect((await call(a, 'GET', '/grievance/user/dp-42', undefined, key)).statusCode).toBe(403);
    // Another organization's key never reaches these tasks.
    const other = await t.tenant();
    const theirs = await call(other, 'POST', '/api/v1/fulfilment/tasks/claim', { system_id: m.billing.id });
    expect(theirs.statusCode).toBe(404);
  });

  test('accepting a request filed before its systems existed creates its tasks; 409 once it has them', async () => {
    const a = await t.tenant();
    const ticket = await fileRequest(a, 'data_portability');
    const none = await call(a, 'POST', `/api/v1/fulfilment/tickets/${ticket.ticket_id}/start`);
    expect([none.statusCode, none.json().error]).toEqual([409, 'No active system holds data categories: register the systems first']);
    await dataMap(a);
    const started = await ok(call(a, 'POST', `/api/v1/fulfilment/tickets/${ticket.ticket_id}/start`));
    expect(started.tasks).toHaveLength(3);
    expect((await call(a, 'POST', `/api/v1/fulfilment/tickets/${ticket.ticket_id}/start`)).statusCode).toBe(409);
    const complaint = await fileRequest(a, 'complaint');
    expect((await call(a, 'POST', `/api/v1/fulfilment/tickets/${complaint.ticket_id}/start`)).statusCode).toBe(409);
    expect((await call(a, 'POST', '/api/v1/fulfilment/tickets/GRV-NOPE0000/start')).statusCode).toBe(404);
    // Archived systems get no new tasks.
    const systems = (await ok(call(a, 'GET', '/api/v1/systems'))).data;
    for (const s of systems) await ok(call(a, 'PATCH', `/api/v1/systems/${s.id}`, { status: 'archived' }));
    const later = await fileRequest(a, 'erasure');
    expect((await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${later.ticket_id}`))).tasks).toEqual([]);
  });

  test('two workers claiming at once never get the same task', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    for (let i = 0; i < 6; i++) await fileRequest(a, 'data_access', `dp-${i}`);
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    const results = await Promise.all([0, 1, 2].map(() => ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', { limit: 3 }, key))));
    const ids = results.flatMap((r) => r.data.map((x: any) => x.id));
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
  });
});

describe('proof', () => {
  test("the export holds what each system did for each request, and when; it verifies; nothing of another organization's", async () => {
    const a = await t.tenant();
    const other = await t.tenant();
    const m = await dataMap(a);
    await dataMap(other);
    const theirs = await fileRequest(other, 'erasure');
    const ticket = await fileRequest(a, 'erasure');
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    const claimed = (await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data[0];
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/fail`, { lease_id: claimed.lease_id, reason: 'Disk full' }, key));
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${claimed.id}/retry`));

    const email = `owner-${a.slug}@example.com`;
    const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
    await t.app.services.users.addMember(a.id, user.id, 'owner');
    const token = (await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } })).json().access_token;
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/export', headers: { host: a.host, authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'assent-fulfil-export-'));
    try {
      const file = join(dir, 'export.tar.gz');
      writeFileSync(file, res.rawPayload);
      const report = await verifyExport(file);
      expect(report.ok, report.problem ?? undefined).toBe(true);
      const files = await archiveFiles(file);
      const systems = jsonLines(files, 'systems');
      expect(systems.map((s) => s.name).sort()).toEqual(['Billing', 'CRM', 'Empty', 'Paper archive']);
      const tasks = jsonLines(files, 'fulfilment-tasks');
      expect(tasks.map((x) => x.ticket_id)).toEqual([ticket.ticket_id, ticket.ticket_id, ticket.ticket_id]);
      const billing = jsonLines(files, 'fulfilment-transitions')
        .filter((x) => x.system_id === m.billing.id)
        .sort((x, y) => (x.at + x.recorded_at).localeCompare(y.at + y.recorded_at));
      expect(billing.map((x) => [x.ticket_id, x.action, x.status, x.detail])).toEqual([
        [ticket.ticket_id, 'created', 'queued', null],
        [ticket.ticket_id, 'claimed', 'leased', null],
        [ticket.ticket_id, 'failed', 'failed', 'Disk full'],
        [ticket.ticket_id, 'retried', 'queued', null],
      ]);
      expect(billing.every((x) => typeof x.at === 'string' && x.actor_type && x.actor_id)).toBe(true);
      expect(jsonLines(files, 'data-categories').map((c) => c.key)).toEqual(expect.arrayContaining(['contact', 'traffic_logs']));
      const all = files.map((f) => f.content.toString('utf8')).join('\n');
      expect(all).not.toContain(theirs.ticket_id);
      expect(all).not.toContain(other.id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('access package', () => {
  async function download(a: Tenant, token: string, id: string, dir: string) {
    const res = await fetch(`${baseUrl}/api/v1/me/packages/${id}/download`, { headers: { authorization: `Bearer ${token}` } });
    const file = join(dir, `${id}.tar.gz`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return { res, file };
  }

  test('systems attach parts (stored encrypted); once every task is done the package is compiled, signed, and downloaded by the person for 14 days, then erased', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const ticket = await fileRequest(a, 'data_access', 'dp-pkg');
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    const taskOf = (id: string) => view.tasks.find((x: any) => x.system_id === id);
    const billingKey = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    const crmKey = (await ok(call(a, 'POST', `/api/v1/systems/${m.crm.id}/keys`, {}), 201)).key as string;
    const billing = (await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, billingKey))).data[0];

    const marker = 'PLAINTEXT-MARKER-' + 'x'.repeat(20);
    const invoices = await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${billing.id}/parts`, { name: 'invoices.json', data: { invoices: [{ no: 1, note: marker }] }, lease_id: billing.lease_id }, billingKey), 201);
    expect(invoices).toMatchObject({ name: 'invoices.json', content_type: 'application/json', system_name: 'Billing', erased_at: null });
    // A file of several chunks, over real HTTP.
    const file = Buffer.concat([Buffer.from(marker), randomBytes(600 * 1024)]);
    const put = await fetch(`${baseUrl}/api/v1/fulfilment/tasks/${billing.id}/parts/statement.bin?lease_id=${billing.lease_id}`, {
      method: 'PUT',
      headers: { 'x-api-key': billingKey, 'content-type': 'application/octet-stream' },
      body: file,
    });
    expect(put.status).toBe(201);
    const filePart = await put.json();
    // Another organization's key never reaches the task (404, like a task that does not exist).
    const stranger = await t.tenant();
    const foreignPut = await fetch(`${baseUrl}/api/v1/fulfilment/tasks/${billing.id}/parts/x.bin`, { method: 'PUT', headers: { 'x-api-key': stranger.key, 'content-type': 'application/octet-stream' }, body: Buffer.from('x') });
    expect([foreignPut.status, (await foreignPut.json()).code]).toEqual([404, 'not_found']);
    expect([filePart.size, filePart.sha256]).toEqual([file.length, createHash('sha256').update(file).digest('hex')]);
    // Stored encrypted: the marker is nowhere in the store.
    const stored = await t.db.tenantTransaction(a.id, (tx) => tx.query<{ data: Uint8Array }>('select data from fulfilment_part_chunks'));
    expect(stored.length).toBeGreaterThanOrEqual(4);
    expect(stored.some((r) => Buffer.from(r.data).includes(marker))).toBe(false);
    // The rules: a name once per task, only access tasks, the lease, the JSON route for JSON.
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${billing.id}/parts`, { name: 'invoices.json', data: 1, lease_id: billing.lease_id }, billingKey)).statusCode).toBe(409);
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${billing.id}/parts`, { name: 'other.json', data: 1 }, billingKey)).statusCode).toBe(409);
    const badName = await call(a, 'POST', `/api/v1/fulfilment/tasks/${billing.id}/parts`, { name: '../etc/passwd', data: 1, lease_id: billing.lease_id }, billingKey);
    expect([badName.statusCode, badName.json().details[0].field]).toEqual([400, 'name']);
    const asJson = await call(a, 'PUT', `/api/v1/fulfilment/tasks/${billing.id}/parts/x.json?lease_id=${billing.lease_id}`, { a: 1 }, billingKey);
    expect([asJson.statusCode, asJson.json().code]).toEqual([415, 'unsupported_media_type']);
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${billing.id}/complete`, { lease_id: billing.lease_id }, billingKey));
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${taskOf(m.crm.id).id}/parts`, { name: 'contact.json', data: { email: 'p@example.com' } }, crmKey), 201);
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${taskOf(m.crm.id).id}/complete`, { result: { found: true } }, crmKey));
    expect((await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`))).package).toBeNull();
    // The manual task: a member attaches the scanned file and reports it done; the package is compiled.
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${taskOf(m.archive.id).id}/complete`, { result: { boxes_searched: 2, found: false } }));
    const done = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(done.package).toMatchObject({ status: 'available', downloads: 0, ticket_id: ticket.ticket_id });
    expect(done.package.files.map((f: any) => f.path)).toEqual([
      'summary.json',
      `systems/Billing-${m.billing.id.slice(0, 8)}/invoices.json`,
      `systems/Billing-${m.billing.id.slice(0, 8)}/statement.bin`,
      `systems/CRM-${m.crm.id.slice(0, 8)}/contact.json`,
    ]);

    // The person downloads it with their own token, over real HTTP.
    const token = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-pkg/tokens', {}), 201)).access_token as string;
    const otherPerson = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-someone-else/tokens', {}), 201)).access_token as string;
    const listed = await (await fetch(`${baseUrl}/api/v1/me/packages`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(listed).toEqual([done.package]);
    expect(await (await fetch(`${baseUrl}/api/v1/me/packages`, { headers: { authorization: `Bearer ${otherPerson}` } })).json()).toEqual([]);
    const dir = mkdtempSync(join(tmpdir(), 'assent-package-'));
    try {
      const { res, file: got } = await download(a, token, done.package.id, dir);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/gzip');
      const files = await archiveFiles(got);
      expect(new Set(files.map((f) => f.root))).toEqual(new Set([`access-${ticket.ticket_id}`]));
      const byName = new Map(files.map((f) => [f.name, f.content]));
      expect(byName.get(`systems/Billing-${m.billing.id.slice(0, 8)}/statement.bin`)!.equals(file)).toBe(true);
      expect(JSON.parse(byName.get(`systems/Billing-${m.billing.id.slice(0, 8)}/invoices.json`)!.toString())).toEqual({ invoices: [{ no: 1, note: marker }] });
      const summary = JSON.parse(byName.get(`summary.json`)!.toString());
      expect(summary.categories.map((c: any) => c.key)).toEqual(['contact', 'traffic_logs']);
      // The manifest: every file's SHA-256, each system's result, signed with the organization's key.
      const manifestText = byName.get(`manifest.json`)!.toString();
      const manifest = JSON.parse(manifestText);
      for (const f of manifest.files) expect(createHash('sha256').update(byName.get(`${f.path}`)!).digest('hex'), f.path).toBe(f.sha256);
      expect(manifest.systems.find((s: any) => s.id === m.archive.id)).toMatchObject({ mode: 'manual', result: { boxes_searched: 2, found: false } });
      const jwks = (await t.call({ method: 'GET', url: '/.well-known/jwks.json', org: a })).json();
      const verified = await compactVerify(byName.get(`manifest.jws`)!.toString(), createLocalJWKSet(jwks));
      expect(new TextDecoder().decode(verified.payload)).toBe(manifestText);
      expect(verified.protectedHeader.typ).toBe('assent-access-package+jws');
      // Another person, or the organization's key, never reaches it.
      expect((await download(a, otherPerson, done.package.id, dir)).res.status).toBe(404);
      const byKey = await fetch(`${baseUrl}/api/v1/me/packages/${done.package.id}/download`, { headers: { 'x-api-key': a.key } });
      expect(byKey.status).toBe(401);
      const audit = await ok(call(a, 'GET', '/api/v1/audit-log?limit=200'));
      expect(audit.data.find((e: any) => e.action === 'fulfilment.package_downloaded')).toMatchObject({ actor: { type: 'data_principal' }, target: { type: 'access_package', id: done.package.id } });

      // 14 days later: 410, and the job erases the content; the fact (manifest, sizes, sums) stays.
      t.clock.advance(14 * 86_400_000);
      const fresh = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-pkg/tokens', {}), 201)).access_token as string;
      const late = await download(a, fresh, done.package.id, dir);
      expect(late.res.status).toBe(410);
      expect((await t.app.services.fulfilment.eraseExpiredPackages()).packages).toBeGreaterThanOrEqual(1);
      const chunks = await t.db.tenantTransaction(a.id, (tx) => tx.query('select 1 from fulfilment_part_chunks'));
      expect(chunks).toEqual([]);
      const after = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
      expect(after.package).toMatchObject({ status: 'expired', erased_at: expect.any(String), files: done.package.files });
      expect(after.parts.every((p: any) => p.erased_at !== null)).toBe(true);
    } finally {
      t.clock.advance(-14 * 86_400_000);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('erasure and the law', () => {
  test('erasure tasks carry the retention holds of the categories each system holds, and the person is told what is kept, where and until when', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const ticket = await fileRequest(a, 'erasure', 'dp-erase');
    const at = new Date(ticket.created_at).getTime();
    const until = new Date(at + 365 * 86_400_000).toISOString();
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    expect(view.retention_holds).toEqual([{ category_key: 'traffic_logs', category_name: 'Traffic logs', until, basis: 'DPDP Rule 8(3)', systems: ['Billing'] }]);
    const byName = (n: string) => view.tasks.find((x: any) => x.system_name === n);
    expect(byName('Billing').holds).toEqual([{ category_key: 'traffic_logs', category_name: 'Traffic logs', until, basis: 'DPDP Rule 8(3)' }]);
    expect(byName('CRM').holds).toEqual([]);
    // A system key's claim shows the hold: what not to erase yet.
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.billing.id}/keys`, {}), 201)).key as string;
    expect((await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data[0].holds).toHaveLength(1);
    // The person reads it on their ticket.
    const token = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-erase/tokens', {}), 201)).access_token as string;
    const messages = await t.call({ method: 'GET', url: `/api/v1/me/grievances/${ticket.ticket_id}/messages`, org: a, headers: { authorization: `Bearer ${token}` } });
    expect(messages.statusCode).toBe(200);
    expect(messages.json().map((x: any) => [x.sender, x.message])).toContainEqual([
      'system',
      `Your data will be erased, except what the law requires us to keep, which is erased when its period ends: Traffic logs (in Billing) until ${until.slice(0, 10)}: DPDP Rule 8(3).`,
    ]);
    // An access request carries no hold, and says nothing of one.
    const access = await fileRequest(a, 'data_access', 'dp-erase');
    const accessView = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${access.ticket_id}`));
    expect(accessView.retention_holds).toEqual([]);
    expect(accessView.tasks.every((x: any) => x.holds.length === 0)).toBe(true);
  });
});

describe('consent withdrawal', () => {
  test('when the organization turns it on, a withdrawal files an erasure request with tasks for the systems holding data for the withdrawn purposes', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const asset = await ok(call(a, 'POST', '/api/v1/assets', { name: 'App', kind: 'mobile_app' }), 201);
    const point = await ok(call(a, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Sign-up', notice: 'We use your data.', purposes: [{ name: 'Support' }, { name: 'Offers' }] }), 201);
    const give = (dp: string) => ok(call(a, 'POST', `/consent/${point.id}/consent`, { dp_id: dp, purposes: point.purposes.map((p: any) => ({ id: p.id, granted: p.name === 'Support' })) }), 201);
    const erasures = async (dp: string) => (await ok(call(a, 'GET', `/grievance/user/${dp}`))).filter((g: any) => g.category === 'erasure');

    expect(await ok(call(a, 'GET', '/api/v1/fulfilment/settings'))).toEqual({ erase_on_withdrawal: false, nominees_may_act: false });
    await give('dp-off');
    await ok(call(a, 'POST', `/consent/${point.id}/withdraw`, { dp_id: 'dp-off' }), 201);
    expect(await erasures('dp-off')).toEqual([]);

    expect(await ok(call(a, 'PUT', '/api/v1/fulfilment/settings', { erase_on_withdrawal: true }))).toEqual({ erase_on_withdrawal: true, nominees_may_act: false });
    expect((await call(a, 'PUT', '/api/v1/fulfilment/settings', { erase_on_withdrawal: 'yes' })).statusCode).toBe(400);
    await give('dp-on');
    // The person withdraws in the Rights Center's API (the same service as every surface).
    const token = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-on/tokens', {}), 201)).access_token as string;
    const withdrawn = await t.call({ method: 'POST', url: `/api/v1/me/consents/${point.id}/withdraw`, org: a, headers: { authorization: `Bearer ${token}` } });
    expect(withdrawn.statusCode).toBe(201);
    const [ticket] = await erasures('dp-on');
    expect(ticket).toMatchObject({ subject: 'Erasure after consent withdrawal', status: 'open', client_user_id: 'dp-on' });
    expect(ticket.description).toContain('for: Support.');
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    // Every system holds `contact` (purposes Account, Support); Billing's traffic logs (Security) are not in scope, nor their hold.
    expect(view.tasks.map((x: any) => [x.system_name, x.kind, x.category_keys, x.holds])).toEqual([
      ['Billing', 'erasure', ['contact'], []],
      ['CRM', 'erasure', ['contact'], []],
      ['Paper archive', 'erasure', ['contact'], []],
    ]);
    expect(m.billing.category_ids).toHaveLength(2);
    // A purpose no category names starts nothing.
    const other = await ok(call(a, 'POST', '/api/v1/collection-points', { asset_id: asset.id, name: 'Offers only', notice: 'Offers.', purposes: [{ name: 'Offers' }] }), 201);
    await ok(call(a, 'POST', `/consent/${other.id}/consent`, { dp_id: 'dp-offers', purposes: [{ id: other.purposes[0].id, granted: true }] }), 201);
    await ok(call(a, 'POST', `/consent/${other.id}/withdraw`, { dp_id: 'dp-offers' }), 201);
    expect(await erasures('dp-offers')).toEqual([]);
  });
});

describe('scheduled erasure', () => {
  test('the organization schedules an erasure at least 48 hours ahead; the person is told now; no system takes it before then', async () => {
    const a = await t.tenant();
    const m = await dataMap(a);
    const now = t.clock.now().getTime();
    const tooSoon = await call(a, 'POST', '/api/v1/fulfilment/erasures', { dp_id: 'dp-sched', erase_at: new Date(now + 47 * 3_600_000).toISOString(), reason: 'Account closed.' });
    expect([tooSoon.statusCode, tooSoon.json().code, tooSoon.json().details[0].field]).toEqual([400, 'validation_failed', 'erase_at']);
    const noZone = await call(a, 'POST', '/api/v1/fulfilment/erasures', { dp_id: 'dp-sched', erase_at: '2030-01-01', reason: 'Account closed.' });
    expect(noZone.statusCode).toBe(400);
    const eraseAt = new Date(now + 48 * 3_600_000);
    const scheduled = await ok(call(a, 'POST', '/api/v1/fulfilment/erasures', { dp_id: 'dp-sched', erase_at: eraseAt.toISOString(), reason: 'Your account has been closed for a year.' }), 201);
    expect(scheduled.tasks).toHaveLength(3);
    expect(scheduled.tasks.every((x: any) => x.kind === 'erasure' && x.not_before === eraseAt.toISOString() && x.blocked_by.startsWith('Scheduled erasure'))).toBe(true);
    // The person reads the notice on the request, now.
    const token = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-sched/tokens', {}), 201)).access_token as string;
    const messages = await t.call({ method: 'GET', url: `/api/v1/me/grievances/${scheduled.ticket_id}/messages`, org: a, headers: { authorization: `Bearer ${token}` } });
    expect(messages.json().map((x: any) => x.message)).toContainEqual(
      `Your personal data will be erased on ${eraseAt.toISOString().replace('T', ' ').slice(0, 16)} UTC: Your account has been closed for a year. If you want it kept, contact us before then.`,
    );
    // Before then nothing can be claimed or reported; then it can.
    const key = (await ok(call(a, 'POST', `/api/v1/systems/${m.crm.id}/keys`, {}), 201)).key as string;
    expect((await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data).toEqual([]);
    const crmTask = scheduled.tasks.find((x: any) => x.system_id === m.crm.id);
    expect((await call(a, 'POST', `/api/v1/fulfilment/tasks/${crmTask.id}/complete`, {}, key)).statusCode).toBe(409);
    t.clock.advance(48 * 3_600_000);
    try {
      const claimed = (await ok(call(a, 'POST', '/api/v1/fulfilment/tasks/claim', {}, key))).data;
      expect(claimed.map((x: any) => [x.id, x.not_before])).toEqual([[crmTask.id, null]]);
    } finally {
      t.clock.advance(-48 * 3_600_000);
    }
  });
});
