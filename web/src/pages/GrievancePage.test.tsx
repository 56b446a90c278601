// A ticket's conversation, due date and fulfilment in the dashboard, against a stubbed API: the messages
// shown oldest first with who wrote them, a reply sent as `{message}` and shown after the reload, an error
// kept in the form; the due date with the days left or late and the "Overdue" label; the request's tasks
// with what blocks each, its transitions with who acted, and a failed task retried by an owner or admin.
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Conversation, TicketFulfilmentPanel } from './GrievancePage';
import { DueDate } from '../components/DueDate';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const message = (n: number, sender: string, text: string) => ({
  id: `0193a1c2-0000-7000-8000-00000000000${n}`,
  sender,
  message: text,
  created_at: `2026-11-2${n}T09:30:00.000Z`,
  attachment_url: null,
});

let posted: unknown[];
let stored: ReturnType<typeof message>[];
beforeEach(() => {
  posted = [];
  stored = [message(1, 'user', 'Please send me my data.'), message(2, 'system', 'Status changed from open to in progress')];
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const path = new URL(req.url).pathname;
    if (path !== '/grievance/GRV-ABCD1234/messages') return json(404, { error: 'not stubbed', code: 'route_not_found' });
    if (req.method === 'POST') {
      const body = JSON.parse(await req.text()) as { message: string };
      posted.push(body);
      if (body.message.includes('fail')) return json(400, { error: 'body/message must be shorter', code: 'validation_failed', details: [{ field: 'message', message: 'is too long' }] });
      const added = message(3, 'agent', body.message);
      stored = [...stored, added];
      return json(201, added);
    }
    return json(200, stored);
  });
});
afterEach(() => vi.unstubAllGlobals());

describe('the conversation on a ticket', () => {
  test('reads the messages, oldest first, with their sender; a reply is sent and appears', async () => {
    render(<Conversation ticketId="GRV-ABCD1234" />);
    const user = userEvent.setup();
    expect(await screen.findByText('Please send me my data.')).toBeTruthy();
    const items = screen.getAllByRole('listitem');
    expect(items.map((li) => li.querySelector('strong')!.textContent)).toEqual(['Data principal', 'System']);

    await user.type(screen.getByLabelText('Message'), 'Your copy is attached to your account.');
    await user.click(screen.getByRole('button', { name: 'Send reply' }));
    expect(await screen.findByText('Your reply is on the ticket.')).toBeTruthy();
    expect(posted).toEqual([{ message: 'Your copy is attached to your account.' }]);
    expect(await screen.findByText('Your copy is attached to your account.')).toBeTruthy();
    expect(screen.getAllByRole('listitem').map((li) => li.querySelector('strong')!.textContent)).toEqual(['Data principal', 'System', 'Organization']);
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).value).toBe('');
  });

  test("the API's refusal is shown on the form, and the text is kept", async () => {
    render(<Conversation ticketId="GRV-ABCD1234" />);
    const user = userEvent.setup();
    await screen.findByText('Please send me my data.');
    await user.type(screen.getByLabelText('Message'), 'this will fail');
    await user.click(screen.getByRole('button', { name: 'Send reply' }));
    expect(await screen.findByText(/is too long/)).toBeTruthy();
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).value).toBe('this will fail');
    expect(screen.queryByText('Your reply is on the ticket.')).toBeNull();
  });
});

describe('a due date', () => {
  test('days left, days late with the Overdue label, paused, answered', () => {
    const { container, rerender } = render(<DueDate ticket={{ status: 'open', due_at: '2026-12-22T09:30:00.000Z', days_left: 3, overdue: false }} />);
    expect(container.textContent).toContain('3 days left');
    expect(screen.queryByText('Overdue')).toBeNull();
    rerender(<DueDate ticket={{ status: 'in_progress', due_at: '2026-11-20T09:30:00.000Z', days_left: -2, overdue: true }} />);
    expect(container.textContent).toContain('2 days late');
    expect(screen.getByText('Overdue').className).toContain('badge-overdue');
    rerender(<DueDate ticket={{ status: 'on_hold', due_at: '2026-12-22T09:30:00.000Z', days_left: 1, overdue: false }} />);
    expect(container.textContent).toContain('1 day left; clock paused (on hold)');
    rerender(<DueDate ticket={{ status: 'resolved', due_at: '2026-12-22T09:30:00.000Z', days_left: null, overdue: false }} />);
    expect(container.textContent).toContain('answered');
    expect(container.querySelector('time')!.getAttribute('datetime')).toBe('2026-12-22T09:30:00.000Z');
  });
});

describe("a request's fulfilment on its ticket", () => {
  const at = (min: number) => `2026-11-22T09:${String(min).padStart(2, '0')}:00.000Z`;
  const task = (id: string, system: string, extra: object) => ({
    id,
    ticket_id: 'GRV-ABCD1234',
    system_id: `${id}-system`,
    system_name: system,
    kind: 'access',
    mode: 'automatic',
    status: 'queued',
    dp_id: 'dp-42',
    category_keys: ['contact'],
    holds: [],
    attempts: 0,
    lease_expires_at: null,
    not_before: null,
    result: null,
    failure_reason: null,
    created_at: at(0),
    updated_at: at(1),
    completed_at: null,
    blocked_by: null,
    ...extra,
  });
  let retried: string[];
  let crmStatus: string;
  beforeEach(() => {
    retried = [];
    crmStatus = 'failed';
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(input, init);
      const path = new URL(req.url).pathname;
      if (req.method === 'POST' && path === '/api/v1/fulfilment/tasks/t-crm/retry') {
        retried.push(path);
        crmStatus = 'queued';
        return json(200, task('t-crm', 'CRM', { status: 'queued' }));
      }
      if (path !== '/api/v1/fulfilment/tickets/GRV-ABCD1234') return json(404, { error: 'not stubbed', code: 'route_not_found' });
      const crm =
        crmStatus === 'failed'
          ? task('t-crm', 'CRM', { status: 'failed', attempts: 1, failure_reason: 'Export timed out', blocked_by: 'Failed: Export timed out. Retry it once the cause is fixed.' })
          : task('t-crm', 'CRM', { status: 'queued', attempts: 1, blocked_by: 'Waits for CRM to take it.' });
      const paper = task('t-paper', 'Paper files', { mode: 'manual', blocked_by: 'Waits for a member to do it in Paper files and report it done.' });
      const step = (taskId: string, action: string, actor: object, detail: string | null, min: number) => ({ task_id: taskId, system_id: `${taskId}-system`, action, status: 'queued', actor, detail, at: at(min) });
      return json(200, {
        ticket_id: 'GRV-ABCD1234',
        status: 'waiting',
        tasks: [crm, paper],
        transitions: [
          step('t-crm', 'created', { type: 'nominee', id: '0193a1c2-0000-7000-8000-00000000abcd' }, null, 0),
          step('t-paper', 'created', { type: 'nominee', id: '0193a1c2-0000-7000-8000-00000000abcd' }, null, 0),
          step('t-crm', 'failed', { type: 'api_key', id: '0193a1c2-0000-7000-8000-00000000beef' }, 'Export timed out', 2),
        ],
        parts: [],
        retention_holds: [],
        package: null,
      });
    });
  });

  test('the tasks with what blocks each, every transition with who acted; an owner retries a failed task', async () => {
    render(<TicketFulfilmentPanel ticketId="GRV-ABCD1234" manager />);
    const user = userEvent.setup();
    const tasks = await screen.findByRole('table', { name: 'Tasks of this request' });
    expect(screen.getByText('Fulfilment: waiting (a task failed or waits for a member)')).toBeTruthy();
    const crmRow = within(tasks).getByText('CRM').closest('tr')!;
    expect(within(crmRow).getByText('Failed: Export timed out. Retry it once the cause is fixed.')).toBeTruthy();
    expect(within(tasks).getByText('Waits for a member to do it in Paper files and report it done.')).toBeTruthy();
    expect(within(tasks).getByText('Access · manual')).toBeTruthy();
    const steps = within(screen.getByRole('table', { name: 'Task transitions of this request, oldest first' })).getAllByRole('row').slice(1);
    expect(steps.map((r) => within(r).getAllByRole('cell').slice(1).map((c) => c.textContent))).toEqual([
      ['CRM', 'Created', 'Nominee 0193a1c2…abcd', ''],
      ['Paper files', 'Created', 'Nominee 0193a1c2…abcd', ''],
      ['CRM', 'Failed', 'API key 0193a1c2…beef', 'Export timed out'],
    ]);
    // Only the failed task offers a retry.
    expect(within(tasks).getAllByRole('button').length).toBe(1);
    await user.click(within(crmRow).getByRole('button', { name: /^Retry\s*the CRM task of GRV-ABCD1234$/ }));
    expect(await screen.findByText('The CRM task of GRV-ABCD1234 is back in the queue.')).toBeTruthy();
    expect(retried).toEqual(['/api/v1/fulfilment/tasks/t-crm/retry']);
    expect(await screen.findByText('Waits for CRM to take it.')).toBeTruthy();
  });

  test('a member reads it, with no retry', async () => {
    render(<TicketFulfilmentPanel ticketId="GRV-ABCD1234" manager={false} />);
    const tasks = await screen.findByRole('table', { name: 'Tasks of this request' });
    expect(within(tasks).getByText('Failed: Export timed out. Retry it once the cause is fixed.')).toBeTruthy();
    expect(within(tasks).queryByRole('button')).toBeNull();
  });
});
