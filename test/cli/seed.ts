// Organizations filled through a real server's API, and the list of GETs whose answers two servers on
// copies of one store must give alike (store copy, backup and restore, pg_dump and pg_restore).
import { execFileSync } from 'node:child_process';
import { cliJson, childEnv, request, ROOT, uniqueSlug, type HttpResponse, type ServerProcess } from './child.js';
import type { Receiver } from '../support/receiver.js';

export const PASSWORD = 'a long enough password';
const LINK = '/api/v1/external/public/consent-link';
/** The consent-link history's window ends here on every server (its default end is the time of the request). */
const UNTIL = new Date(Date.now() + 86_400_000).toISOString();

export interface SeededOrg {
  slug: string;
  key: string;
  keyId: string;
  email: string;
  bearer: string;
  dpToken: string;
  ticketId: string;
  nomineeId: string;
  assetId: string;
  pointId: string;
  webhookId: string | null;
}

/** An organization, an admin key with every scope, and an owner, made with the CLI (no server may hold the embedded store). */
export async function createOrg(env: Record<string, string>): Promise<SeededOrg> {
  const slug = uniqueSlug();
  await cliJson(['org', 'create', slug], env);
  const key = await cliJson(['key', 'create', slug, '--scopes', 'admin,grievances,nominees,consent'], env);
  const email = `owner-${slug}@example.com`;
  execFileSync(process.execPath, ['bin/assent.mjs', 'user', 'create', email, '--password-stdin', '--org', slug, '--role', 'owner'], {
    cwd: ROOT,
    env: childEnv(env),
    input: PASSWORD,
  });
  return { slug, key: key.key, keyId: key.id, email, bearer: '', dpToken: '', ticketId: '', nomineeId: '', assetId: '', pointId: '', webhookId: null };
}

export function call(
  server: ServerProcess,
  t: SeededOrg | null,
  method: string,
  path: string,
  options: { body?: unknown; bearer?: string; key?: string | null; headers?: Record<string, string> } = {},
): Promise<HttpResponse> {
  const host = t ? `${t.slug}.localhost:${server.port}` : `localhost:${server.port}`;
  const headers: Record<string, string> = { ...options.headers };
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const key = options.key === undefined ? t?.key : (options.key ?? undefined);
  return request(server.port, { method, path, host, key: options.bearer ? undefined : key, body: options.body, headers });
}

export async function ok(res: Promise<HttpResponse>, what: string): Promise<any> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.body}`);
  return r.body ? r.json() : null;
}

/**
 * Fills the organization through the API: a session, tickets with history and a conversation (one
 * created with an Idempotency-Key), a verified nominee, an asset, a collection point with a second
 * notice version, a consent link (an outbox message), consent records given and withdrawn, a data
 * principal with a token, the DPO, settings, a second key, a member, and, with a receiver, a webhook
 * endpoint whose deliveries it answers. Every change writes audit entries.
 */
export async function seedOrg(server: ServerProcess, t: SeededOrg, receiver?: Receiver): Promise<void> {
  const login = await ok(call(server, null, 'POST', '/auth/login', { body: { email: t.email, password: PASSWORD }, key: null }), 'login');
  t.bearer = login.access_token;
  const post = (path: string, body: unknown, headers?: Record<string, string>) => ok(call(server, t, 'POST', path, { body, headers }), `POST ${path}`);
  if (receiver) {
    const webhook = await post('/api/v1/webhooks', { url: receiver.url, events: ['grievance.created', 'grievance.status_changed', 'nominee.created'] });
    t.webhookId = webhook.id;
  }
  const ticket = await post(
    '/grievance',
    { client_user_id: 'dp-1', subject: 'Access my data', description: 'Please send a copy', category: 'data_access' },
    { 'idempotency-key': `idem-${t.slug}` },
  );
  t.ticketId = ticket.ticket_id;
  await post('/grievance', { client_user_id: 'u-2', subject: 'Erase me', description: 'Delete my account', category: 'erasure' });
  await ok(call(server, t, 'PUT', `/grievance/${t.ticketId}`, { body: { status: 'in_progress' } }), 'PUT grievance');
  await ok(call(server, t, 'POST', `/api/v1/grievances/${t.ticketId}/status`, { body: { status: 'resolved', note: 'Sent by email' }, bearer: t.bearer }), 'status');
  await post(`/grievance/${t.ticketId}/messages`, { message: 'We are on it' });
  const nominee = await post('/nominee', { user_id: 'dp-1', nominee_name: 'Asha Rao', nominee_email: 'asha@example.com', nominee_mobile: '+919876543210', relationship: 'spouse' });
  t.nomineeId = nominee.id;
  await ok(call(server, t, 'POST', `/api/v1/nominees/${t.nomineeId}/verify`, { bearer: t.bearer }), 'verify nominee');
  const asset = await post('/api/v1/assets', { name: 'App', kind: 'mobile_app' });
  t.assetId = asset.id;
  const point = await post('/api/v1/collection-points', {
    asset_id: asset.id,
    name: 'Sign-up',
    notice: 'We use your data to run your account.',
    purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
  });
  t.pointId = point.id;
  await ok(call(server, t, 'PATCH', `/api/v1/collection-points/${point.id}`, { body: { notice: 'We use your data to run your account and to send offers you chose.' } }), 'PATCH point');
  await post(LINK, { asset_id: asset.id, collection_point_id: point.id, phone: '9876543210', dp_id: 'dp-1' });
  const purposes = point.purposes as { id: string }[];
  await post(`/consent/${point.id}/consent`, { dp_id: 'dp-1', purposes: purposes.map((p) => ({ id: p.id, granted: true })) });
  await post(`/consent/${point.id}/withdraw`, { dp_id: 'dp-1' });
  await post(`/consent/${point.id}/consent`, { dp_id: 'dp-2', purposes: purposes.map((p) => ({ id: p.id, granted: p.id === purposes[0]!.id })) });
  await ok(call(server, t, 'PUT', '/api/v1/data-principals/dp-1', { body: { name: 'Asha' } }), 'PUT data principal');
  t.dpToken = (await post('/api/v1/data-principals/dp-1/tokens', {})).access_token;
  await ok(call(server, t, 'PUT', '/api/v1/organization/dpo', { body: { full_name: 'Meera Iyer', email: 'dpo@example.com' } }), 'PUT dpo');
  await ok(call(server, t, 'PATCH', '/api/v1/organization', { body: { grievance_period_days: 45 } }), 'PATCH organization');
  await post('/api/v1/api-keys', { name: 'ci', scopes: ['grievances'] });
  await ok(call(server, t, 'POST', '/api/v1/members', { body: { email: `member-${t.slug}@example.com`, role: 'member', password: PASSWORD }, bearer: t.bearer }), 'add member');
}

/** Waits until every webhook delivery of the organizations is delivered (none in flight at a copy). */
export async function deliveriesSettled(server: ServerProcess, orgs: SeededOrg[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let pending = 0;
    for (const t of orgs) {
      if (!t.webhookId) continue;
      const list = await ok(call(server, t, 'GET', `/api/v1/webhooks/${t.webhookId}/deliveries`), 'deliveries');
      pending += (list.data as { status: string }[]).filter((d) => d.status !== 'delivered').length + (list.data.length === 0 ? 1 : 0);
    }
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`webhook deliveries still pending after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export type Answer = [what: string, status: number, body: unknown];

/** Every GET of the list, for each organization, on one server. */
export async function answers(server: ServerProcess, orgs: SeededOrg[]): Promise<Answer[]> {
  const out: Answer[] = [];
  for (const t of orgs) {
    const get = async (path: string, options: { bearer?: string; headers?: Record<string, string>; key?: string | null } = {}) => {
      const r = await call(server, t, 'GET', path, options);
      let body: unknown = r.body;
      try {
        body = r.json();
      } catch {
        // a page, compared as text
      }
      out.push([`${t.slug} GET ${path}${options.bearer ? ' (bearer)' : ''}`, r.status, body]);
    };
    // Bearer first: the API key's last_used_at is then what the source wrote when it stopped.
    await get('/api/v1/api-keys', { bearer: t.bearer });
    await get('/api/v1/members', { bearer: t.bearer });
    await get('/api/v1/audit-log?limit=200', { bearer: t.bearer });
    await get('/api/v1/organization', { bearer: t.bearer });
    await get('/api/v1/grievances', { bearer: t.bearer });
    const paths = [
      '/grievance/user/dp-1',
      '/grievance/user/u-2',
      `/grievance/${t.ticketId}/history`,
      `/grievance/${t.ticketId}/messages`,
      '/nominee/user/dp-1',
      '/api/v1/assets',
      `/api/v1/assets/${t.assetId}`,
      '/api/v1/collection-points',
      `/api/v1/collection-points/${t.pointId}`,
      `/consent/${t.pointId}/consent?dp_id=dp-1`,
      `/consent/${t.pointId}/consent?dp_id=dp-2`,
      '/api/v1/grievances',
      '/api/v1/grievances/summary',
      '/api/v1/consent-links/daily',
      `/api/v1/grievances/${t.ticketId}`,
      '/api/v1/nominees',
      '/api/v1/data-principals/dp-1',
      '/api/v1/organization/rights-center-settings',
      '/api/v1/webhooks',
      ...(t.webhookId ? [`/api/v1/webhooks/${t.webhookId}`, `/api/v1/webhooks/${t.webhookId}/deliveries`] : []),
    ];
    for (const path of paths) await get(path);
    await get(`${LINK}/history?asset_id=${t.assetId}&to=${encodeURIComponent(UNTIL)}`, { headers: { 'x-org-id': t.slug } });
    await get('/dpo');
    // The data principal's token, minted before the copy, acts on it.
    for (const path of [
      '/api/v1/me',
      '/api/v1/me/consents',
      `/api/v1/me/consents/${t.pointId}/history`,
      '/api/v1/me/grievances',
      `/api/v1/me/grievances/${t.ticketId}`,
      `/api/v1/me/grievances/${t.ticketId}/messages`,
      '/api/v1/me/nominees',
    ]) {
      await get(path, { bearer: t.dpToken, key: null });
    }
  }
  return out;
}
