// The shared tenancy and auth-order suite (contract §1-§3), driven by one route table: every tenant
// endpoint is checked for host, credentials, key validity, scope, order against validation, and
// cross-tenant ids. A meta-test fails when a registered route is missing from the table.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';
import { WRONG_HOST_HINT } from '../../src/platform/auth/access.js';

interface Fixture {
  org: TestOrg & { key: string };
  ticketId: string;
  nomineeId: string;
  assetId: string;
  pointId: string;
  purposeIds: string[];
  requestId: string;
  /** A second API key of the organization (to revoke), and a user with the member role. */
  keyId: string;
  memberId: string;
  /** A webhook endpoint of the organization and one delivery to it (its test event). */
  webhookId: string;
  deliveryId: string;
  /** A consent record of the organization (it has a signed receipt). */
  consentId: string;
  /** An audit log entry of the organization (sealed, so it has an inclusion proof). */
  auditId: string;
  /** The data map: a category held by a system, and the ticket's task for that system (issue 33). */
  categoryId: string;
  systemId: string;
  taskId: string;
}

type Scope = 'grievances' | 'nominees' | 'consent' | 'admin' | 'sdk' | 'fulfilment';

interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The route pattern as registered. */
  path: string;
  /** null: the route takes no API key (Bearer only), and a key alone gets the Bearer-only 401. */
  scope: Scope | null;
  url(f: Fixture): string;
  body?: object | ((f: Fixture) => object);
  /** The consent link history also needs X-Org-Id. */
  orgHeader?: boolean;
  /** The SDK surface ignores fields it does not know (the SDKs send more than Assent reads); a bad body still answers 400, naming what is wrong. */
  lenientBody?: boolean;
  /** Member roles whose Bearer token the route takes. */
  bearer?: readonly ('owner' | 'admin' | 'member')[];
  /** What another organization's key sees of this organization's record: a 404 with this error, or an empty list. */
  isolation?: { notFound: string } | { empty: (body: any) => number };
}

const grievanceBody = { client_user_id: 'u-1', subject: 'Access my data', description: 'Please send a copy', category: 'data_access' };
const nomineeBody = {
  user_id: 'u-1',
  nominee_name: 'Asha Rao',
  nominee_email: 'asha@example.com',
  nominee_mobile: '+919876543210',
  relationship: 'spouse',
};
const LINK = '/api/v1/external/public/consent-link';
const OWNER_ADMIN = ['owner', 'admin'] as const;
const ALL_ROLES = ['owner', 'admin', 'member'] as const;
const choices = (f: Fixture) => ({ dp_id: 'dp-1', purposes: f.purposeIds.map((id) => ({ id, granted: true })) });
const ticketGone = { notFound: 'Grievance ticket not found' };
const nomineeGone = { notFound: 'Nominee not found' };
const pointGone = { notFound: 'Collection point not found' };
const webhookGone = { notFound: 'Webhook endpoint not found' };
const categoryGone = { notFound: 'Data category not found' };
const systemGone = { notFound: 'System not found' };
const taskGone = { notFound: 'Task not found' };
const TASKS = '/api/v1/fulfilment/tasks';

const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/grievance/user/:user_id', scope: 'grievances', url: () => '/grievance/user/u-1', isolation: { empty: (b) => b.length } },
  { method: 'POST', path: '/grievance', scope: 'grievances', url: () => '/grievance', body: grievanceBody },
  { method: 'PUT', path: '/grievance/:ticket_id', scope: 'grievances', url: (f) => `/grievance/${f.ticketId}`, body: { status: 'in_progress' }, isolation: ticketGone },
  { method: 'GET', path: '/grievance/:ticket_id/history', scope: 'grievances', url: (f) => `/grievance/${f.ticketId}/history`, isolation: ticketGone },
  { method: 'GET', path: '/nominee/user/:user_id', scope: 'nominees', url: () => '/nominee/user/u-1', isolation: { empty: (b) => b.length } },
  { method: 'POST', path: '/nominee', scope: 'nominees', url: () => '/nominee', body: nomineeBody },
  { method: 'PUT', path: '/nominee/:nominee_id', scope: 'nominees', url: (f) => `/nominee/${f.nomineeId}`, body: { status: 'verified' }, isolation: nomineeGone },
  { method: 'DELETE', path: '/nominee/:nominee_id', scope: 'nominees', url: (f) => `/nominee/${f.nomineeId}`, isolation: nomineeGone },
  { method: 'POST', path: '/api/v1/assets', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/assets', body: { name: 'Website', kind: 'website' } },
  { method: 'GET', path: '/api/v1/assets', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/assets', isolation: { empty: (b) => b.count } },
  { method: 'GET', path: '/api/v1/assets/:id', scope: 'admin', bearer: ALL_ROLES, url: (f) => `/api/v1/assets/${f.assetId}`, isolation: { notFound: 'Asset not found' } },
  { method: 'PATCH', path: '/api/v1/assets/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/assets/${f.assetId}`, body: { name: 'Renamed' }, isolation: { notFound: 'Asset not found' } },
  {
    method: 'POST',
    path: '/api/v1/collection-points',
    scope: 'admin',
    bearer: OWNER_ADMIN,
    url: () => '/api/v1/collection-points',
    body: (f) => ({ asset_id: f.assetId, name: 'Checkout', notice: 'We use your data to deliver.', purposes: [{ name: 'Delivery', required: true }] }),
  },
  { method: 'GET', path: '/api/v1/collection-points', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/collection-points', isolation: { empty: (b) => b.count } },
  { method: 'GET', path: '/api/v1/collection-points/:id', scope: 'admin', bearer: ALL_ROLES, url: (f) => `/api/v1/collection-points/${f.pointId}`, isolation: pointGone },
  { method: 'PATCH', path: '/api/v1/collection-points/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/collection-points/${f.pointId}`, body: { name: 'Renamed' }, isolation: pointGone },
  {
    method: 'POST',
    path: LINK,
    scope: 'consent',
    bearer: OWNER_ADMIN,
    url: () => LINK,
    body: (f) => ({ asset_id: f.assetId, collection_point_id: f.pointId, phone: '+919876543210' }),
    isolation: pointGone,
  },
  { method: 'POST', path: `${LINK}/duplicate/:request_id`, scope: 'consent', bearer: OWNER_ADMIN, url: (f) => `${LINK}/duplicate/${f.requestId}`, body: {}, isolation: { notFound: 'Consent request not found' } },
  {
    method: 'GET',
    path: `${LINK}/history`,
    scope: 'admin',
    orgHeader: true,
    bearer: OWNER_ADMIN,
    url: (f) => `${LINK}/history?asset_id=${f.assetId}`,
    isolation: { empty: (b) => b.count + b.data.length },
  },
  { method: 'POST', path: '/consent/:collection_point_id/consent', scope: 'consent', url: (f) => `/consent/${f.pointId}/consent`, body: choices, isolation: pointGone },
  { method: 'POST', path: '/consent/:collection_point_id/withdraw', scope: 'consent', url: (f) => `/consent/${f.pointId}/withdraw`, body: { dp_id: 'dp-1' }, isolation: pointGone },
  { method: 'GET', path: '/consent/:collection_point_id/consent', scope: 'consent', url: (f) => `/consent/${f.pointId}/consent?dp_id=dp-1`, isolation: pointGone },
  { method: 'GET', path: '/api/v1/grievances', scope: 'grievances', bearer: ALL_ROLES, url: () => '/api/v1/grievances', isolation: { empty: (b) => b.count } },
  { method: 'GET', path: '/api/v1/grievances/summary', scope: 'grievances', bearer: ALL_ROLES, url: () => '/api/v1/grievances/summary', isolation: { empty: (b) => b.total } },
  { method: 'GET', path: '/api/v1/consent-links/daily', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/consent-links/daily', isolation: { empty: (b) => b.totals.created } },
  { method: 'GET', path: '/api/v1/grievances/:ticket_id', scope: 'grievances', bearer: ALL_ROLES, url: (f) => `/api/v1/grievances/${f.ticketId}`, isolation: ticketGone },
  {
    method: 'POST',
    path: '/api/v1/grievances/:ticket_id/status',
    scope: 'grievances',
    bearer: OWNER_ADMIN,
    url: (f) => `/api/v1/grievances/${f.ticketId}/status`,
    body: { status: 'in_progress', note: 'Looking into it' },
    isolation: ticketGone,
  },
  { method: 'GET', path: '/api/v1/nominees', scope: 'nominees', bearer: ALL_ROLES, url: () => '/api/v1/nominees', isolation: { empty: (b) => b.count } },
  { method: 'POST', path: '/api/v1/nominees/:nominee_id/verify', scope: 'nominees', bearer: OWNER_ADMIN, url: (f) => `/api/v1/nominees/${f.nomineeId}/verify`, isolation: nomineeGone },
  { method: 'POST', path: '/api/v1/nominees/:nominee_id/reject', scope: 'nominees', bearer: OWNER_ADMIN, url: (f) => `/api/v1/nominees/${f.nomineeId}/reject`, isolation: nomineeGone },
  { method: 'GET', path: '/api/v1/organization', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/organization' },
  { method: 'GET', path: '/api/v1/api-keys', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/api-keys' },
  { method: 'POST', path: '/api/v1/api-keys', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/api-keys', body: { name: 'ci', scopes: ['grievances'] } },
  { method: 'DELETE', path: '/api/v1/api-keys/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/api-keys/${f.keyId}`, isolation: { notFound: 'API key not found' } },
  { method: 'GET', path: '/api/v1/members', scope: null, bearer: OWNER_ADMIN, url: () => '/api/v1/members' },
  {
    method: 'POST',
    path: '/api/v1/members',
    scope: null,
    bearer: OWNER_ADMIN,
    url: () => '/api/v1/members',
    body: (f) => ({ email: `new-${f.org.slug}@example.com`, role: 'member', password: 'a long enough password' }),
  },
  { method: 'PATCH', path: '/api/v1/members/:user_id', scope: null, bearer: OWNER_ADMIN, url: (f) => `/api/v1/members/${f.memberId}`, body: { role: 'admin' }, isolation: { notFound: 'Member not found' } },
  { method: 'DELETE', path: '/api/v1/members/:user_id', scope: null, bearer: OWNER_ADMIN, url: (f) => `/api/v1/members/${f.memberId}`, isolation: { notFound: 'Member not found' } },
  { method: 'GET', path: '/api/v1/export', scope: null, bearer: ['owner'], url: () => '/api/v1/export' },
  { method: 'GET', path: '/api/v1/audit-log', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/audit-log', isolation: { empty: (b) => b.count } },
  {
    method: 'GET',
    path: '/api/v1/audit-log/:id/proof',
    scope: 'admin',
    bearer: OWNER_ADMIN,
    url: (f) => `/api/v1/audit-log/${f.auditId}/proof`,
    isolation: { notFound: 'No audit log entry with this id' },
  },
  // Data principals (contract §7); the routes that act for a data principal are walked in data-principals.test.ts.
  { method: 'PUT', path: '/api/v1/data-principals/:dp_id', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/data-principals/dp-1', body: { name: 'Asha' } },
  {
    method: 'GET',
    path: '/api/v1/data-principals/:dp_id',
    scope: 'admin',
    bearer: ALL_ROLES,
    url: () => '/api/v1/data-principals/dp-1',
    isolation: { notFound: 'Data principal not found' },
  },
  { method: 'POST', path: '/api/v1/data-principals/:dp_id/tokens', scope: 'consent', url: () => '/api/v1/data-principals/dp-1/tokens', body: {} },
  // A token for a verified nominee acting for the person (issue 33); its uses are walked in fulfilment-nominees.test.ts.
  { method: 'POST', path: '/api/v1/nominees/:nominee_id/tokens', scope: 'nominees', url: (f) => `/api/v1/nominees/${f.nomineeId}/tokens`, body: {}, isolation: nomineeGone },
  {
    method: 'PUT',
    path: '/api/v1/organization/dpo',
    scope: 'admin',
    bearer: OWNER_ADMIN,
    url: () => '/api/v1/organization/dpo',
    body: { full_name: 'Meera Iyer', email: 'dpo@example.com' },
  },
  // The organization's settings (rate limit, grievance period) and the truConsent widget's settings.
  { method: 'PATCH', path: '/api/v1/organization', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/organization', body: { grievance_period_days: 45 } },
  { method: 'GET', path: '/api/v1/organization/rights-center-settings', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/organization/rights-center-settings' },
  { method: 'PATCH', path: '/api/v1/organization/rights-center-settings', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/organization/rights-center-settings', body: {} },
  // The conversation on a ticket (contract §7).
  { method: 'GET', path: '/grievance/:ticket_id/messages', scope: 'grievances', bearer: ALL_ROLES, url: (f) => `/grievance/${f.ticketId}/messages`, isolation: ticketGone },
  {
    method: 'POST',
    path: '/grievance/:ticket_id/messages',
    scope: 'grievances',
    bearer: ALL_ROLES,
    url: (f) => `/grievance/${f.ticketId}/messages`,
    body: { message: 'We are on it' },
    isolation: ticketGone,
  },
  // Webhooks (contract §9).
  { method: 'POST', path: '/api/v1/webhooks', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/webhooks', body: { url: 'https://93.184.215.14/hook', events: ['grievance.created'] } },
  { method: 'GET', path: '/api/v1/webhooks', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/webhooks', isolation: { empty: (b) => b.data.length } },
  { method: 'GET', path: '/api/v1/webhooks/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}`, isolation: webhookGone },
  { method: 'PATCH', path: '/api/v1/webhooks/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}`, body: { description: 'CRM' }, isolation: webhookGone },
  { method: 'DELETE', path: '/api/v1/webhooks/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}`, isolation: webhookGone },
  { method: 'POST', path: '/api/v1/webhooks/:id/rotate-secret', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}/rotate-secret`, isolation: webhookGone },
  { method: 'POST', path: '/api/v1/webhooks/:id/test', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}/test`, isolation: webhookGone },
  { method: 'GET', path: '/api/v1/webhooks/:id/deliveries', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/webhooks/${f.webhookId}/deliveries`, isolation: webhookGone },
  {
    method: 'GET',
    path: '/api/v1/webhooks/:id/deliveries/:delivery_id/attempts',
    scope: 'admin',
    bearer: OWNER_ADMIN,
    url: (f) => `/api/v1/webhooks/${f.webhookId}/deliveries/${f.deliveryId}/attempts`,
    isolation: webhookGone,
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/:id/deliveries/:delivery_id/retry',
    scope: 'admin',
    bearer: OWNER_ADMIN,
    url: (f) => `/api/v1/webhooks/${f.webhookId}/deliveries/${f.deliveryId}/retry`,
    isolation: webhookGone,
  },
  // Signed consent receipts and the keys that sign them (issue 18).
  { method: 'GET', path: '/api/v1/consents/:consent_id/receipt', scope: 'consent', url: (f) => `/api/v1/consents/${f.consentId}/receipt`, isolation: { notFound: 'Consent record not found' } },
  { method: 'GET', path: '/api/v1/organization/signing-keys', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/organization/signing-keys' },
  { method: 'POST', path: '/api/v1/organization/signing-keys/rotate', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/organization/signing-keys/rotate' },
  // Rights fulfilment (issue 33): the data map, a request's tasks and the lease API.
  { method: 'POST', path: '/api/v1/data-categories', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/data-categories', body: { key: 'contact', name: 'Contact details' } },
  { method: 'GET', path: '/api/v1/data-categories', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/data-categories', isolation: { empty: (b) => b.count } },
  { method: 'GET', path: '/api/v1/data-categories/:id', scope: 'admin', bearer: ALL_ROLES, url: (f) => `/api/v1/data-categories/${f.categoryId}`, isolation: categoryGone },
  { method: 'PATCH', path: '/api/v1/data-categories/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/data-categories/${f.categoryId}`, body: { name: 'Renamed' }, isolation: categoryGone },
  { method: 'DELETE', path: '/api/v1/data-categories/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/data-categories/${f.categoryId}`, isolation: categoryGone },
  { method: 'POST', path: '/api/v1/systems', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/systems', body: { name: 'Helpdesk', owner: 'Support' } },
  { method: 'GET', path: '/api/v1/systems', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/systems', isolation: { empty: (b) => b.count } },
  { method: 'GET', path: '/api/v1/systems/:id', scope: 'admin', bearer: ALL_ROLES, url: (f) => `/api/v1/systems/${f.systemId}`, isolation: systemGone },
  { method: 'PATCH', path: '/api/v1/systems/:id', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/systems/${f.systemId}`, body: { owner: 'Ops' }, isolation: systemGone },
  { method: 'POST', path: '/api/v1/systems/:id/keys', scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `/api/v1/systems/${f.systemId}/keys`, body: {}, isolation: systemGone },
  { method: 'GET', path: '/api/v1/fulfilment/settings', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/fulfilment/settings' },
  { method: 'PUT', path: '/api/v1/fulfilment/settings', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/fulfilment/settings', body: { erase_on_withdrawal: false } },
  { method: 'GET', path: '/api/v1/data-map/summary', scope: 'admin', bearer: ALL_ROLES, url: () => '/api/v1/data-map/summary', isolation: { empty: (b) => b.categories.length } },
  { method: 'GET', path: TASKS, scope: 'fulfilment', bearer: ALL_ROLES, url: () => TASKS, isolation: { empty: (b) => b.count } },
  { method: 'POST', path: `${TASKS}/claim`, scope: 'fulfilment', url: () => `${TASKS}/claim`, body: (f) => ({ system_id: f.systemId }), isolation: systemGone },
  { method: 'GET', path: `${TASKS}/:id`, scope: 'fulfilment', bearer: ALL_ROLES, url: (f) => `${TASKS}/${f.taskId}`, isolation: taskGone },
  { method: 'POST', path: `${TASKS}/:id/heartbeat`, scope: 'fulfilment', url: (f) => `${TASKS}/${f.taskId}/heartbeat`, body: { lease_id: 'lse_0' }, isolation: taskGone },
  { method: 'POST', path: `${TASKS}/:id/complete`, scope: 'fulfilment', bearer: OWNER_ADMIN, url: (f) => `${TASKS}/${f.taskId}/complete`, body: {}, isolation: taskGone },
  { method: 'POST', path: `${TASKS}/:id/fail`, scope: 'fulfilment', bearer: OWNER_ADMIN, url: (f) => `${TASKS}/${f.taskId}/fail`, body: { reason: 'Timed out' }, isolation: taskGone },
  { method: 'POST', path: `${TASKS}/:id/parts`, scope: 'fulfilment', bearer: OWNER_ADMIN, url: (f) => `${TASKS}/${f.taskId}/parts`, body: { name: 'orders.json', data: { orders: [] } }, isolation: taskGone },
  // Its body is a file (application/octet-stream), which this table does not send: another organization's task is walked in fulfilment.test.ts.
  { method: 'PUT', path: `${TASKS}/:id/parts/:name`, scope: 'fulfilment', bearer: OWNER_ADMIN, url: (f) => `${TASKS}/${f.taskId}/parts/orders.csv` },
  { method: 'POST', path: `${TASKS}/:id/retry`, scope: 'admin', bearer: OWNER_ADMIN, url: (f) => `${TASKS}/${f.taskId}/retry`, isolation: taskGone },
  { method: 'POST', path: '/api/v1/fulfilment/erasures', scope: 'admin', bearer: OWNER_ADMIN, url: () => '/api/v1/fulfilment/erasures', body: { dp_id: 'u-1', erase_at: '2030-01-01T00:00:00Z', reason: 'Your account has been closed for a year.' } },
  { method: 'GET', path: '/api/v1/fulfilment/tickets/:ticket_id', scope: 'grievances', bearer: ALL_ROLES, url: (f) => `/api/v1/fulfilment/tickets/${f.ticketId}`, isolation: ticketGone },
  { method: 'POST', path: '/api/v1/fulfilment/tickets/:ticket_id/start', scope: 'grievances', bearer: OWNER_ADMIN, url: (f) => `/api/v1/fulfilment/tickets/${f.ticketId}/start`, isolation: ticketGone },
  // The truConsent SDKs' code sign-in takes an `sdk` key (contract §8); its other routes are walked in sdk-replay.test.ts.
  { method: 'POST', path: '/api/v1/internal/rights-center-access/send-otp', scope: 'sdk', url: () => '/api/v1/internal/rights-center-access/send-otp', body: {}, lenientBody: true },
  { method: 'POST', path: '/api/v1/internal/rights-center-access/verify-otp', scope: 'sdk', url: () => '/api/v1/internal/rights-center-access/verify-otp', body: {}, lenientBody: true },
];

/** A scope that is not enough for the route, and the scope its 403 names (the narrower one). */
const WRONG_SCOPE: Record<Scope, string> = { grievances: 'consent', nominees: 'consent', consent: 'grievances', admin: 'consent', sdk: 'consent', fulfilment: 'consent' };

const KEY_REQUIRED = { error: 'API key required (X-API-Key header)', code: 'api_key_required' };
const INVALID_KEY = { error: 'Invalid API key', code: 'invalid_api_key' };
/** A key that is active in another organization than the host's: the same 401, with a hint that says where it works. */
const WRONG_HOST = { ...INVALID_KEY, hint: WRONG_HOST_HINT };
const BEARER_ONLY = { error: 'This endpoint takes a Bearer token (Authorization: Bearer <token>), not an API key', code: 'bearer_token_required' };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

let users = 0;
/** A new user with this role in the organization, logged in: their access token. */
async function login(orgId: string, role: 'owner' | 'admin' | 'member'): Promise<string> {
  const email = `user${++users}-${orgId.slice(-8)}@example.com`;
  const user = await t.app.services.users.createUser({ email, password: 'a long enough password' });
  await t.app.services.users.addMember(orgId, user.id, role);
  const res = await t.call({ method: 'POST', url: '/auth/login', body: { email, password: 'a long enough password' } });
  expect(res.statusCode).toBe(200);
  return res.json().access_token;
}

async function fixture(): Promise<Fixture> {
  const org = await t.tenant(['admin']);
  const post = async (url: string, body: object) => {
    const res = await t.call({ method: 'POST', url, org, key: org.key, body });
    expect(res.statusCode).toBe(201);
    return res.json();
  };
  // The data map first: the ticket (an access request) then gets a task for the system.
  const category = await post('/api/v1/data-categories', { key: 'contact', name: 'Contact details' });
  const system = await post('/api/v1/systems', { name: 'CRM', owner: 'Sales', category_ids: [category.id], can_access: true });
  const ticket = await post('/grievance', grievanceBody);
  const tasks = await t.call({ method: 'GET', url: `/api/v1/fulfilment/tickets/${ticket.ticket_id}`, org, key: org.key });
  expect(tasks.json().tasks).toHaveLength(1);
  const nominee = await post('/nominee', nomineeBody);
  // A verified nominee of an organization that lets nominees act: their token can be minted.
  expect((await t.call({ method: 'POST', url: `/api/v1/nominees/${nominee.id}/verify`, org, key: org.key })).statusCode).toBe(200);
  expect((await t.call({ method: 'PUT', url: '/api/v1/fulfilment/settings', org, key: org.key, body: { nominees_may_act: true } })).statusCode).toBe(200);
  const asset = await post('/api/v1/assets', { name: 'App', kind: 'mobile_app' });
  const point = await post('/api/v1/collection-points', {
    asset_id: asset.id,
    name: 'Sign-up',
    notice: 'We use your data to run your account.',
    purposes: [{ name: 'Account', required: true }, { name: 'Offers' }],
  });
  const link = await post(LINK, { asset_id: asset.id, collection_point_id: point.id, phone: '9876543210', dp_id: 'dp-1' });
  const consent = await post(`/consent/${point.id}/consent`, { dp_id: 'dp-1', purposes: point.purposes.map((p: { id: string }) => ({ id: p.id, granted: true })) });
  const spare = await t.app.services.accounts.createApiKey(org.slug, { name: 'spare' });
  // Inserted directly: hashing a password for every fixture would cost more than the whole fixture.
  const memberId = randomUUID();
  await t.db.system.query("insert into users (id, email, password_hash, created_at, password_changed_at) values ($1, $2, 'x', now(), now())", [memberId, `member-${org.slug}@example.com`]);
  await t.app.services.users.addMember(org.id, memberId, 'member');
  const webhook = await post('/api/v1/webhooks', { url: 'https://93.184.215.14/hook', events: ['grievance.created'] });
  const queued = await t.call({ method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, org, key: org.key });
  expect(queued.statusCode).toBe(202);
  const delivery = queued.json();
  const audit = await t.call({ method: 'GET', url: '/api/v1/audit-log?limit=1', org, key: org.key });
  expect(audit.statusCode).toBe(200);
  return {
    org,
    auditId: audit.json().data[0].id,
    webhookId: webhook.id,
    deliveryId: delivery.id,
    ticketId: ticket.ticket_id,
    nomineeId: nominee.id,
    assetId: asset.id,
    pointId: point.id,
    purposeIds: point.purposes.map((p: { id: string }) => p.id),
    requestId: link.request_id,
    keyId: spare.id,
    memberId,
    consentId: consent.consent_id,
    categoryId: category.id,
    systemId: system.id,
    taskId: tasks.json().tasks[0].id,
  };
}

test('meta: every registered tenant route is in the route table, and every table entry is registered', () => {
  const registered = t.app.routeAccess
    .filter((r) => r.access !== 'public' && !r.access.dataPrincipal)
    .map((r) => `${r.method} ${r.url}`)
    .sort();
  const table = ROUTES.map((r) => `${r.method} ${r.path}`).sort();
  expect(registered).toEqual(table);
});

test('meta: every tenant route declares the scope the table expects', () => {
  for (const r of ROUTES) {
    const entry = t.app.routeAccess.find((e) => e.method === r.method && e.url === r.path);
    expect((entry?.access as { apiKey?: string }).apiKey).toBe(r.scope ?? undefined);
    expect((entry?.access as { bearer?: readonly string[] }).bearer).toEqual(r.bearer);
  }
});

describe.each(ROUTES)('$method $path', (route) => {
  const bodyFor = (f: Fixture) => (typeof route.body === 'function' ? route.body(f) : route.body);
  const orgHeader = (slug: string): Record<string, string> => (route.orgHeader ? { 'x-org-id': slug } : {});
  // Bearer-only routes (scope null) answer any API key alone with the Bearer-only 401.
  const keyRefused = route.scope ? INVALID_KEY : BEARER_ONLY;
  const keyElsewhere = route.scope ? WRONG_HOST : BEARER_ONLY;
  /** Credentials that pass for the organization: its admin key, or (Bearer-only routes) an owner's token. */
  const goodCredentials = async (org: TestOrg & { key: string }): Promise<{ key?: string; headers?: Record<string, string> }> =>
    route.scope ? { key: org.key } : { headers: { authorization: `Bearer ${await login(org.id, 'owner')}` } };
  const send = (f: Fixture, opts: { host?: string; key?: string; headers?: Record<string, string>; body?: unknown }) =>
    t.call({
      method: route.method,
      url: route.url(f),
      org: opts.host ?? f.org.host,
      key: opts.key,
      headers: { ...orgHeader(f.org.slug), ...opts.headers },
      body: opts.body === undefined ? bodyFor(f) : opts.body,
    });

  test('§2 no credentials: 401 API key required', async () => {
    const f = await fixture();
    const res = await send(f, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(KEY_REQUIRED);
  });

  test('§2 an empty X-API-Key counts as missing', async () => {
    const f = await fixture();
    const res = await send(f, { key: '' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(KEY_REQUIRED);
  });

  if (!route.bearer) {
    test('§2 a Bearer token on an API-key endpoint counts as no API key', async () => {
      const f = await fixture();
      const token = await login(f.org.id, 'owner');
      const res = await send(f, { headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(KEY_REQUIRED);
    });
  }

  if (route.bearer) {
    const bearer = route.bearer;
    const withToken = (token: string) => ({ authorization: `Bearer ${token}` });

    test('§2 a Bearer token of an owner or admin is accepted', async () => {
      for (const role of bearer) {
        const f = await fixture();
        const res = await send(f, { headers: withToken(await login(f.org.id, role)) });
        expect([401, 403]).not.toContain(res.statusCode);
        expect(res.statusCode).toBeLessThan(500);
      }
    });

    // Only where the lowest role is refused: routes that members may read skip it.
    test.skipIf(bearer.includes('member'))('§2 role too low: 403 Your role does not allow this action', async () => {
      const f = await fixture();
      const res = await send(f, { headers: withToken(await login(f.org.id, 'member')) });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'Your role does not allow this action', code: 'role_forbidden' });
    });

    test('§5.6 a valid token of a non-member: 403 User not a member of this tenant', async () => {
      const f = await fixture();
      const other = await t.tenant();
      const res = await send(f, { headers: withToken(await login(other.id, 'owner')) });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
    });

    test('§3 a valid token on an unknown host: the non-member 403', async () => {
      const f = await fixture();
      const token = await login(f.org.id, 'owner');
      const res = await send(f, { host: 'no-such-org.localhost', headers: withToken(token) });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'User not a member of this tenant', code: 'not_a_member' });
    });

    test('§9 on the bare host a token selects with X-Org-Id: accepted for its member, 403 for another organization, 400 missing or unknown', async () => {
      const f = await fixture();
      const token = await login(f.org.id, bearer[0]!);
      const other = await t.tenant();
      const ok = await send(f, { host: 'localhost:3000', headers: { ...withToken(token), 'x-org-id': f.org.slug } });
      expect([401, 403]).not.toContain(ok.statusCode);
      expect(ok.statusCode).toBeLessThan(500);
      const elsewhere = await send(f, { host: 'localhost:3000', headers: { ...withToken(token), 'x-org-id': other.slug } });
      expect([elsewhere.statusCode, elsewhere.json()]).toEqual([403, { error: 'User not a member of this tenant', code: 'not_a_member' }]);
      const unknown = await send(f, { host: 'localhost:3000', headers: { ...withToken(token), 'x-org-id': 'no-such-org' } });
      expect([unknown.statusCode, unknown.json().code]).toEqual([400, 'org_header_unresolved']);
      const missing = await t.call({ method: route.method, url: route.url(f), org: 'localhost:3000', headers: withToken(token), body: bodyFor(f) });
      expect([missing.statusCode, missing.json().code]).toEqual([400, 'org_header_missing']);
    });

    test('§2 an unknown, malformed, expired or logged-out token: 401 Invalid or expired token', async () => {
      const f = await fixture();
      const token = await login(f.org.id, 'owner');
      for (const bad of ['nope', 'asa_' + 'A'.repeat(32)]) {
        const res = await send(f, { headers: withToken(bad) });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
      }
      const logout = await t.call({ method: 'POST', url: '/auth/logout', headers: withToken(token) });
      expect(logout.statusCode).toBe(204);
      const afterLogout = await send(f, { headers: withToken(token) });
      expect(afterLogout.statusCode).toBe(401);
      expect(afterLogout.json()).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
      const fresh = await login(f.org.id, 'owner');
      t.clock.advance(3600_000);
      const expired = await send(f, { headers: withToken(fresh) });
      t.clock.advance(-3600_000);
      expect(expired.statusCode).toBe(401);
      expect(expired.json()).toEqual({ error: 'Invalid or expired token', code: 'invalid_token' });
    });

    test('§2 an Authorization header that is not Bearer counts as no credentials', async () => {
      const f = await fixture();
      const res = await send(f, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(KEY_REQUIRED);
    });

    test.skipIf(!route.scope)('§2 when both are sent, the API key is used', async () => {
      const f = await fixture();
      const token = await login(f.org.id, 'owner');
      const res = await send(f, { key: 'wrong', headers: withToken(token) });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID_KEY);
    });
  }

  test('§2 a key that matches nothing: 401 Invalid API key', async () => {
    const f = await fixture();
    for (const key of ['nope', 'ask_live_' + 'A'.repeat(32)]) {
      const res = await send(f, { key });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(keyRefused);
    }
  });

  test("§1 another organization's valid key on this host: 401 Invalid API key", async () => {
    const f = await fixture();
    const other = await t.tenant(['admin']);
    const res = await send(f, { key: other.key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(keyElsewhere);
  });

  test('§1 an unknown organization host looks exactly like a wrong key', async () => {
    const f = await fixture();
    const withKey = await send(f, { host: 'no-such-org.localhost', key: f.org.key });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json()).toEqual(keyElsewhere);
    const nobodys = await send(f, { host: 'no-such-org.localhost', key: 'ask_live_' + 'A'.repeat(32) });
    expect(nobodys.json()).toEqual(keyRefused);
    const withoutKey = await send(f, { host: 'no-such-org.localhost' });
    expect(withoutKey.statusCode).toBe(401);
    expect(withoutKey.json()).toEqual(KEY_REQUIRED);
  });

  test('§9 on the bare host a key selects its own organization; no key, or a key that matches nothing: 401', async () => {
    const f = await fixture();
    const withKey = await send(f, { host: 'localhost:3000', key: f.org.key });
    if (route.scope) {
      expect([401, 403]).not.toContain(withKey.statusCode);
      expect(withKey.statusCode).toBeLessThan(500);
    } else expect(withKey.json()).toEqual(BEARER_ONLY);
    const wrongKey = await send(f, { host: 'localhost:3000', key: 'ask_live_' + 'A'.repeat(32) });
    expect(wrongKey.json()).toEqual(keyRefused);
    const withoutKey = await send(f, { host: 'localhost:3000' });
    expect(withoutKey.json()).toEqual(KEY_REQUIRED);
  });

  test("§9 on the bare host another organization's credentials never reach this organization's records", async () => {
    const f = await fixture();
    const other = await t.tenant(['admin']);
    const theirs = await goodCredentials(other);
    const res = await t.call({
      method: route.method,
      url: route.url(f),
      org: 'localhost:3000',
      key: theirs.key,
      headers: { 'x-org-id': other.slug, ...theirs.headers },
      body: bodyFor(f),
    });
    expect(res.statusCode).toBeLessThan(500);
    if (route.isolation && 'notFound' in route.isolation) expect(res.json()).toEqual({ error: route.isolation.notFound, code: 'not_found' });
    else if (route.isolation) expect(route.isolation.empty(res.json())).toBe(0);
    // Nothing of the first organization appears in the answer, whatever the route (but what the caller
    // sent itself, which some answers echo: the history's asset_id, a new member's email).
    const sent = route.url(f) + JSON.stringify(bodyFor(f) ?? '');
    for (const id of [f.org.id, f.org.slug, f.ticketId, f.nomineeId, f.assetId, f.pointId, f.requestId, f.keyId, f.memberId, f.webhookId, f.deliveryId, f.categoryId, f.systemId, f.taskId]) {
      if (!sent.includes(id)) expect(res.body).not.toContain(id);
    }
    // The first organization still sees its records as they were.
    if (route.isolation) {
      const own = await send(f, { ...(await goodCredentials(f.org)), body: route.method === 'GET' ? undefined : bodyFor(f) });
      expect([401, 403, 404]).not.toContain(own.statusCode);
    }
  });

  test.skipIf(!route.scope)('§2 a revoked key is refused at once, even when it was just used', async () => {
    const f = await fixture();
    const created = await t.app.services.accounts.createApiKey(f.org.slug, { scopes: [route.scope!] });
    const warm = await send(f, { key: created.key });
    expect([401, 403]).not.toContain(warm.statusCode);
    await t.app.services.accounts.revokeApiKey(f.org.slug, created.id);
    const res = await send(f, { key: created.key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID_KEY);
  });

  test.skipIf(!route.scope)('§2 a key without the scope: 403 naming the narrower scope', async () => {
    const f = await fixture();
    const key = await t.key(f.org, [WRONG_SCOPE[route.scope!]]);
    const res = await send(f, { key });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: `API key lacks the required scope: ${route.scope}`, code: 'missing_scope' });
  });

  test.skipIf(!route.scope)('§2 the endpoint scope alone is enough, and admin is enough', async () => {
    for (const scopes of [[route.scope!], ['admin']]) {
      const f = await fixture();
      const key = await t.key(f.org, scopes);
      const res = await send(f, { key });
      // Past authentication and scope; some routes then answer a 4xx of their own (409 on an active link).
      expect([401, 403]).not.toContain(res.statusCode);
      expect(res.statusCode).toBeLessThan(500);
    }
  });

  if (route.body) {
    test('§2 order: a bad body with a bad key is 401, never 400', async () => {
      const f = await fixture();
      const res = await send(f, { key: 'wrong', body: '{not json', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(keyRefused);
      const unknownField = await send(f, { body: { nope: 1 } });
      expect(unknownField.statusCode).toBe(401);
      expect(unknownField.json()).toEqual(KEY_REQUIRED);
    });

    test.skipIf(!route.scope)('§2 order: a bad body with a key lacking the scope is 403, never 400', async () => {
      const f = await fixture();
      const key = await t.key(f.org, [WRONG_SCOPE[route.scope!]]);
      const res = await send(f, { key, body: { nope: 1 } });
      expect(res.statusCode).toBe(403);
    });

    test('§2 order: a bad body with good credentials is 400', async () => {
      const f = await fixture();
      const res = await send(f, { ...(await goodCredentials(f.org)), body: { nope: 1 } });
      expect(res.statusCode).toBe(400);
      if (route.lenientBody) expect(res.json().details.map((d: { field: string }) => d.field)).not.toContain('nope');
      else expect(res.json().details).toContainEqual({ field: 'nope', message: 'is not an accepted field' });
    });
  }

  if (route.orgHeader) {
    test('§1 X-Org-Id missing, unknown or naming another organization: 400, missing and wrong told apart', async () => {
      const f = await fixture();
      const other = await t.tenant(['admin']);
      const wrong = { error: 'X-Org-Id could not be resolved: it does not name the organization of this host', code: 'org_header_unresolved' };
      const absent = { error: "X-Org-Id could not be resolved: the header is missing (send the organization's slug)", code: 'org_header_missing' };
      for (const headers of [{ 'x-org-id': 'no-such-org' }, { 'x-org-id': other.slug }]) {
        const res = await send(f, { key: f.org.key, headers });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual(wrong);
      }
      const empty = await send(f, { key: f.org.key, headers: { 'x-org-id': '' } });
      expect([empty.statusCode, empty.json()]).toEqual([400, absent]);
      const missing = await t.call({ method: route.method, url: route.url(f), org: f.org, key: f.org.key });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual(absent);
    });

    test('§3 the host check comes before X-Org-Id: an unknown host never answers 400', async () => {
      const f = await fixture();
      const res = await send(f, { host: 'no-such-org.localhost', key: f.org.key, headers: { 'x-org-id': 'whatever' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(WRONG_HOST);
    });

    test('§2 order: tenant address -> X-Org-Id (400) -> credentials: a missing or foreign X-Org-Id with no or bad credentials is a 400, not a 401', async () => {
      const f = await fixture();
      const other = await t.tenant(['admin']);
      const wrong = { error: 'X-Org-Id could not be resolved: it does not name the organization of this host', code: 'org_header_unresolved' };
      const absent = { error: "X-Org-Id could not be resolved: the header is missing (send the organization's slug)", code: 'org_header_missing' };
      for (const creds of [{}, { key: 'ask_live_' + 'x'.repeat(32) }, { key: other.key }, { headers: { authorization: 'Bearer asa_wrong' } }]) {
        for (const slug of ['no-such-org', other.slug]) {
          const res = await send(f, { ...creds, headers: { ...('headers' in creds ? creds.headers : {}), 'x-org-id': slug } });
          expect([res.statusCode, res.json()], JSON.stringify(creds)).toEqual([400, wrong]);
        }
        const missing = await t.call({ method: route.method, url: route.url(f), org: f.org, ...creds });
        expect([missing.statusCode, missing.json()], JSON.stringify(creds)).toEqual([400, absent]);
      }
      // With X-Org-Id right, the credentials decide as on every route.
      const none = await send(f, { headers: { 'x-org-id': f.org.slug } });
      expect(none.statusCode).toBe(401);
    });
  }

  if (route.isolation) {
    const isolation = route.isolation;
    test("§3 another organization's records are invisible: 404 like ids that never existed, or an empty list", async () => {
      const f = await fixture();
      const other = await t.tenant(['admin']);
      const theirs = await goodCredentials(other);
      const res = await t.call({
        method: route.method,
        url: route.url(f),
        org: other,
        key: theirs.key,
        headers: { ...orgHeader(other.slug), ...theirs.headers },
        body: bodyFor(f),
      });
      if ('notFound' in isolation) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ error: isolation.notFound, code: 'not_found' });
      } else {
        expect(res.statusCode).toBe(200);
        expect(isolation.empty(res.json())).toBe(0);
      }
      // The owner still sees its records as they were.
      const own = await send(f, { ...(await goodCredentials(f.org)), body: route.method === 'GET' ? undefined : bodyFor(f) });
      expect([401, 403, 404]).not.toContain(own.statusCode);
    });
  }
});
