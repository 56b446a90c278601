// One ticket: its details with its due date, a status change with a note (owners and admins), its
// fulfilment (the tasks per system, what blocks each, what happened; owners and admins retry a failed
// task), the conversation with the data principal and a reply (any member), and its history.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { canChange, useSession } from '../api/use-session';
import { StatusBadge } from '../components/Badge';
import { DueDate } from '../components/DueDate';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { label, useMessages } from '../i18n';
import type { FulfilmentTask, GrievanceWithHistory } from '../api/types';
import { Table, type Column } from '../components/Table';
import { GRIEVANCE_STATUSES } from '../lib/enums';
import { formatDate, formatDateTime, shortId } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTaskRetry } from '../lib/use-task-retry';
import { useTitle } from '../lib/use-title';
import { PAGES } from '../routes';

/** The request categories that have a fulfilment (tasks per system): the others show no panel. */
const RIGHTS_REQUESTS: readonly string[] = ['data_access', 'data_portability', 'rectification', 'erasure'];

export default function GrievancePage({ ticketId }: { ticketId: string }) {
  const m = useMessages();
  const session = useSession();
  useTitle(ticketId, session.organization.name);
  const ticket = useApi(() => call(api.GET('/api/v1/grievances/{ticket_id}', { params: { path: { ticket_id: ticketId } } })), [ticketId]);
  const [changed, setChanged] = useState<string | null>(null);

  return (
    <section>
      <p>
        <Link href={PAGES.grievances}>← {m.grievances.back}</Link>
      </p>
      <DataState loaded={ticket}>
        {(g) => (
          <>
            <h1>
              {g.ticket_id}: {g.subject}
            </h1>
            <Notice>{changed}</Notice>
            <dl className="details">
              <dt>{m.common.status}</dt>
              <dd>
                <StatusBadge status={g.status} />
              </dd>
              <dt>{m.grievances.due}</dt>
              <dd>
                <DueDate ticket={g} />
              </dd>
              <dt>{m.grievances.category}</dt>
              <dd>{label(m.labels.category, g.category)}</dd>
              <dt>{m.grievances.user}</dt>
              <dd>
                <code>{g.client_user_id}</code>
              </dd>
              {g.user_id ? (
                <>
                  <dt>{m.grievances.internalUser}</dt>
                  <dd>
                    <code>{g.user_id}</code>
                  </dd>
                </>
              ) : null}
              <dt>{m.common.created}</dt>
              <dd>{formatDateTime(g.created_at)}</dd>
              <dt>{m.common.updated}</dt>
              <dd>{formatDateTime(g.updated_at)}</dd>
              {g.attachment_url ? (
                <>
                  <dt>{m.grievances.attachment}</dt>
                  <dd>
                    <a href={g.attachment_url} rel="noopener noreferrer nofollow" target="_blank">
                      {g.attachment_url}
                    </a>
                  </dd>
                </>
              ) : null}
            </dl>
            <h2>{m.grievances.description}</h2>
            <p className="prose">{g.description}</p>

            {canChange(session) ? (
              <StatusForm
                key={g.status}
                ticket={g}
                onChanged={(status) => {
                  setChanged(m.grievances.statusChanged(label(m.labels.status, status)));
                  ticket.reload();
                }}
              />
            ) : null}

            {RIGHTS_REQUESTS.includes(g.category) ? <TicketFulfilmentPanel ticketId={g.ticket_id} manager={canChange(session)} /> : null}

            <Conversation ticketId={g.ticket_id} />

            <h2>{m.grievances.history}</h2>
            <ol className="timeline">
              {g.history.map((h, i) => (
                <li key={`${h.changed_at}-${i}`}>
                  <strong>{m.grievances.historyEntry(h.previous_status ? label(m.labels.status, h.previous_status) : null, label(m.labels.status, h.status))}</strong>{' '}
                  <time dateTime={h.changed_at}>{formatDateTime(h.changed_at)}</time>{' '}
                  <span className="muted">
                    {m.grievances.by} {h.actor.id === session.user.id ? session.user.email : `${label(m.labels.actor, h.actor.type)} ${shortId(h.actor.id)}`}
                  </span>
                  {h.note ? <p className="note">{h.note}</p> : null}
                </li>
              ))}
            </ol>
          </>
        )}
      </DataState>
    </section>
  );
}

function StatusForm({ ticket, onChanged }: { ticket: GrievanceWithHistory; onChanged: (status: string) => void }) {
  const m = useMessages();
  const [status, setStatus] = useState<string>(ticket.status === 'open' ? 'in_progress' : 'resolved');
  const [note, setNote] = useState('');
  const { busy, error, onSubmit } = useAction(async () => {
    const body = { status: status as (typeof GRIEVANCE_STATUSES)[number], ...(note.trim() ? { note } : {}) };
    await call(api.POST('/api/v1/grievances/{ticket_id}/status', { params: { path: { ticket_id: ticket.ticket_id } }, body }));
    setNote('');
    onChanged(status);
  });

  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.grievances.changeStatus}</h2>
      <FormError error={error} fields={['status', 'note']} />
      <Field label={m.grievances.newStatus} field="status" error={error}>
        {(ids) => (
          <select {...ids} value={status} onChange={(e) => setStatus(e.target.value)}>
            {GRIEVANCE_STATUSES.filter((s) => s !== ticket.status).map((s) => (
              <option key={s} value={s}>
                {label(m.labels.status, s)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label={m.grievances.note} field="note" error={error} hint={m.grievances.noteHint}>
        {(ids) => <textarea {...ids} rows={3} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.grievances.submitStatus}
      </button>
    </form>
  );
}

/** The conversation on the ticket (oldest first) and a reply from the organization (sender `agent`). */
export function Conversation({ ticketId }: { ticketId: string }) {
  const m = useMessages();
  const messages = useApi(() => call(api.GET('/grievance/{ticket_id}/messages', { params: { path: { ticket_id: ticketId } } })), [ticketId]);
  const [text, setText] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, onSubmit } = useAction(async () => {
    setSent(null);
    await call(api.POST('/grievance/{ticket_id}/messages', { params: { path: { ticket_id: ticketId } }, body: { message: text } }));
    setText('');
    setSent(m.grievances.replySent);
    messages.reload();
  });

  return (
    <section aria-labelledby="conversation-heading">
      <h2 id="conversation-heading">{m.grievances.conversation}</h2>
      <DataState loaded={messages} isEmpty={(d) => d.length === 0} empty={m.grievances.noMessages}>
        {(list) => (
          <ol className="conversation">
            {list.map((msg) => (
              <li key={msg.id} className={`message message-${msg.sender}`}>
                <p className="message-meta">
                  <strong>{label(m.grievances.sender, msg.sender)}</strong> <time dateTime={msg.created_at}>{formatDateTime(msg.created_at)}</time>
                </p>
                <p className="prose">{msg.message}</p>
                {msg.attachment_url ? (
                  <p>
                    <a href={msg.attachment_url} rel="noopener noreferrer nofollow" target="_blank">
                      {msg.attachment_url}
                    </a>
                  </p>
                ) : null}
              </li>
            ))}
          </ol>
        )}
      </DataState>
      <Notice>{sent}</Notice>
      <form className="card form" onSubmit={onSubmit()} noValidate>
        <h3>{m.grievances.reply}</h3>
        <FormError error={error} fields={['message']} />
        <Field label={m.grievances.replyLabel} field="message" error={error} hint={m.grievances.replyHint}>
          {(ids) => <textarea {...ids} rows={4} maxLength={5000} required value={text} onChange={(e) => setText(e.target.value)} />}
        </Field>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.grievances.sending : m.grievances.sendReply}
        </button>
      </form>
    </section>
  );
}

/**
 * The request's fulfilment (GET /api/v1/fulfilment/tickets/{ticket_id}): its status, each system's task
 * with what blocks it, every transition with who acted, the retention holds and the access package.
 * `manager`: owners and admins retry a failed task here.
 */
export function TicketFulfilmentPanel({ ticketId, manager }: { ticketId: string; manager: boolean }) {
  const m = useMessages();
  const f = m.fulfilment;
  const view = useApi(() => call(api.GET('/api/v1/fulfilment/tickets/{ticket_id}', { params: { path: { ticket_id: ticketId } } })), [ticketId]);
  const { notice, busy, retry } = useTaskRetry(() => view.reload());

  const taskColumns: Column<FulfilmentTask>[] = [
    { key: 'system', header: f.system, render: (t) => t.system_name },
    { key: 'kind', header: f.kind, render: (t) => `${label(f.kinds, t.kind)} · ${label(f.modes, t.mode)}` },
    { key: 'status', nowrap: true, header: m.common.status, render: (t) => label(f.statuses, t.status) },
    { key: 'blocked', header: f.blockedBy, render: (t) => t.blocked_by ?? m.common.none },
    { key: 'attempts', header: f.attempts, render: (t) => String(t.attempts) },
  ];
  if (manager) {
    taskColumns.push({
      key: 'actions',
      nowrap: true,
      header: m.common.actions,
      render: (t) =>
        t.status === 'failed' ? (
          <button type="button" className="button secondary" disabled={busy === t.id} onClick={() => void retry(t)}>
            {f.retry}
            <span className="sr-only"> {f.retryWhat(t.system_name, t.ticket_id)}</span>
          </button>
        ) : null,
    });
  }

  return (
    <section aria-labelledby="fulfilment-heading">
      <h2 id="fulfilment-heading">{f.panelTitle}</h2>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={view} isEmpty={(v) => v.tasks.length === 0} empty={f.panelNone}>
        {(v) => {
          const systemOf = new Map(v.tasks.map((t) => [t.id, t.system_name]));
          // Numbered: two steps of one task may share their time and actor (a lease that ended, then a claim).
          type Step = (typeof v.transitions)[number] & { n: number };
          const steps: Step[] = v.transitions.map((x, n) => ({ ...x, n }));
          const stepColumns: Column<Step>[] = [
            { key: 'at', nowrap: true, header: f.when, render: (x) => <time dateTime={x.at}>{formatDateTime(x.at)}</time> },
            { key: 'system', header: f.system, render: (x) => systemOf.get(x.task_id) ?? shortId(x.system_id) },
            { key: 'action', header: f.action, render: (x) => label(f.actions, x.action) },
            { key: 'actor', header: f.actor, render: (x) => `${label(m.labels.actor, x.actor.type)} ${shortId(x.actor.id)}` },
            { key: 'detail', header: f.detail, render: (x) => x.detail ?? '' },
          ];
          return (
            <>
              <p>
                <strong>{f.panelStatus(label(f.ticketStatuses, v.status))}</strong>
              </p>
              <Table caption={f.tasksCaption} columns={taskColumns} rows={v.tasks} rowKey={(t) => t.id} />
              {v.retention_holds.length ? (
                <>
                  <h3>{f.holds}</h3>
                  <ul>
                    {v.retention_holds.map((h) => (
                      <li key={h.category_key}>{f.holdOf(h.category_name, h.systems.join(', '), formatDate(h.until), h.basis)}</li>
                    ))}
                  </ul>
                </>
              ) : null}
              {v.package ? <p>{f.packageOf(label(f.packageStatuses, v.package.status), v.package.files.length, formatDateTime(v.package.expires_at))}</p> : null}
              <h3>{f.transitions}</h3>
              <Table caption={f.transitionsCaption} columns={stepColumns} rows={steps} rowKey={(x) => String(x.n)} />
            </>
          );
        }}
      </DataState>
    </section>
  );
}
