// A ticket's conversation and due date in the dashboard, against a stubbed API: the messages shown oldest
// first with who wrote them, a reply sent as `{message}` and shown after the reload, an error kept in the
// form; the due date with the days left or late and the "Overdue" label.
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Conversation } from './GrievancePage';
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
