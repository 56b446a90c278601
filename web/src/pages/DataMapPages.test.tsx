// The data map's pages against a stubbed API: Data categories (declare, edit, delete; a refused delete
// shown) and Systems (register with its categories and what it answers, edit, archive after a
// confirmation, make it active again, its key shown once); a member reads both and changes nothing.
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { DataCategories } from './DataCategoriesPage';
import { Systems } from './SystemsPage';

interface Call {
  method: string;
  path: string;
  body: unknown;
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const at = '2026-11-22T09:30:00.000Z';
const contact = {
  id: '0193a1c2-0000-7000-8000-0000000000c1',
  key: 'contact',
  name: 'Contact details',
  description: null,
  purposes: ['Account', 'Support'],
  retention_days: null,
  retention_basis: null,
  created_at: at,
  updated_at: at,
};
const logs = { ...contact, id: '0193a1c2-0000-7000-8000-0000000000c2', key: 'traffic_logs', name: 'Traffic logs', purposes: ['Security'], retention_days: 365, retention_basis: 'DPDP Rule 8(3)' };
const crm = {
  id: '0193a1c2-0000-7000-8000-0000000000s1',
  name: 'CRM',
  owner: 'Sales ops',
  description: null,
  category_ids: [contact.id],
  processors: ['MailCo'],
  can_access: true,
  can_correct: false,
  can_erase: true,
  status: 'active',
  created_at: at,
  updated_at: at,
};

let calls: Call[];
let categories: (typeof contact | typeof logs)[];
let systems: (typeof crm)[];

const page = <T,>(data: T[]) => ({ data, count: data.length, limit: 50, offset: 0 });

beforeAll(() => {
  // jsdom has no modal dialogs: opening one sets `open`, as a browser does.
  HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
    this.setAttribute('open', '');
  };
  HTMLDialogElement.prototype.close = function (this: HTMLDialogElement) {
    this.removeAttribute('open');
  };
});

beforeEach(() => {
  calls = [];
  categories = [contact, logs];
  systems = [crm];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const path = new URL(req.url).pathname;
    const text = await req.text();
    const body = text ? JSON.parse(text) : undefined;
    calls.push({ method: req.method, path, body });
    if (path === '/api/v1/data-categories') {
      if (req.method === 'GET') return json(200, page(categories));
      const created = { ...contact, ...body, id: '0193a1c2-0000-7000-8000-0000000000c3', description: body.description ?? null };
      categories = [...categories, created];
      return json(201, created);
    }
    const category = /^\/api\/v1\/data-categories\/(.+)$/.exec(path);
    if (category) {
      const found = categories.find((c) => c.id === category[1])!;
      if (req.method === 'DELETE') {
        if (systems.some((s) => s.category_ids.includes(found.id))) return json(409, { error: 'A system holds this data category: remove it from the system first', code: 'conflict' });
        categories = categories.filter((c) => c !== found);
        return json(200, { message: 'Data category deleted' });
      }
      const changed = { ...found, ...body };
      categories = categories.map((c) => (c === found ? changed : c));
      return json(200, changed);
    }
    if (path === '/api/v1/systems') {
      if (req.method === 'GET') return json(200, page(systems));
      const created = { ...crm, ...body, id: '0193a1c2-0000-7000-8000-0000000000s2', status: 'active' };
      systems = [...systems, created];
      return json(201, created);
    }
    const key = /^\/api\/v1\/systems\/(.+)\/keys$/.exec(path);
    if (key) return json(201, { id: '0193a1c2-0000-7000-8000-0000000000k1', key: 'ask_live_systemkeyshownonce000000000', prefix: 'ask_live_sys', name: 'System: CRM', scopes: ['fulfilment'], system_id: key[1], created_at: at });
    const system = /^\/api\/v1\/systems\/(.+)$/.exec(path);
    if (system && req.method === 'PATCH') {
      const changed = { ...systems.find((s) => s.id === system[1])!, ...body };
      systems = systems.map((s) => (s.id === system[1] ? changed : s));
      return json(200, changed);
    }
    return json(404, { error: 'not stubbed', code: 'route_not_found' });
  });
});
afterEach(() => vi.unstubAllGlobals());

const sent = (method: string, path: string) => calls.filter((c) => c.method === method && c.path === path).map((c) => c.body);

describe('Data categories', () => {
  test('declare one, edit one, and a delete the API refuses is shown', async () => {
    render(<DataCategories manager />);
    const user = userEvent.setup();
    const table = await screen.findByRole('table', { name: 'Data categories' });
    expect(within(table).getByText('365 days: DPDP Rule 8(3)')).toBeTruthy();
    expect(within(table).getByText('Account, Support')).toBeTruthy();

    await user.type(screen.getByLabelText('Key'), 'payments');
    await user.type(screen.getByLabelText('Name'), 'Payment details');
    await user.type(screen.getByLabelText('Purposes'), 'Billing\n\nRefunds');
    await user.click(screen.getByRole('button', { name: 'Declare the category' }));
    expect(await screen.findByText('The category Payment details is declared.')).toBeTruthy();
    expect(sent('POST', '/api/v1/data-categories')).toEqual([
      { key: 'payments', name: 'Payment details', description: null, purposes: ['Billing', 'Refunds'], retention_days: null, retention_basis: null },
    ]);

    await user.click(screen.getByRole('button', { name: /^Edit\s*the category Traffic logs$/ }));
    const name = screen.getByLabelText('Name') as HTMLInputElement;
    expect(name.value).toBe('Traffic logs');
    expect((screen.getByLabelText('Kept for (days)') as HTMLInputElement).value).toBe('365');
    expect(screen.queryByLabelText('Key')).toBeNull();
    await user.clear(screen.getByLabelText('Kept for (days)'));
    await user.type(screen.getByLabelText('Kept for (days)'), '730');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('The category Traffic logs is saved.')).toBeTruthy();
    expect(sent('PATCH', `/api/v1/data-categories/${logs.id}`)).toEqual([
      { name: 'Traffic logs', description: null, purposes: ['Security'], retention_days: 730, retention_basis: 'DPDP Rule 8(3)' },
    ]);

    // CRM holds Contact details: the API refuses, and says why.
    await user.click(screen.getByRole('button', { name: /^Delete\s*the category Contact details$/ }));
    const dialog = screen.getByRole('dialog', { name: 'Delete the category Contact details?' });
    await user.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('A system holds this data category: remove it from the system first')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: /^Delete\s*the category Traffic logs$/ }));
    await user.click(within(screen.getByRole('dialog', { name: 'Delete the category Traffic logs?' })).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('The category Traffic logs is deleted.')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual([`/api/v1/data-categories/${contact.id}`, `/api/v1/data-categories/${logs.id}`]);
  });

  test('a member reads, and is offered no change', async () => {
    render(<DataCategories manager={false} />);
    await screen.findByRole('table', { name: 'Data categories' });
    expect(screen.queryByRole('button', { name: /Edit|Delete|Declare/ })).toBeNull();
    expect(screen.queryByLabelText('Name')).toBeNull();
  });
});

describe('Systems', () => {
  test('register one with its categories and what it answers, edit, archive after a confirmation, make active again, make its key', async () => {
    render(<Systems manager />);
    const user = userEvent.setup();
    const table = await screen.findByRole('table', { name: 'Systems' });
    const row = within(table).getByText('CRM').closest('tr')!;
    expect(await within(row).findByText('Contact details')).toBeTruthy();
    expect(within(row).getByText('Access requests, Erasure requests')).toBeTruthy();

    await user.type(screen.getByLabelText('Name'), 'Billing');
    await user.type(screen.getByLabelText('Owner'), 'Finance');
    await user.click(screen.getByLabelText('Traffic logs'));
    await user.type(screen.getByLabelText('Processors'), 'PayCo\nMailCo');
    await user.click(screen.getByLabelText('Erasure requests'));
    await user.click(screen.getByRole('button', { name: 'Register the system' }));
    expect(await screen.findByText('The system Billing is registered.')).toBeTruthy();
    expect(sent('POST', '/api/v1/systems')).toEqual([
      { name: 'Billing', owner: 'Finance', description: null, category_ids: [logs.id], processors: ['PayCo', 'MailCo'], can_access: false, can_correct: false, can_erase: true },
    ]);

    await user.click(screen.getByRole('button', { name: /^Edit\s*the system CRM$/ }));
    expect((screen.getByLabelText('Owner') as HTMLInputElement).value).toBe('Sales ops');
    expect((screen.getByLabelText('Contact details') as HTMLInputElement).checked).toBe(true);
    await user.click(screen.getByLabelText('Correction requests'));
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByText('The system CRM is saved.')).toBeTruthy();
    expect(sent('PATCH', `/api/v1/systems/${crm.id}`)).toEqual([
      { name: 'CRM', owner: 'Sales ops', description: null, category_ids: [contact.id], processors: ['MailCo'], can_access: true, can_correct: true, can_erase: true },
    ]);

    await user.click(screen.getByRole('button', { name: /^Archive\s*the system CRM$/ }));
    await user.click(within(screen.getByRole('dialog', { name: 'Archive CRM?' })).getByRole('button', { name: 'Archive' }));
    expect(await screen.findByText('The system CRM is archived: it gets no new tasks.')).toBeTruthy();
    expect(sent('PATCH', `/api/v1/systems/${crm.id}`).at(-1)).toEqual({ status: 'archived' });
    await user.click(await screen.findByRole('button', { name: /^Make active\s*the system CRM$/ }));
    expect(await screen.findByText('The system CRM is active again.')).toBeTruthy();
    expect(sent('PATCH', `/api/v1/systems/${crm.id}`).at(-1)).toEqual({ status: 'active' });

    await user.click(await screen.findByRole('button', { name: /^Create a key\s*for the system CRM$/ }));
    expect((await screen.findByTestId('system-key')).textContent).toBe('ask_live_systemkeyshownonce000000000');
    expect(screen.queryByRole('button', { name: 'Register the system' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'I have stored it' }));
    expect(screen.queryByTestId('system-key')).toBeNull();
    expect(screen.getByRole('button', { name: 'Register the system' })).toBeTruthy();
  });

  test('a member reads, and is offered no change', async () => {
    render(<Systems manager={false} />);
    const table = await screen.findByRole('table', { name: 'Systems' });
    expect(within(table).getByText('Sales ops')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /Edit|Archive|Create a key|Register/ })).toBeNull();
  });
});
