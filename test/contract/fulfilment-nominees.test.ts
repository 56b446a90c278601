// A nominee acting for the person who appointed them (issue 33 item 5): only where the organization allows
// it (off by default), only under a verified appointment, only for that one person; the nominee signs in
// with a code to their own email or mobile (or the organization mints their token), downloads the person's
// access package, files and follows requests for them; every act records the nominee as the actor. On
// both stores.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const call = (a: Tenant, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) => t.call({ method, url, org: a, key: a.key, body });
const as = (a: TestOrg, token: string, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
  t.call({ method, url, org: a, body, headers: { authorization: `Bearer ${token}` } });

async function ok<T = any>(pending: ReturnType<typeof call>, status = 200): Promise<T> {
  const res = await pending;
  expect(res.statusCode, res.body).toBe(status);
  return res.json<T>();
}

const RAVI = { nominee_name: 'Ravi Kumar', nominee_email: 'ravi@example.com', nominee_mobile: '+919812300011', relationship: 'spouse' };

/** A nominee appointed for dpId (pending until the organization verifies them). */
const appoint = (a: Tenant, dpId: string, who = RAVI) => ok(call(a, 'POST', '/nominee', { user_id: dpId, ...who }), 201);
const verifyNominee = (a: Tenant, id: string) => ok(call(a, 'POST', `/api/v1/nominees/${id}/verify`));
const allow = (a: Tenant, on = true) => ok(call(a, 'PUT', '/api/v1/fulfilment/settings', { nominees_may_act: on }));

/** The last code sent to this recipient, read from the outbox. */
async function lastCodeFor(a: TestOrg, recipient: string): Promise<string | null> {
  const rows = await t.db.system.query<{ body: string }>('select body from outbound_messages where org_id = $1 and recipient = $2 order by created_at desc, id desc limit 1', [a.id, recipient]);
  return rows[0] ? /\b(\d{6})\b/.exec(rows[0].body)![1]! : null;
}

/** The nominee signs in: a code to their own email, then the code (and the appointment, when they hold several). */
async function signIn(a: Tenant, email: string, nomineeId?: string) {
  const sent = await t.call({ method: 'POST', url: '/rights/nominee/otp', org: a, body: { email } });
  expect(sent.statusCode, sent.body).toBe(202);
  const code = await lastCodeFor(a, email);
  expect(code).not.toBeNull();
  return t.call({ method: 'POST', url: '/rights/nominee/otp/verify', org: a, body: { email, code, ...(nomineeId ? { nominee_id: nomineeId } : {}) } });
}

/** One system that answers access requests; an access request for dpId, done: its package. */
async function packageFor(a: Tenant, dpId: string): Promise<{ ticketId: string; packageId: string }> {
  const systems = await ok(call(a, 'GET', '/api/v1/systems'));
  if (systems.count === 0) {
    const category = await ok(call(a, 'POST', '/api/v1/data-categories', { key: 'contact', name: 'Contact details', purposes: ['Account'] }), 201);
    await ok(call(a, 'POST', '/api/v1/systems', { name: 'CRM', owner: 'Sales', category_ids: [category.id], can_access: true }), 201);
  }
  const ticket = await ok(call(a, 'POST', '/grievance', { client_user_id: dpId, subject: 'My data', description: 'A copy, please', category: 'data_access' }), 201);
  const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
  await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${view.tasks[0].id}/complete`, { result: { found: true } }));
  const done = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
  return { ticketId: ticket.ticket_id, packageId: done.package.id };
}

const auditOf = async (a: TestOrg, action: string) =>
  t.db.system.query<{ actor_type: string; actor_id: string; target_id: string | null; details: any }>(
    'select actor_type, actor_id, target_id, details from audit_log where org_id = $1 and action = $2 order by at, id',
    [a.id, action],
  );

describe('the organization decides, the appointment must be verified', () => {
  test('off by default: the code sign-in and the minted token are refused with nominee_acting_off', async () => {
    const a = await t.tenant();
    const nominee = await appoint(a, 'dp-asha');
    await verifyNominee(a, nominee.id);
    expect(await ok(call(a, 'GET', '/api/v1/fulfilment/settings'))).toEqual({ erase_on_withdrawal: false, nominees_may_act: false });
    const sent = await t.call({ method: 'POST', url: '/rights/nominee/otp', org: a, body: { email: RAVI.nominee_email } });
    expect([sent.statusCode, sent.json().code]).toEqual([403, 'nominee_acting_off']);
    expect(await lastCodeFor(a, RAVI.nominee_email)).toBeNull();
    const minted = await call(a, 'POST', `/api/v1/nominees/${nominee.id}/tokens`, {});
    expect(minted.statusCode).toBe(403);
    expect(minted.json()).toEqual({ error: 'This organization does not let nominees act for the people who appointed them', code: 'nominee_acting_off' });
    // Turning it on is audited like any settings change; the other setting is kept.
    expect(await allow(a)).toEqual({ erase_on_withdrawal: false, nominees_may_act: true });
    expect((await auditOf(a, 'fulfilment.settings_changed')).map((e) => e.details)).toEqual([{ nominees_may_act: true }]);
    expect((await call(a, 'PUT', '/api/v1/fulfilment/settings', {})).statusCode).toBe(400);
  });

  test('a pending or rejected nominee gets no code (the same 202) and no token (nominee_not_active)', async () => {
    const a = await t.tenant();
    await allow(a);
    const nominee = await appoint(a, 'dp-asha');
    const sent = await t.call({ method: 'POST', url: '/rights/nominee/otp', org: a, body: { email: RAVI.nominee_email } });
    expect(sent.statusCode).toBe(202);
    expect(await lastCodeFor(a, RAVI.nominee_email)).toBeNull();
    const minted = await call(a, 'POST', `/api/v1/nominees/${nominee.id}/tokens`, {});
    expect([minted.statusCode, minted.json().code]).toEqual([403, 'nominee_not_active']);
    await ok(call(a, 'POST', `/api/v1/nominees/${nominee.id}/reject`));
    expect((await call(a, 'POST', `/api/v1/nominees/${nominee.id}/tokens`, {})).json().code).toBe('nominee_not_active');
    // A nominee that does not exist (or is another organization's): 404, like any unknown id.
    expect((await call(a, 'POST', '/api/v1/nominees/0192f4a1-7c3e-7b2a-9d4f-5e6a7b8c9d0e/tokens', {})).statusCode).toBe(404);
    // A wrong code is a wrong code.
    const wrong = await t.call({ method: 'POST', url: '/rights/nominee/otp/verify', org: a, body: { email: RAVI.nominee_email, code: '000000' } });
    expect([wrong.statusCode, wrong.json().code]).toEqual([401, 'incorrect_code']);
  });
});

describe('a verified nominee acts for the person', () => {
  test('signs in with a code to their own email, downloads the package, files and follows a request; every act records the nominee', async () => {
    const a = await t.tenant();
    await allow(a);
    const nominee = await appoint(a, 'dp-asha');
    await verifyNominee(a, nominee.id);
    const asha = await packageFor(a, 'dp-asha');
    const bob = await packageFor(a, 'dp-bob');

    const res = await signIn(a, RAVI.nominee_email);
    expect(res.statusCode, res.body).toBe(200);
    const signedIn = res.json();
    expect(signedIn).toEqual({ access_token: expect.stringMatching(/^dpt_/), token_type: 'Bearer', expires_in: 3600, dp_id: 'dp-asha', nominee_id: nominee.id });
    const token = signedIn.access_token as string;
    expect(await auditOf(a, 'nominee.signed_in')).toEqual([
      { actor_type: 'nominee', actor_id: nominee.id, target_id: expect.any(String), details: { method: 'code', nominee_id: nominee.id, expires_in: 3600 } },
    ]);
    // The code works once.
    const again = await t.call({ method: 'POST', url: '/rights/nominee/otp/verify', org: a, body: { email: RAVI.nominee_email, code: await lastCodeFor(a, RAVI.nominee_email) } });
    expect(again.statusCode).toBe(401);

    // The person's profile and packages; the download is recorded with the nominee as who downloaded it.
    expect((await ok(as(a, token, 'GET', '/api/v1/me'))).dp_id).toBe('dp-asha');
    const packages = await ok(as(a, token, 'GET', '/api/v1/me/packages'));
    expect(packages.map((p: any) => p.id)).toEqual([asha.packageId]);
    const download = await as(a, token, 'GET', `/api/v1/me/packages/${asha.packageId}/download`);
    expect([download.statusCode, download.headers['content-type']]).toEqual([200, 'application/gzip']);
    expect(await auditOf(a, 'fulfilment.package_downloaded')).toEqual([{ actor_type: 'nominee', actor_id: nominee.id, target_id: asha.packageId, details: { ticket_id: asha.ticketId } }]);

    // Another person's package and ticket do not exist for this token.
    expect((await as(a, token, 'GET', `/api/v1/me/packages/${bob.packageId}/download`)).statusCode).toBe(404);
    expect((await as(a, token, 'GET', `/api/v1/me/grievances/${bob.ticketId}`)).statusCode).toBe(404);

    // A request filed for the person: theirs (client_user_id), with the nominee in its history, its
    // task's transitions and the audit log; the conversation goes on in their name.
    const filed = await ok(as(a, token, 'POST', '/api/v1/me/grievances', { subject: 'Erase my data', description: 'On behalf of Asha, as her nominee', category: 'erasure' }), 201);
    expect(filed.client_user_id).toBe('dp-asha');
    const history = await ok(call(a, 'GET', `/grievance/${filed.ticket_id}/history`));
    expect(history[0].actor).toEqual({ type: 'nominee', id: nominee.id });
    const fulfilment = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${filed.ticket_id}`));
    expect(fulfilment.transitions.map((x: any) => [x.action, x.actor])).toEqual([['created', { type: 'nominee', id: nominee.id }]]);
    expect((await auditOf(a, 'grievance.created')).filter((e) => e.target_id === filed.ticket_id).map((e) => [e.actor_type, e.actor_id])).toEqual([['nominee', nominee.id]]);
    const message = await ok(as(a, token, 'POST', `/api/v1/me/grievances/${filed.ticket_id}/messages`, { message: 'Any news?' }), 201);
    expect(message.sender).toBe('user');
    expect((await ok(as(a, token, 'GET', '/api/v1/me/grievances'))).map((g: any) => g.ticket_id)).toContain(filed.ticket_id);

    // What a nominee does not reach: the person's consents and nominees, and the Rights Center session.
    for (const url of ['/api/v1/me/consents', '/api/v1/me/nominees']) {
      const refused = await as(a, token, 'GET', url);
      expect([refused.statusCode, refused.json().code], url).toEqual([403, 'nominee_forbidden']);
    }
    const page = await t.call({ method: 'GET', url: `/rights?token=${token}`, org: a });
    expect(page.statusCode).toBe(401);
    expect(String(page.headers['set-cookie'] ?? '')).not.toMatch(/drs_/);
  });

  test('the token stops at once when the appointment changes or the organization turns it off', async () => {
    const a = await t.tenant();
    await allow(a);
    const nominee = await appoint(a, 'dp-asha');
    await verifyNominee(a, nominee.id);
    const token = (await ok(call(a, 'POST', `/api/v1/nominees/${nominee.id}/tokens`, { ttl_seconds: 600 }), 201)).access_token as string;
    expect((await auditOf(a, 'nominee.token_issued')).map((e) => [e.actor_type, e.details])).toEqual([['api_key', { nominee_id: nominee.id, expires_in: 600 }]]);
    expect((await as(a, token, 'GET', '/api/v1/me/packages')).statusCode).toBe(200);

    await allow(a, false);
    const off = await as(a, token, 'GET', '/api/v1/me/packages');
    expect([off.statusCode, off.json().code]).toEqual([403, 'nominee_acting_off']);
    await allow(a);
    expect((await as(a, token, 'GET', '/api/v1/me/packages')).statusCode).toBe(200);

    // The person changes who the nominee is: back to pending, and the token no longer acts.
    const own = (await ok(call(a, 'POST', '/api/v1/data-principals/dp-asha/tokens', {}), 201)).access_token as string;
    await ok(as(a, own, 'PATCH', `/api/v1/me/nominees/${nominee.id}`, { nominee_email: 'ravi.k@example.com' }));
    const pending = await as(a, token, 'GET', '/api/v1/me/packages');
    expect(pending.statusCode).toBe(403);
    expect(pending.json()).toEqual({ error: "This nominee's appointment is not active: only a verified nominee acts for the person who appointed them", code: 'nominee_not_active' });
    await verifyNominee(a, nominee.id);
    expect((await as(a, token, 'GET', '/api/v1/me/packages')).statusCode).toBe(200);
    await ok(call(a, 'DELETE', `/nominee/${nominee.id}`));
    expect((await as(a, token, 'GET', '/api/v1/me/grievances')).json().code).toBe('nominee_not_active');
  });

  test('a nominee of several people names the appointment: 400 nominee_id_required lists them, and the code is kept', async () => {
    const a = await t.tenant();
    await allow(a);
    await ok(call(a, 'PUT', '/api/v1/data-principals/dp-bob', { name: 'Bob' }), 201);
    const forAsha = await appoint(a, 'dp-asha');
    const forBob = await appoint(a, 'dp-bob', { ...RAVI, relationship: 'sibling' });
    await verifyNominee(a, forAsha.id);
    await verifyNominee(a, forBob.id);
    const res = await signIn(a, RAVI.nominee_email);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('nominee_id_required');
    expect(res.json().details.map((d: any) => d.message.split(':')[0])).toEqual([forAsha.id, forBob.id]);
    expect(res.json().details[1].message).toContain('sibling of Bob');
    const code = await lastCodeFor(a, RAVI.nominee_email);
    const chosen = await t.call({ method: 'POST', url: '/rights/nominee/otp/verify', org: a, body: { email: RAVI.nominee_email, code, nominee_id: forBob.id } });
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(chosen.json()).toMatchObject({ dp_id: 'dp-bob', nominee_id: forBob.id });
  });
});
