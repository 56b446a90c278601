// The data principal's tickets, nominees and the conversation on a ticket (contract §7), through HTTP on
// both stores: filed and read with their token (client_user_id from the token, another person's record a
// 404), nominees appointed and changed by them (status stays the organization's), messages from both
// sides and from the system on each status change, and the notice queued to the person in the outbox.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };
type Response = Awaited<ReturnType<TestApp['call']>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TICKET_NOT_FOUND = { error: 'Grievance ticket not found', code: 'not_found' };
const NOMINEE_NOT_FOUND = { error: 'Nominee not found', code: 'not_found' };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const now = () => t.clock.now().toISOString();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const rightsCenter = (a: TestOrg) => `${t.config.publicUrl.protocol}//${a.slug}.${t.config.publicUrl.host}/rights`;

async function ok(res: Response, status = 201) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

async function mint(a: Tenant, dpId: string): Promise<string> {
  return (await ok(await t.call({ method: 'POST', url: `/api/v1/data-principals/${dpId}/tokens`, org: a, key: a.key, body: {} }))).access_token;
}

function me(a: Tenant, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
  return t.call({ method, url, org: a, headers: bearer(token), body });
}

const org = (a: Tenant, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => t.call({ method, url, org: a, key: a.key, body });

let users = 0;
async function member(a: TestOrg, role: 'owner' | 'admin' | 'member'): Promise<{ id: string; token: string }> {
  const email = `me${++users}-${a.slug}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(a.id, user.id, role);
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } });
  return { id: user.id, token: res.json().access_token };
}

const TICKET = { subject: 'Delete my data', description: 'Please erase everything you hold about me.', category: 'erasure' };
const NOMINEE = { nominee_name: 'Ravi Kumar', nominee_email: 'Ravi@Example.com', nominee_mobile: '9876500000', relationship: 'sibling' };

async function principalId(a: TestOrg, dpId: string): Promise<string> {
  return (await t.db.system.query<{ id: string }>('select id from data_principals where org_id = $1 and dp_id = $2', [a.id, dpId]))[0]!.id;
}

async function auditOf(a: TestOrg, action: string) {
  return (
    await t.db.system.query<{ actor_type: string; actor_id: string; target_id: string; details: unknown }>(
      'select actor_type, actor_id, target_id, details from audit_log where org_id = $1 and action = $2 order by at, id',
      [a.id, action],
    )
  ).map((r) => ({ ...r }));
}

async function outbox(a: TestOrg) {
  return (
    await t.db.system.query<{ channel: string; recipient: string; body: string }>('select channel, recipient, body from outbound_messages where org_id = $1 order by created_at, id', [a.id])
  ).map((r) => ({ ...r }));
}

describe('tickets (GET|POST /api/v1/me/grievances, GET /api/v1/me/grievances/{ticket_id})', () => {
  test('POST files a ticket for the token\'s data principal (201, the whole ticket); the person is the actor of its history and audit entry', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const res = await me(a, token, 'POST', '/api/v1/me/grievances', TICKET);
    expect(res.statusCode).toBe(201);
    const dp = await principalId(a, 'dp-1');
    const ticket = res.json();
    expect(ticket).toEqual({
      id: expect.stringMatching(UUID),
      ticket_id: expect.stringMatching(/^GRV-[A-Z0-9]{8}$/),
      client_user_id: 'dp-1',
      user_id: dp,
      ...TICKET,
      status: 'open',
      attachment_url: null,
      created_at: now(),
      updated_at: now(),
      // The statutory clock (the organization's default period, 30 days).
      due_at: new Date(Date.parse(now()) + 30 * 86_400_000).toISOString(),
      days_left: 30,
      overdue: false,
      paused: [],
      resolved_at: null,
    });
    // The organization sees it as any ticket, filed by the data principal.
    const seen = await ok(await org(a, 'GET', `/api/v1/grievances/${ticket.ticket_id}`), 200);
    expect(seen.history).toEqual([{ status: 'open', previous_status: null, changed_at: now(), actor: { type: 'data_principal', id: dp }, note: null }]);
    expect(await auditOf(a, 'grievance.created')).toEqual([{ actor_type: 'data_principal', actor_id: dp, target_id: ticket.ticket_id, details: { category: 'erasure', status: 'open' } }]);
  });

  test('client_user_id is never taken from the body; bad input 400 naming each field', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const other = await me(a, token, 'POST', '/api/v1/me/grievances', { ...TICKET, client_user_id: 'dp-2' });
    expect(other.statusCode).toBe(400);
    expect(other.json()).toEqual({
      error: 'Invalid request body: client_user_id is not an accepted field',
      code: 'validation_failed',
      details: [{ field: 'client_user_id', message: 'is not an accepted field' }],
    });
    const bad = await me(a, token, 'POST', '/api/v1/me/grievances', { subject: '', description: 'x', category: 'nope', status: 'closed' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details.map((d: { field: string }) => d.field).sort()).toEqual(['category', 'status', 'subject']);
    expect(await ok(await org(a, 'GET', '/api/v1/grievances'), 200)).toMatchObject({ count: 0 });
  });

  test('GET lists their tickets only (those the organization filed for them too), newest first', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const byOrg = await ok(await org(a, 'POST', '/grievance', { ...TICKET, client_user_id: 'dp-1', category: 'data_access' }));
    await ok(await org(a, 'POST', '/grievance', { ...TICKET, client_user_id: 'dp-2' }));
    t.clock.advance(1000);
    const mine = await ok(await me(a, token, 'POST', '/api/v1/me/grievances', TICKET));
    const res = await me(a, token, 'GET', '/api/v1/me/grievances');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([mine, byOrg]);
    expect(await ok(await me(a, await mint(a, 'dp-3'), 'GET', '/api/v1/me/grievances'), 200)).toEqual([]);
  });

  test('GET one: the ticket with its status history, without actors or internal notes; another person\'s ticket or a malformed id 404', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const ticket = await ok(await me(a, token, 'POST', '/api/v1/me/grievances', TICKET));
    const created = now();
    t.clock.advance(1000);
    const changed = await ok(await org(a, 'POST', `/api/v1/grievances/${ticket.ticket_id}/status`, { status: 'in_progress', note: 'internal: ask legal' }), 200);
    const res = await me(a, token, 'GET', `/api/v1/me/grievances/${ticket.ticket_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ...changed,
      history: [
        { status: 'open', previous_status: null, changed_at: created },
        { status: 'in_progress', previous_status: 'open', changed_at: now() },
      ],
    });
    const theirs = await ok(await org(a, 'POST', '/grievance', { ...TICKET, client_user_id: 'dp-2' }));
    for (const id of [theirs.ticket_id, 'GRV-AAAAAAAA', 'grv-x', ticket.id]) {
      const other = await me(a, token, 'GET', `/api/v1/me/grievances/${id}`);
      expect(other.statusCode).toBe(404);
      expect(other.json()).toEqual(TICKET_NOT_FOUND);
    }
  });
});

describe('Idempotency-Key with a data principal\'s token', () => {
  test('a repeat replays their own answer; another person sending the same key and body gets their own ticket', async () => {
    const a = await t.tenant();
    const [one, two] = [await mint(a, 'dp-1'), await mint(a, 'dp-2')];
    const send = (token: string) => t.call({ method: 'POST', url: '/api/v1/me/grievances', org: a, headers: { ...bearer(token), 'idempotency-key': 'same-key' }, body: TICKET });
    const first = await send(one);
    expect(first.statusCode).toBe(201);
    const again = await send(one);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const theirs = await send(two);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json()).toMatchObject({ client_user_id: 'dp-2' });
    expect(theirs.json().ticket_id).not.toBe(first.json().ticket_id);
  });
});

describe('nominees (GET|POST /api/v1/me/nominees, PATCH|DELETE /api/v1/me/nominees/{id})', () => {
  const expectedNominee = (dpId: string, extra: Record<string, unknown> = {}) => ({
    id: expect.stringMatching(UUID),
    client_user_id: dpId,
    nominee_name: 'Ravi Kumar',
    nominee_email: 'ravi@example.com',
    nominee_mobile: '+919876500000',
    relationship: 'sibling',
    purpose_of_appointment: null,
    status: 'pending',
    verified_at: null,
    created_at: now(),
    updated_at: now(),
    ...extra,
  });

  test('POST appoints a nominee for them (201, pending, normalised); user_id and status are refused; GET lists theirs only', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const res = await me(a, token, 'POST', '/api/v1/me/nominees', NOMINEE);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(expectedNominee('dp-1'));
    expect(await auditOf(a, 'nominee.created')).toEqual([{ actor_type: 'data_principal', actor_id: await principalId(a, 'dp-1'), target_id: res.json().id, details: { status: 'pending' } }]);
    for (const field of ['user_id', 'status', 'client_user_id']) {
      const bad = await me(a, token, 'POST', '/api/v1/me/nominees', { ...NOMINEE, [field]: field === 'status' ? 'verified' : 'dp-2' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().details).toEqual([{ field, message: 'is not an accepted field' }]);
    }
    await ok(await org(a, 'POST', '/nominee', { ...NOMINEE, user_id: 'dp-2' }));
    const list = await me(a, token, 'GET', '/api/v1/me/nominees');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([res.json()]);
  });

  test('PATCH changes their nominee; status is the organization\'s; a change of who the nominee is sends a verified one back to pending', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const n = await ok(await me(a, token, 'POST', '/api/v1/me/nominees', NOMINEE));
    const refused = await me(a, token, 'PATCH', `/api/v1/me/nominees/${n.id}`, { status: 'verified' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details).toEqual([{ field: 'status', message: 'is not an accepted field' }]);
    t.clock.advance(1000);
    const verifiedAt = now();
    await ok(await org(a, 'POST', `/api/v1/nominees/${n.id}/verify`), 200);
    t.clock.advance(1000);
    // The purpose is not who the nominee is: still verified.
    const purpose = await me(a, token, 'PATCH', `/api/v1/me/nominees/${n.id}`, { purpose_of_appointment: 'Act for me in hospital' });
    expect(purpose.statusCode).toBe(200);
    expect(purpose.json()).toEqual(expectedNominee('dp-1', { id: n.id, created_at: n.created_at, purpose_of_appointment: 'Act for me in hospital', status: 'verified', verified_at: verifiedAt }));
    t.clock.advance(1000);
    const mobile = await me(a, token, 'PATCH', `/api/v1/me/nominees/${n.id}`, { nominee_mobile: '+919876511111' });
    expect(mobile.statusCode).toBe(200);
    expect(mobile.json()).toEqual(
      expectedNominee('dp-1', { id: n.id, created_at: n.created_at, purpose_of_appointment: 'Act for me in hospital', nominee_mobile: '+919876511111', status: 'pending', verified_at: null }),
    );
    const dp = await principalId(a, 'dp-1');
    expect((await auditOf(a, 'nominee.updated')).map((e) => [e.actor_type, e.actor_id, e.details])).toEqual([
      ['data_principal', dp, { fields: ['purpose_of_appointment'] }],
      ['data_principal', dp, { fields: ['nominee_mobile', 'status'], status: 'pending', previous_status: 'verified' }],
    ]);
  });

  test('another person\'s nominee (or a malformed id) is not found: PATCH and DELETE 404 and change nothing', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const theirs = await ok(await org(a, 'POST', '/nominee', { ...NOMINEE, user_id: 'dp-2' }));
    for (const id of [theirs.id, 'not-a-uuid']) {
      const patch = await me(a, token, 'PATCH', `/api/v1/me/nominees/${id}`, { nominee_name: 'Someone Else' });
      expect(patch.statusCode).toBe(404);
      expect(patch.json()).toEqual(NOMINEE_NOT_FOUND);
      const del = await me(a, token, 'DELETE', `/api/v1/me/nominees/${id}`);
      expect(del.statusCode).toBe(404);
      expect(del.json()).toEqual(NOMINEE_NOT_FOUND);
    }
    expect(await ok(await org(a, 'GET', '/nominee/user/dp-2'), 200)).toEqual([theirs]);
    expect(await auditOf(a, 'nominee.deleted')).toEqual([]);
  });

  test('DELETE removes their nominee for good (200), audited with them as the actor', async () => {
    const a = await t.tenant();
    const token = await mint(a, 'dp-1');
    const n = await ok(await me(a, token, 'POST', '/api/v1/me/nominees', NOMINEE));
    const res = await me(a, token, 'DELETE', `/api/v1/me/nominees/${n.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Nominee deleted' });
    expect(await ok(await me(a, token, 'GET', '/api/v1/me/nominees'), 200)).toEqual([]);
    expect(await auditOf(a, 'nominee.deleted')).toEqual([{ actor_type: 'data_principal', actor_id: await principalId(a, 'dp-1'), target_id: n.id, details: {} }]);
    const again = await me(a, token, 'DELETE', `/api/v1/me/nominees/${n.id}`);
    expect(again.statusCode).toBe(404);
  });
});

describe('the conversation on a ticket', () => {
  async function setup(contact: object | null = { phone: '+919876543210' }) {
    const a = await t.tenant();
    if (contact) await ok(await t.call({ method: 'PUT', url: '/api/v1/data-principals/dp-1', org: a, key: a.key, body: contact }));
    const token = await mint(a, 'dp-1');
    const ticket = await ok(await me(a, token, 'POST', '/api/v1/me/grievances', TICKET));
    return { a, token, ticketId: ticket.ticket_id as string };
  }

  const msg = (sender: string, message: string, extra: Record<string, unknown> = {}) => ({
    id: expect.stringMatching(UUID),
    sender,
    message,
    created_at: now(),
    attachment_url: null,
    ...extra,
  });

  test('an agent message (API key): 201; the person is told by SMS with the Rights Center link and the contact person; both sides read it', async () => {
    const { a, token, ticketId } = await setup();
    await ok(await t.call({ method: 'PUT', url: '/api/v1/organization/dpo', org: a, key: a.key, body: { full_name: 'Meera Iyer', email: 'dpo@example.com' } }));
    t.clock.advance(1000);
    const res = await org(a, 'POST', `/grievance/${ticketId}/messages`, { message: 'We are on it.', attachment_url: 'https://files.example.org/form.pdf' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(msg('agent', 'We are on it.', { attachment_url: 'https://files.example.org/form.pdf' }));
    expect(await outbox(a)).toEqual([
      {
        channel: 'sms',
        recipient: '+919876543210',
        body: `${a.slug} has replied to your request ${ticketId}. Read it and answer at ${rightsCenter(a)} Contact person: Meera Iyer, dpo@example.com`,
      },
    ]);
    for (const read of [org(a, 'GET', `/grievance/${ticketId}/messages`), me(a, token, 'GET', `/api/v1/me/grievances/${ticketId}/messages`)]) {
      const r = await read;
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual([res.json()]);
    }
    expect((await auditOf(a, 'grievance.message_added')).map((e) => [e.actor_type, e.target_id, e.details])).toEqual([
      ['api_key', ticketId, { message_id: res.json().id, sender: 'agent' }],
    ]);
  });

  test('the person writes (sender user, audited as them, nobody is notified); oldest first', async () => {
    const { a, token, ticketId } = await setup();
    const first = await ok(await me(a, token, 'POST', `/api/v1/me/grievances/${ticketId}/messages`, { message: 'Any news?' }));
    expect(first).toEqual(msg('user', 'Any news?'));
    t.clock.advance(1000);
    const reply = await ok(await org(a, 'POST', `/grievance/${ticketId}/messages`, { message: 'Yes: done by Friday.' }));
    const res = await me(a, token, 'GET', `/api/v1/me/grievances/${ticketId}/messages`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([first, reply]);
    expect((await auditOf(a, 'grievance.message_added')).map((e) => [e.actor_type, e.actor_id, e.details])[0]).toEqual([
      'data_principal',
      await principalId(a, 'dp-1'),
      { message_id: first.id, sender: 'user' },
    ]);
    expect((await outbox(a)).length).toBe(1);
  });

  test('each status change adds a system message and tells the person (both status routes); an attachment change alone adds none', async () => {
    const { a, token, ticketId } = await setup({ email: 'asha@example.com' });
    t.clock.advance(1000);
    await ok(await org(a, 'POST', `/api/v1/grievances/${ticketId}/status`, { status: 'in_progress', note: 'internal' }), 200);
    const first = msg('system', 'Status changed from open to in progress');
    t.clock.advance(1000);
    await ok(await org(a, 'PUT', `/grievance/${ticketId}`, { status: 'resolved' }), 200);
    const second = msg('system', 'Status changed from in progress to resolved');
    await ok(await org(a, 'PUT', `/grievance/${ticketId}`, { attachment_url: 'https://files.example.org/x.pdf' }), 200);
    await ok(await org(a, 'PUT', `/grievance/${ticketId}`, { status: 'resolved' }), 200);
    const res = await me(a, token, 'GET', `/api/v1/me/grievances/${ticketId}/messages`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { ...first, created_at: new Date(t.clock.now().getTime() - 1000).toISOString() },
      second,
    ]);
    // No phone on file: by email. No contact person: how to reach the organization, its Rights Center
    // (issue 35: never "Contact person: <organization>").
    const url = rightsCenter(a);
    expect(await outbox(a)).toEqual([
      { channel: 'email', recipient: 'asha@example.com', body: `Your request ${ticketId} to ${a.slug} is now in progress. Read it and answer at ${url} To contact ${a.slug}, use its Rights Center: ${url}` },
      { channel: 'email', recipient: 'asha@example.com', body: `Your request ${ticketId} to ${a.slug} is now resolved. Read it and answer at ${url} To contact ${a.slug}, use its Rights Center: ${url}` },
    ]);
  });

  test('nobody to tell when the person has no contact on file: the message is still kept', async () => {
    const { a, ticketId } = await setup(null);
    await ok(await org(a, 'POST', `/grievance/${ticketId}/messages`, { message: 'Noted.' }));
    expect(await outbox(a)).toEqual([]);
    expect((await ok(await org(a, 'GET', `/grievance/${ticketId}/messages`), 200)).length).toBe(1);
  });

  test('members of every role read and answer with their token; a key needs the grievances scope', async () => {
    const { a, ticketId } = await setup();
    for (const role of ['owner', 'admin', 'member'] as const) {
      const { token } = await member(a, role);
      const posted = await t.call({ method: 'POST', url: `/grievance/${ticketId}/messages`, org: a, headers: bearer(token), body: { message: `From ${role}` } });
      expect(posted.statusCode).toBe(201);
      expect(posted.json()).toEqual(msg('agent', `From ${role}`));
      const read = await t.call({ method: 'GET', url: `/grievance/${ticketId}/messages`, org: a, headers: bearer(token) });
      expect(read.statusCode).toBe(200);
    }
    const nominees = await t.key(a, ['nominees']);
    const refused = await t.call({ method: 'POST', url: `/grievance/${ticketId}/messages`, org: a, key: nominees, body: { message: 'x' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'API key lacks the required scope: grievances', code: 'missing_scope' });
    const g = await t.key(a, ['grievances']);
    expect((await t.call({ method: 'GET', url: `/grievance/${ticketId}/messages`, org: a, key: g })).statusCode).toBe(200);
  });

  test('404 for an unknown ticket (or another organization\'s), and for another person\'s ticket on their side; bad messages 400', async () => {
    const { a, token, ticketId } = await setup();
    const b = await t.tenant();
    for (const id of ['GRV-AAAAAAAA', 'nope']) {
      for (const res of [await org(a, 'GET', `/grievance/${id}/messages`), await org(a, 'POST', `/grievance/${id}/messages`, { message: 'x' })]) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual(TICKET_NOT_FOUND);
      }
    }
    const fromB = await t.call({ method: 'GET', url: `/grievance/${ticketId}/messages`, org: b, key: b.key });
    expect(fromB.statusCode).toBe(404);
    const other = await mint(a, 'dp-2');
    for (const res of [
      await me(a, other, 'GET', `/api/v1/me/grievances/${ticketId}/messages`),
      await me(a, other, 'POST', `/api/v1/me/grievances/${ticketId}/messages`, { message: 'not mine' }),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(TICKET_NOT_FOUND);
    }
    for (const body of [{ message: '' }, { message: 'x'.repeat(5001) }, {}, { message: 'x', sender: 'agent' }]) {
      const res = await me(a, token, 'POST', `/api/v1/me/grievances/${ticketId}/messages`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
    const long = await me(a, token, 'POST', `/api/v1/me/grievances/${ticketId}/messages`, { message: 'x'.repeat(5000) });
    expect(long.statusCode).toBe(201);
    expect((await ok(await org(a, 'GET', `/grievance/${ticketId}/messages`), 200)).map((m: { sender: string }) => m.sender)).toEqual(['user']);
  });
});
