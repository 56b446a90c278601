// Settings → Rights Center against a stubbed API: the stored settings fill the form, and saving sends
// every field with the changes made (sign-in by one-time code, a button colour, a section hidden).
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { RightsCenterSettings } from './RightsCenterSettingsPage';

const stored = {
  access_mode: 'sso',
  background_color: '#020617',
  primary_text_color: '#e5e7eb',
  secondary_text_color: '#9ca3af',
  button_color: '#65a30d',
  button_text_color: '#0b1120',
  font_family: 'sans-serif',
  show_consents_section: true,
  show_rights_section: true,
  show_nominees_section: true,
  show_transparency_section: false,
  show_dpo_section: false,
  show_grievance_section: true,
  grievance_mode: 'truconsent',
  grievance_external_url: '',
  consents_section_title: 'Consents',
  rights_section_title: 'Your Data Rights',
  nominees_section_title: 'Nominees',
  transparency_description: '',
  dpo_qualifications_enabled: true,
  dpo_responsibilities_enabled: true,
  dpo_working_hours_enabled: true,
  dpo_response_time_enabled: true,
};

let patched: unknown[];
let originsPatched: unknown[];
let origins: string[];
beforeEach(() => {
  patched = [];
  originsPatched = [];
  origins = ['https://shop.example.com'];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const path = new URL(req.url).pathname;
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (path === '/api/v1/organization') {
      if (req.method !== 'PATCH') return json(200, { allowed_origins: origins });
      const body = JSON.parse(await req.text());
      originsPatched.push(body);
      const bad = body.allowed_origins.findIndex((o: string) => !/^https?:\/\/[^/]+$/.test(o));
      if (bad >= 0) {
        return json(400, { error: 'Invalid request body', code: 'validation_failed', details: [{ field: `allowed_origins.${bad}`, message: 'must be an origin' }] });
      }
      origins = body.allowed_origins;
      return json(200, { allowed_origins: origins });
    }
    if (path !== '/api/v1/organization/rights-center-settings') return json(404, { error: 'not stubbed', code: 'route_not_found' });
    if (req.method === 'PATCH') {
      const body = JSON.parse(await req.text());
      patched.push(body);
      return json(200, body);
    }
    return json(200, stored);
  });
});
afterEach(() => vi.unstubAllGlobals());

test('Rights Center settings: shown as stored, saved with the changes', async () => {
  render(<RightsCenterSettings />);
  const user = userEvent.setup();
  const signIn = (await screen.findByLabelText('Sign-in')) as HTMLSelectElement;
  expect(signIn.value).toBe('sso');
  expect((screen.getByLabelText('Buttons') as HTMLInputElement).value).toBe('#65a30d');
  await user.selectOptions(signIn, 'non_sso');
  await user.click(screen.getByLabelText('Nominees'));
  await user.click(screen.getAllByRole('button', { name: 'Save' })[0]!);
  expect(await screen.findByText('Saved.')).toBeTruthy();
  expect(patched).toEqual([{ ...stored, access_mode: 'non_sso', show_nominees_section: false }]);
  expect(originsPatched).toEqual([]);
});

test('Allowed browser origins: shown one per line, saved as a list, a bad one shown at its field', async () => {
  render(<RightsCenterSettings />);
  const user = userEvent.setup();
  const box = (await screen.findByLabelText('Origins, one per line')) as HTMLTextAreaElement;
  expect(box.value).toBe('https://shop.example.com');
  await user.type(box, '\nhttp://localhost:5173');
  await user.click(screen.getAllByRole('button', { name: 'Save' })[1]!);
  expect(await screen.findByText('Saved.')).toBeTruthy();
  expect(originsPatched).toEqual([{ allowed_origins: ['https://shop.example.com', 'http://localhost:5173'] }]);
  await user.clear(box);
  await user.type(box, 'https://shop.example.com/path');
  await user.click(screen.getAllByRole('button', { name: 'Save' })[1]!);
  expect(await screen.findByText('must be an origin')).toBeTruthy();
  expect(patched).toEqual([]);
});
