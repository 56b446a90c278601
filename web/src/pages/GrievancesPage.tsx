// Grievance tickets: filter (status, category, user, dates, overdue), sort by created, updated or due date,
// page through. Each row shows its due date; overdue tickets are labelled (and marked at the row's edge).
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { useSession } from '../api/use-session';
import { StatusBadge } from '../components/Badge';
import { DueDate } from '../components/DueDate';
import { Field } from '../components/fields';
import { Filters, Options, useFilterDraft } from '../components/Filters';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import type { Grievance } from '../api/types';
import { GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES } from '../lib/enums';
import { dayBoundary, formatDateTime } from '../lib/format';
import { intParam, oneOf, useSearchState } from '../lib/search-state';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { pathTo, PAGES } from '../routes';

const FILTERS = ['status', 'category', 'client_user_id', 'from', 'to', 'overdue'] as const;
const OVERDUE = ['true', 'false'] as const;

export default function GrievancesPage() {
  const m = useMessages();
  useTitle(m.grievances.title, useSession().organization.name);
  const [params, update] = useSearchState();
  const { draft, set } = useFilterDraft(params, FILTERS);
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const sort = oneOf(params, 'sort', ['created_at', 'updated_at', 'due_at'] as const) ?? 'created_at';
  const order = oneOf(params, 'order', ['asc', 'desc'] as const) ?? 'desc';
  const query = {
    status: oneOf(params, 'status', GRIEVANCE_STATUSES),
    category: oneOf(params, 'category', GRIEVANCE_CATEGORIES),
    client_user_id: params.get('client_user_id') || undefined,
    from: dayBoundary(params.get('from') ?? '', false),
    to: dayBoundary(params.get('to') ?? '', true),
    overdue: ((v) => (v === undefined ? undefined : v === 'true'))(oneOf(params, 'overdue', OVERDUE)),
    sort,
    order,
    limit,
    offset,
  };
  const list = useApi(() => call(api.GET('/api/v1/grievances', { params: { query } })), [JSON.stringify(query)]);
  const filtered = FILTERS.some((f) => params.get(f));

  const sortBy = (column: 'created_at' | 'updated_at' | 'due_at') => ({
    direction: sort === column ? order : null,
    onToggle: () => update({ sort: column, order: sort === column && order === 'desc' ? 'asc' : 'desc' }),
  });
  const dueSort = {
    direction: sort === 'due_at' ? order : null,
    onToggle: () => update({ sort: 'due_at', order: sort === 'due_at' && order === 'asc' ? 'desc' : 'asc' }),
  };
  const columns: Column<Grievance>[] = [
    { key: 'ticket', nowrap: true, header: m.grievances.ticket, render: (g) => <Link href={pathTo(PAGES.grievance, { ticketId: g.ticket_id })}>{g.ticket_id}</Link> },
    { key: 'subject', header: m.grievances.subject, render: (g) => g.subject },
    { key: 'category', header: m.grievances.category, render: (g) => label(m.labels.category, g.category) },
    { key: 'status', header: m.common.status, render: (g) => <StatusBadge status={g.status} /> },
    { key: 'user', nowrap: true, header: m.grievances.user, render: (g) => <code>{g.client_user_id}</code> },
    { key: 'created', nowrap: true, header: m.common.created, render: (g) => formatDateTime(g.created_at), sort: sortBy('created_at') },
    { key: 'updated', nowrap: true, header: m.common.updated, render: (g) => formatDateTime(g.updated_at), sort: sortBy('updated_at') },
    // Soonest first on the first click: what needs an answer next.
    { key: 'due', nowrap: true, header: m.grievances.due, render: (g) => <DueDate ticket={g} />, sort: dueSort },
  ];

  return (
    <section>
      <h1>{m.grievances.title}</h1>
      <Filters
        label={m.grievances.filters}
        onApply={() => update(draft)}
        onClear={() => update(Object.fromEntries(FILTERS.map((f) => [f, null])))}
      >
        <Field label={m.common.status}>
          {(ids) => (
            <select {...ids} value={draft.status} onChange={(e) => set('status')(e.target.value)}>
              <Options values={GRIEVANCE_STATUSES} labels={m.labels.status} all={m.common.all} />
            </select>
          )}
        </Field>
        <Field label={m.grievances.category}>
          {(ids) => (
            <select {...ids} value={draft.category} onChange={(e) => set('category')(e.target.value)}>
              <Options values={GRIEVANCE_CATEGORIES} labels={m.labels.category} all={m.common.all} />
            </select>
          )}
        </Field>
        <Field label={m.grievances.user} hint={m.grievances.userHint}>
          {(ids) => <input {...ids} value={draft.client_user_id} onChange={(e) => set('client_user_id')(e.target.value)} />}
        </Field>
        <Field label={m.grievances.overdueFilter}>
          {(ids) => (
            <select {...ids} value={draft.overdue} onChange={(e) => set('overdue')(e.target.value)}>
              <Options values={OVERDUE} labels={m.grievances.overdueOptions} all={m.common.all} />
            </select>
          )}
        </Field>
        <Field label={m.common.from}>{(ids) => <input {...ids} type="date" value={draft.from} onChange={(e) => set('from')(e.target.value)} />}</Field>
        <Field label={m.common.to}>{(ids) => <input {...ids} type="date" value={draft.to} onChange={(e) => set('to')(e.target.value)} />}</Field>
      </Filters>

      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={filtered ? m.grievances.empty : m.grievances.none}>
        {(d) => (
          <>
            <Table caption={m.grievances.title} columns={columns} rows={d.data} rowKey={(g) => g.id} rowClass={(g) => (g.overdue ? 'row-overdue' : undefined)} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
    </section>
  );
}
