// A ticket's statutory clock (contract §10): its due date, the days left or late, and an "Overdue" label
// (text, never colour alone). While on hold the clock stands still; an answered ticket has none.
import { useMessages } from '../i18n';
import { formatDate } from '../lib/format';

export interface Clocked {
  status: string;
  due_at: string;
  days_left?: number | null;
  overdue?: boolean;
}

export function OverdueBadge() {
  const m = useMessages();
  return <span className="badge badge-overdue">{m.grievances.overdue}</span>;
}

export function DueDate({ ticket }: { ticket: Clocked }) {
  const m = useMessages();
  const left = ticket.days_left ?? null;
  const state =
    left === null
      ? m.grievances.finished
      : ticket.overdue
        ? m.grievances.daysLate(Math.abs(left))
        : left === 0
          ? m.grievances.dueToday
          : m.grievances.daysLeft(left);
  return (
    <span className="due">
      <time dateTime={ticket.due_at}>{formatDate(ticket.due_at)}</time> <span className="muted">({state}{ticket.status === 'on_hold' ? `; ${m.grievances.paused}` : ''})</span>
      {ticket.overdue ? (
        <>
          {' '}
          <OverdueBadge />
        </>
      ) : null}
    </span>
  );
}
