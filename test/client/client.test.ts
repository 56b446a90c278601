// The TypeScript client (clients/typescript, @assent/client) against a real listening server on both
// stores: typed calls, credentials, an Idempotency-Key made once per call and reused on its retries (the
// service answers the retry of a request whose answer was lost with Idempotent-Replayed), retries only
// where resending is safe, Retry-After honoured, and typed errors carrying the service's `code`.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  AssentError,
  createAssentClient,
  newIdempotencyKey,
  unwrap,
  wasReplayed,
  type AssentClientOptions,
  type ErrorCode,
  type Schema,
} from '../../clients/typescript/src/index.js';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { hostFetch } from '../support/host-fetch.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => t?.close());

/** What a fetch passed to the client saw: each attempt's method, path and Idempotency-Key. */
interface Seen {
  method: string;
  path: string;
  key: string | null;
  status: number | 'network error';
}

/**
 * A client with the tenant's key, on the bare host (default: the key selects its organization) or the
 * organization's own host (through a fetch that sets Host); `fault(attempt, req)`
 * may answer an attempt itself or lose its answer (the request reached the service, the answer did not).
 */
function client(
  a: Tenant,
  options: Partial<AssentClientOptions> & { fault?: (attempt: number, req: Request, res: () => Promise<Response>) => Promise<Response>; host?: 'bare' | 'org' } = {},
) {
  const seen: Seen[] = [];
  const { fault, host = 'bare', ...rest } = options;
  const transport = host === 'bare' ? (req: Request) => fetch(req) : hostFetch(`${a.slug}.localhost`);
  const api = createAssentClient({
    baseUrl,
    apiKey: a.key,
    retryDelayMs: 10,
    ...rest,
    fetch: async (req) => {
      const attempt = seen.length;
      const entry: Seen = { method: req.method, path: new URL(req.url).pathname, key: req.headers.get('idempotency-key'), status: 'network error' };
      seen.push(entry);
      const send = () => transport(req);
      const res = fault ? await fault(attempt, req, send) : await send();
      entry.status = res.status;
      return res;
    },
  });
  return { api, seen };
}

const ticketBody = (user = 'user-42') => ({
  client_user_id: user,
  subject: 'Copy of my data',
  description: 'Please send me all personal data you hold about me.',
  category: 'data_access' as const,
});

describe('the client against a real server', () => {
  test('creates a ticket with a key: typed, with an Idempotency-Key it made', async () => {
    const a = await t.tenant(['grievances']);
    const { api, seen } = client(a);
    const ticket: Schema<'GrievanceTicket'> = await unwrap(api.POST('/grievance', { body: ticketBody() }));
    expect(ticket).toMatchObject({ client_user_id: 'user-42', status: 'open', category: 'data_access' });
    expect(ticket.ticket_id).toMatch(/^GRV-[A-Z0-9]{8}$/);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    // Each logical call gets its own key.
    await unwrap(api.POST('/grievance', { body: ticketBody() }));
    expect(seen[1]!.key).not.toBe(seen[0]!.key);
    // A read carries none.
    await unwrap(api.GET('/grievance/user/{user_id}', { params: { path: { user_id: 'user-42' } } }));
    expect(seen[2]!.key).toBeNull();
  });

  test('a lost answer is retried with the same key: the service replays it, and one ticket exists', async () => {
    const a = await t.tenant(['grievances']);
    const { api, seen } = client(a, {
      // The first attempt reaches the service and creates the ticket; its answer is lost on the way back.
      fault: async (attempt, _req, send) => {
        const res = await send();
        if (attempt === 0) {
          expect(res.status).toBe(201);
          throw new TypeError('fetch failed (the answer was lost)');
        }
        return res;
      },
    });
    const { data, response } = await api.POST('/grievance', { body: ticketBody('user-lost') });
    expect(response.status).toBe(201);
    expect(wasReplayed(response)).toBe(true);
    expect(seen.map((s) => s.key)).toEqual([seen[0]!.key, seen[0]!.key]);
    const list = await unwrap(api.GET('/grievance/user/{user_id}', { params: { path: { user_id: 'user-lost' } } }));
    expect(list.map((g) => g.ticket_id)).toEqual([data!.ticket_id]);
  });

  test("a caller's own key is kept, and a repeat with it is replayed", async () => {
    const a = await t.tenant(['grievances']);
    const { api, seen } = client(a);
    const key = newIdempotencyKey();
    const first = await api.POST('/grievance', { body: ticketBody('user-own'), params: { header: { 'Idempotency-Key': key } } });
    const again = await api.POST('/grievance', { body: ticketBody('user-own'), params: { header: { 'Idempotency-Key': key } } });
    expect(seen.map((s) => s.key)).toEqual([key, key]);
    expect([first.response.status, wasReplayed(first.response)]).toEqual([201, false]);
    expect([again.response.status, wasReplayed(again.response)]).toEqual([201, true]);
    expect(again.data!.ticket_id).toBe(first.data!.ticket_id);
    // Another body under the same key: a typed 422, not retried.
    const reused = await api.POST('/grievance', { body: ticketBody('someone-else'), params: { header: { 'Idempotency-Key': key } } });
    expect(reused.response.status).toBe(422);
    expect(reused.error?.code).toBe('idempotency_key_reused');
    expect(seen).toHaveLength(3);
  });

  test('5xx and in-flight 409 are retried with the same key; Retry-After is waited for', async () => {
    const a = await t.tenant(['grievances']);
    const json = (status: number, body: object, headers: Record<string, string> = {}) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
    const { api, seen } = client(a, {
      fault: async (attempt, _req, send) => {
        if (attempt === 0) return json(503, { error: 'Service unavailable', code: 'internal' });
        if (attempt === 1) return json(409, { error: 'A request with this Idempotency-Key is still being processed', code: 'idempotency_key_in_flight' });
        if (attempt === 2) return json(429, { error: 'Rate limit exceeded', code: 'rate_limited' }, { 'retry-after': '1' });
        return send();
      },
      retries: 3,
    });
    const started = Date.now();
    const ticket = await unwrap(api.POST('/grievance', { body: ticketBody('user-retry') }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(seen.map((s) => s.status)).toEqual([503, 409, 429, 201]);
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(ticket.client_user_id).toBe('user-retry');
  });

  test('what is not safe to resend is not resent: a POST without a key on 5xx, a plain 409', async () => {
    const a = await t.tenant(['admin']);
    const failing = (status: number, code: ErrorCode) => async () =>
      new Response(JSON.stringify({ error: 'no', code }), { status, headers: { 'content-type': 'application/json' } });
    // POST /api/v1/webhooks takes no Idempotency-Key: a 503 may have come after the endpoint was made.
    const hooks = client(a, { fault: failing(503, 'internal') });
    const res = await hooks.api.POST('/api/v1/webhooks', { body: { url: 'https://example.com/hook', events: ['grievance.created'] } });
    expect(res.response.status).toBe(503);
    expect(hooks.seen).toHaveLength(1);
    expect(hooks.seen[0]!.key).toBeNull();
    const conflict = client(a, { fault: failing(409, 'conflict') });
    expect((await conflict.api.POST('/grievance', { body: ticketBody() })).response.status).toBe(409);
    expect(conflict.seen).toHaveLength(1);
    // A read is resent after a network error.
    const reads = client(a, {
      fault: async (attempt, _req, send) => {
        if (attempt === 0) throw new TypeError('fetch failed');
        return send();
      },
    });
    expect(await unwrap(reads.api.GET('/api/v1/grievances', {}))).toMatchObject({ data: [] });
    expect(reads.seen).toHaveLength(2);
    // A Retry-After longer than the client waits for: the 429 comes back at once.
    const slow = client(a, {
      fault: async () => new Response(JSON.stringify({ error: 'Rate limit exceeded', code: 'rate_limited' }), { status: 429, headers: { 'retry-after': '3600' } }),
    });
    // openapi-fetch itself does not throw for an answer: unwrap does.
    expect((await slow.api.GET('/api/v1/grievances', {})).response.status).toBe(429);
    await expect(unwrap(slow.api.GET('/api/v1/grievances', {}))).rejects.toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 3600 });
    expect(slow.seen).toHaveLength(2);
  });

  test('bad input is an AssentError with its code, the fields at fault and the request id; not retried', async () => {
    const a = await t.tenant(['grievances']);
    const { api, seen } = client(a);
    const body = { ...ticketBody(), subject: '', status: 'open' } as unknown as ReturnType<typeof ticketBody>;
    const error = await unwrap(api.POST('/grievance', { body })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AssentError);
    const e = error as AssentError;
    expect(e.status).toBe(400);
    expect(e.code).toBe('validation_failed');
    expect(e.problemsFor('subject')).toEqual(['must not be empty']);
    expect(e.problemsFor('status')).toEqual(['is not an accepted field']);
    expect(e.requestId).toMatch(/.+/);
    expect(seen).toHaveLength(1);

    // Other codes, as the service sends them.
    const codeOf = (p: Promise<unknown>) => p.then(() => null, (x: AssentError) => x.code);
    expect(await codeOf(unwrap(api.GET('/api/v1/grievances/{ticket_id}', { params: { path: { ticket_id: 'GRV-NOPE0000' } } })))).toBe('not_found');
    expect(await codeOf(unwrap(api.GET('/api/v1/nominees', {})))).toBe('missing_scope');
    const anonymous = createAssentClient({ baseUrl });
    expect(await codeOf(unwrap(anonymous.GET('/api/v1/grievances', {})))).toBe('api_key_required');
    const wrong = createAssentClient({ baseUrl, apiKey: 'ask_live_' + 'x'.repeat(32) });
    expect(await codeOf(unwrap(wrong.GET('/api/v1/grievances', {})))).toBe('invalid_api_key');
    // Nothing listening: after the retries, an AssentError with status 0 and code network_error (not fetch's
    // raw TypeError), naming the address; fetch's own error is its cause. A POST without a key fails the same way.
    const nowhere = createAssentClient({ baseUrl: 'http://127.0.0.1:9', apiKey: a.key, retryDelayMs: 1 });
    const unreachable = await unwrap(nowhere.GET('/api/v1/grievances', {})).catch((x: unknown) => x);
    expect(unreachable).toBeInstanceOf(AssentError);
    expect(unreachable).toMatchObject({ status: 0, code: 'network_error', details: [], requestId: null });
    expect((unreachable as AssentError).message).toMatch(/^Could not reach the Assent service at http:\/\/127\.0\.0\.1:9 \(.+\): check that it is running/);
    expect((unreachable as AssentError).cause).toBeInstanceOf(TypeError);
    const post = await unwrap(nowhere.POST('/api/v1/webhooks', { body: { url: 'https://example.com/hook', events: ['grievance.created'] } })).catch((x: unknown) => x);
    expect(post).toMatchObject({ name: 'AssentError', status: 0, code: 'network_error' });
  });

  test("on an organization's own host (a fetch that sets Host); its key on another organization's host is refused", async () => {
    const a = await t.tenant(['grievances']);
    const b = await t.tenant(['grievances']);
    const own = client(a, { host: 'org' });
    const ticket = await unwrap(own.api.POST('/grievance', { body: ticketBody('user-host') }));
    expect(ticket.ticket_id).toMatch(/^GRV-/);
    const elsewhere = createAssentClient({ baseUrl, apiKey: a.key, fetch: hostFetch(`${b.slug}.localhost`) });
    await expect(unwrap(elsewhere.GET('/api/v1/grievances', {}))).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  test('lists with filters', async () => {
    const a = await t.tenant(['grievances']);
    const { api } = client(a);
    const made = [];
    for (const [user, category] of [
      ['user-a', 'erasure'],
      ['user-a', 'data_access'],
      ['user-b', 'erasure'],
    ] as const) {
      made.push(await unwrap(api.POST('/grievance', { body: { ...ticketBody(user), category } })));
    }
    await unwrap(api.PUT('/grievance/{ticket_id}', { params: { path: { ticket_id: made[2]!.ticket_id } }, body: { status: 'in_progress' } }));

    const erasure = await unwrap(api.GET('/api/v1/grievances', { params: { query: { category: 'erasure' } } }));
    expect(erasure.count).toBe(2);
    expect(erasure.data.map((g) => g.ticket_id).sort()).toEqual([made[0]!.ticket_id, made[2]!.ticket_id].sort());
    const openErasure = await unwrap(api.GET('/api/v1/grievances', { params: { query: { category: 'erasure', status: 'open' } } }));
    expect(openErasure.data.map((g) => g.ticket_id)).toEqual([made[0]!.ticket_id]);
    const userA = await unwrap(api.GET('/api/v1/grievances', { params: { query: { client_user_id: 'user-a', limit: 1 } } }));
    expect([userA.count, userA.data.length]).toEqual([2, 1]);
    // A bad filter is a typed 400 naming it.
    const bad = await unwrap(api.GET('/api/v1/grievances', { params: { query: { status: 'nope' as 'open' } } })).then(
      () => null,
      (e: AssentError) => e,
    );
    expect([bad?.code, (bad?.problemsFor('status') ?? []).length > 0]).toEqual(['validation_failed', true]);
  });

  test('a Bearer token with X-Org-Id, given as a function asked before each request', async () => {
    const a = await t.tenant(['admin']);
    const email = `owner-${a.slug}@example.com`;
    const user = await t.app.services.users.createUser({ email, password: 'correct horse battery staple' });
    await t.app.services.users.addMember(a.id, user.id, 'owner');
    const login = await unwrap(createAssentClient({ baseUrl }).POST('/auth/login', { body: { email, password: 'correct horse battery staple' } }));
    let asked = 0;
    const api = createAssentClient({
      baseUrl,
      token: () => {
        asked++;
        return login.access_token;
      },
      orgId: a.slug,
    });
    const org = await unwrap(api.GET('/api/v1/organization', {}));
    expect(org.slug).toBe(a.slug);
    expect(asked).toBe(1);
  });
});
