// Grievance clocks (contract §10): the organization's grievance_period_days (1-90, default 30), each
// ticket's due_at, days_left, overdue and paused intervals (on_hold pauses, leaving pushes due_at),
// the overdue and due_before filters, sorting by due_at, and the summary's clock counts. Injected clock.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const DAY = 86_400_000;
type Org = TestOrg & { key: string };

async function file(org: Org, n = 1) {
  const res = await t.call({ method: 'POST', url: '/grievance', org, key: org.key, body: { client_user_id: `u${n}`, subject: 's', description: 'd', category: 'other' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function status(org: Org, ticket: string, to: string, note?: string) {
  const res = await t.call({ method: 'POST', url: `/api/v1/grievances/${ticket}/status`, org, key: org.key, body: { status: to, ...(note ? { note } : {}) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const get = async (org: Org, url: string) => {
  const res = await t.call({ method: 'GET', url, org, key: org.key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('the organization period', () => {
  test('defaults to 30; PATCH sets 1-90; 0, 91 and a string are 400; the organization and the summary show it; the change is audited', async () => {
    const org = await t.tenant();
    expect((await get(org, '/api/v1/organization')).grievance_period_days).toBe(30);
    for (const bad of [0, 91, '10', 1.5]) {
      const res = await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { grievance_period_days: bad } });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
    const res = await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { grievance_period_days: 90 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: org.id, grievance_period_days: 90, role: null });
    expect((await get(org, '/api/v1/grievances/summary')).grievance_period_days).toBe(90);
    const log = await get(org, '/api/v1/audit-log?action=organization.updated');
    expect(log.data[0].details).toEqual({ fields: ['grievance_period_days'], grievance_period_days: 90, previous_grievance_period_days: 30 });
  });

  test('a grievances-only key may not change it (403); an unknown field is 400', async () => {
    const org = await t.tenant(['grievances']);
    expect((await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { grievance_period_days: 10 } })).statusCode).toBe(403);
    const admin = await t.tenant();
    expect((await t.call({ method: 'PATCH', url: '/api/v1/organization', org: admin, key: admin.key, body: { name: 'x' } })).statusCode).toBe(400);
  });
});

describe('a ticket clock', () => {
  test('due_at = created_at + the period at creation; days_left counts down; overdue once past', async () => {
    const org = await t.tenant();
    await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { grievance_period_days: 10 } });
    const created = await file(org);
    expect(created.due_at).toBe(new Date(new Date(created.created_at).getTime() + 10 * DAY).toISOString());
    expect(created).toMatchObject({ days_left: 10, overdue: false, paused: [], resolved_at: null });
    // Existing tickets keep their due date when the period changes.
    await t.call({ method: 'PATCH', url: '/api/v1/organization', org, key: org.key, body: { grievance_period_days: 30 } });
    t.clock.advance(9.5 * DAY);
    expect(await get(org, `/api/v1/grievances/${created.ticket_id}`)).toMatchObject({ due_at: created.due_at, days_left: 1, overdue: false });
    t.clock.advance(0.5 * DAY);
    expect(await get(org, `/api/v1/grievances/${created.ticket_id}`)).toMatchObject({ days_left: 0, overdue: false });
    t.clock.advance(3_600_000);
    expect(await get(org, `/api/v1/grievances/${created.ticket_id}`)).toMatchObject({ days_left: -1, overdue: true });
    // The seed's list shows the same fields, the existing ones unchanged.
    const [listed] = (await t.call({ method: 'GET', url: '/grievance/user/u1', org, key: org.key })).json();
    expect(listed).toMatchObject({ ticket_id: created.ticket_id, status: 'open', subject: 's', days_left: -1, overdue: true });
    // Resolved: no clock, resolved_at stamped; reopened: the clock is back.
    const resolved = await status(org, created.ticket_id, 'resolved');
    expect(resolved).toMatchObject({ days_left: null, overdue: false, resolved_at: t.clock.now().toISOString() });
    const reopened = await status(org, created.ticket_id, 'open');
    expect(reopened).toMatchObject({ overdue: true, resolved_at: null });
  });

  test('on_hold pauses with the note as reason; leaving pushes due_at by the pause', async () => {
    const org = await t.tenant();
    const created = await file(org);
    t.clock.advance(5 * DAY);
    const held = await status(org, created.ticket_id, 'on_hold', 'Waiting for ID proof');
    const heldAt = t.clock.now().toISOString();
    expect(held).toMatchObject({ due_at: created.due_at, days_left: 25, paused: [{ from: heldAt, to: null, reason: 'Waiting for ID proof' }] });
    t.clock.advance(40 * DAY);
    // Still on hold: the clock stood still, not overdue.
    expect(await get(org, `/api/v1/grievances/${created.ticket_id}`)).toMatchObject({ days_left: 25, overdue: false });
    const resumed = await status(org, created.ticket_id, 'in_progress');
    expect(resumed.due_at).toBe(new Date(new Date(created.due_at).getTime() + 40 * DAY).toISOString());
    expect(resumed).toMatchObject({ days_left: 25, overdue: false, paused: [{ from: heldAt, to: t.clock.now().toISOString(), reason: 'Waiting for ID proof' }] });
    // A PUT (no note) pauses too, with a null reason; the seed's PUT answer carries the clock.
    const put = await t.call({ method: 'PUT', url: `/grievance/${created.ticket_id}`, org, key: org.key, body: { status: 'on_hold' } });
    expect(put.json().paused).toHaveLength(2);
    expect(put.json().paused[1]).toMatchObject({ to: null, reason: null });
  });
});

describe('filters, sorting, summary', () => {
  test('overdue=true|false, due_before, sort=due_at; the summary counts overdue, due this week and the median time to resolve', async () => {
    const org = await t.tenant();
    const late = await file(org, 1); // due in 30 days from now-40
    t.clock.advance(25 * DAY);
    const soon = await file(org, 2); // due 30 days after; never late in this test
    const resolved = await file(org, 3);
    t.clock.advance(2 * DAY);
    await status(org, resolved.ticket_id, 'resolved'); // took 2 days
    t.clock.advance(5 * DAY); // late: 32 days old; soon: 7 days old
    const ids = (body: any) => body.data.map((g: any) => g.ticket_id);
    expect(ids(await get(org, '/api/v1/grievances?overdue=true'))).toEqual([late.ticket_id]);
    expect(ids(await get(org, '/api/v1/grievances?overdue=false&sort=created_at&order=asc'))).toEqual([soon.ticket_id, resolved.ticket_id]);
    const before = new Date(new Date(soon.due_at).getTime()).toISOString();
    expect(ids(await get(org, `/api/v1/grievances?due_before=${encodeURIComponent(before)}`))).toEqual([late.ticket_id]);
    expect(ids(await get(org, '/api/v1/grievances?sort=due_at&order=asc'))).toEqual([late.ticket_id, soon.ticket_id, resolved.ticket_id]);
    const bad = await t.call({ method: 'GET', url: '/api/v1/grievances?due_before=2026-01-01', org, key: org.key });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');
    expect((await t.call({ method: 'GET', url: '/api/v1/grievances?overdue=maybe', org, key: org.key })).statusCode).toBe(400);

    const summary = await get(org, '/api/v1/grievances/summary');
    expect(summary).toMatchObject({ total: 3, open: 2, overdue: 1, due_this_week: 0, median_time_to_resolve_seconds: 2 * 86400, grievance_period_days: 30 });
    t.clock.advance(20 * DAY); // soon is now 27 days old: due within the week
    expect(await get(org, '/api/v1/grievances/summary')).toMatchObject({ overdue: 1, due_this_week: 1 });
    const empty = await t.tenant();
    expect(await get(empty, '/api/v1/grievances/summary')).toMatchObject({ overdue: 0, due_this_week: 0, median_time_to_resolve_seconds: null });
  });
});

describe('reminders', () => {
  test('owners and admins get one email a day listing tickets due within 3 days; two runs at once send once; members, late, paused and finished tickets are left out', async () => {
    const { runGrievanceReminders } = await import('../../src/features/grievances/reminders.js');
    const org = await t.tenant();
    const people: Record<string, string> = {};
    for (const role of ['owner', 'admin', 'member'] as const) {
      const email = `${role}-${org.slug}@example.com`;
      const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
      await t.app.services.users.addMember(org.id, user.id, role);
      people[role] = email;
    }
    const soon = await file(org, 1);
    t.clock.advance(DAY);
    const later = await file(org, 2);
    const held = await file(org, 3);
    const done = await file(org, 4);
    await status(org, held.ticket_id, 'on_hold', 'waiting');
    await status(org, done.ticket_id, 'resolved');
    t.clock.advance(27.5 * DAY); // soon: due in 1.5 days; later, held, done: in 2.5 days
    const mails = () => t.db.system.query<{ recipient: string; body: string }>(`select recipient, body from outbound_messages where org_id = $1 and channel = 'email' order by recipient`, [org.id]);

    const runs = await Promise.all([runGrievanceReminders({ db: t.db, clock: t.clock }), runGrievanceReminders({ db: t.db, clock: t.clock })]);
    expect(runs.reduce((n, r) => n + (r.emails > 0 && r.organizations > 0 ? 1 : 0), 0)).toBeGreaterThanOrEqual(1);
    let sent = await mails();
    expect(sent.map((m) => m.recipient)).toEqual([people.admin, people.owner]);
    for (const m of sent) {
      expect(m.body).toContain(soon.ticket_id);
      expect(m.body).toContain(later.ticket_id);
      expect(m.body).not.toContain(held.ticket_id);
      expect(m.body).not.toContain(done.ticket_id);
    }
    // The same day again: nothing more.
    t.clock.advance(3_600_000);
    await runGrievanceReminders({ db: t.db, clock: t.clock });
    expect(await mails()).toHaveLength(2);
    // Two days on: soon is late (no longer "due within 3 days"), later still is due within them.
    t.clock.advance(2 * DAY);
    await runGrievanceReminders({ db: t.db, clock: t.clock });
    sent = await mails();
    expect(sent).toHaveLength(4);
    expect(sent.filter((m) => !m.body.includes(soon.ticket_id))).toHaveLength(2);
  });
});
