// The Fulfilment page's settings against a stubbed API: the organization's choices shown as stored, and
// saved with the change (a verified nominee may act for the person).
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { SettingsForm } from './FulfilmentPage';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
let stored: { erase_on_withdrawal: boolean; nominees_may_act: boolean };
let put: unknown[];
beforeEach(() => {
  stored = { erase_on_withdrawal: true, nominees_may_act: false };
  put = [];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    if (new URL(req.url).pathname !== '/api/v1/fulfilment/settings') return json(404, { error: 'not stubbed', code: 'route_not_found' });
    if (req.method === 'PUT') {
      const body = JSON.parse(await req.text());
      put.push(body);
      stored = { ...stored, ...body };
    }
    return json(200, stored);
  });
});
afterEach(() => vi.unstubAllGlobals());

test('the fulfilment settings: shown as stored, saved with the change', async () => {
  render(<SettingsForm />);
  const user = userEvent.setup();
  const nominees = (await screen.findByLabelText(/A verified nominee may act for the person who appointed them/)) as HTMLInputElement;
  expect(nominees.checked).toBe(false);
  expect((screen.getByLabelText(/A consent withdrawal starts erasure/) as HTMLInputElement).checked).toBe(true);
  await user.click(nominees);
  await user.click(screen.getByRole('button', { name: 'Save' }));
  expect(await screen.findByText('Saved.')).toBeTruthy();
  expect(put).toEqual([{ erase_on_withdrawal: true, nominees_may_act: true }]);
  expect(nominees.checked).toBe(true);
});
