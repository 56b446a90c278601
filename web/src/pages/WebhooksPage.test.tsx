// Settings → Webhooks against a stubbed API: add an endpoint (the body sent, the secret shown once),
// send a test event, open its deliveries and retry one, rotate the secret.
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Webhooks } from './WebhooksPage';

interface Call {
  method: string;
  path: string;
  body: unknown;
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const at = '2026-11-22T09:30:00.000Z';
const endpoint = {
  id: '0193a1c2-0000-7000-8000-000000000001',
  url: 'https://hooks.example.com/assent',
  description: null,
  events: ['grievance.created'],
  enabled: true,
  disabled_reason: null,
  disabled_at: null,
  created_at: at,
  updated_at: at,
};
const delivery = {
  id: '0193a1c2-0000-7000-8000-0000000000d1',
  endpoint_id: endpoint.id,
  event_id: '0193a1c2-0000-7000-8000-0000000000e1',
  event_type: 'webhook.test',
  status: 'failed',
  attempts: 3,
  next_attempt_at: null,
  last_attempt_at: at,
  last_response_status: 500,
  last_error: 'answered 500',
  delivered_at: null,
  created_at: at,
};

let calls: Call[];
let endpoints: unknown[];

beforeEach(() => {
  calls = [];
  endpoints = [];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const path = new URL(req.url).pathname;
    const text = await req.text();
    calls.push({ method: req.method, path, body: text ? JSON.parse(text) : undefined });
    const base = `/api/v1/webhooks`;
    if (req.method === 'GET' && path === base) return json(200, { data: endpoints });
    if (req.method === 'POST' && path === base) {
      endpoints = [endpoint];
      return json(201, { ...endpoint, secret: 'whsec_first' });
    }
    if (req.method === 'POST' && path === `${base}/${endpoint.id}/test`) return json(202, { ...delivery, status: 'pending', attempts: 0 });
    if (req.method === 'GET' && path === `${base}/${endpoint.id}/deliveries`) return json(200, { data: [delivery], count: 1, limit: 50, offset: 0 });
    if (req.method === 'GET' && path === `${base}/${endpoint.id}/deliveries/${delivery.id}/attempts`) {
      const attempt = (n: number, status: number | null, error: string | null) => ({ attempt: n, attempted_at: at, duration_ms: 12 * n, response_status: status, error });
      return json(200, { delivery, attempts: [attempt(1, null, 'request failed: ECONNREFUSED'), attempt(2, 500, 'answered 500'), attempt(3, 500, 'answered 500')] });
    }
    if (req.method === 'POST' && path === `${base}/${endpoint.id}/deliveries/${delivery.id}/retry`) return json(202, { ...delivery, status: 'pending' });
    if (req.method === 'POST' && path === `${base}/${endpoint.id}/rotate-secret`) return json(200, { ...endpoint, secret: 'whsec_second' });
    return json(404, { error: 'not stubbed', code: 'route_not_found' });
  });
});
afterEach(() => vi.unstubAllGlobals());

describe('Webhooks page', () => {
  test('add an endpoint, see the secret once, send a test, retry a delivery, rotate', async () => {
    render(<Webhooks />);
    const user = userEvent.setup();
    expect(await screen.findByText('No endpoints yet.')).toBeTruthy();

    await user.type(screen.getByLabelText('URL'), endpoint.url);
    await user.click(screen.getByLabelText('grievance.created'));
    await user.click(screen.getByRole('button', { name: 'Add endpoint' }));
    expect((await screen.findByTestId('webhook-secret')).textContent).toBe('whsec_first');
    expect(calls.find((c) => c.method === 'POST' && c.path === '/api/v1/webhooks')!.body).toEqual({ url: endpoint.url, events: ['grievance.created'] });
    await user.click(screen.getByRole('button', { name: 'I have stored it' }));
    expect(screen.queryByTestId('webhook-secret')).toBeNull();

    const row = (await screen.findByText(endpoint.url)).closest('tr')!;
    await user.click(within(row).getByRole('button', { name: 'Send test event' }));
    expect(await screen.findByText('A test event was queued; it appears in the deliveries below.')).toBeTruthy();
    expect(await screen.findByText('answered 500')).toBeTruthy();
    // Every attempt of a delivery, not only the last.
    await user.click(screen.getByRole('button', { name: /^Attempts\s*webhook\.test$/ }));
    const log = await screen.findByRole('table', { name: /^Attempts of the webhook\.test delivery of / });
    const rows = within(log).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell').map((c) => c.textContent)[0])).toEqual(['1', '2', '3']);
    expect(within(rows[0]!).getByText('No answer')).toBeTruthy();
    expect(within(rows[0]!).getByText('request failed: ECONNREFUSED')).toBeTruthy();
    expect(within(rows[2]!).getByText('36 ms')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: /^Retry\s*webhook\.test$/ }));
    expect(await screen.findByText('The delivery will be sent again shortly.')).toBeTruthy();
    expect(calls.some((c) => c.method === 'POST' && c.path.endsWith(`/deliveries/${delivery.id}/retry`))).toBe(true);

    await user.click(within(row).getByRole('button', { name: 'Rotate secret' }));
    expect((await screen.findByTestId('webhook-secret')).textContent).toBe('whsec_second');
  });
});
