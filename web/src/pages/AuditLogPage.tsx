// Settings, audit log: every change made through the API, newest first, filtered by action and dates.
import { api, call } from '../api/client';
import { useSession } from '../api/use-session';
import type { AuditEntry } from '../api/types';
import { Field } from '../components/fields';
import { Filters, Options, useFilterDraft } from '../components/Filters';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { AUDIT_ACTIONS } from '../lib/enums';
import { dayBoundary, formatDateTime, shortId } from '../lib/format';
import { intParam, useSearchState } from '../lib/search-state';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

const FILTERS = ['action', 'from', 'to'] as const;

export default function AuditLogPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.audit.title, session.organization.name);
  const [params, update] = useSearchState();
  const { draft, set } = useFilterDraft(params, FILTERS);
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const query = {
    action: params.get('action') || undefined,
    from: dayBoundary(params.get('from') ?? '', false),
    to: dayBoundary(params.get('to') ?? '', true),
    limit,
    offset,
  };
  const entries = useApi(() => call(api.GET('/api/v1/audit-log', { params: { query } })), [JSON.stringify(query)]);

  const columns: Column<AuditEntry>[] = [
    { key: 'at', nowrap: true, header: m.audit.when, render: (e) => formatDateTime(e.at) },
    {
      key: 'actor',
      header: m.audit.actor,
      render: (e) => (e.actor.type === 'user' && e.actor.id === session.user.id ? session.user.email : `${label(m.labels.actor, e.actor.type)} ${shortId(e.actor.id)}`),
    },
    { key: 'action', header: m.audit.action, render: (e) => label(m.labels.action, e.action) },
    { key: 'target', nowrap: true, header: m.audit.target, render: (e) => <code title={e.target.id ?? ''}>{e.target.id ? shortId(e.target.id) : e.target.type}</code> },
    {
      key: 'details',
      header: m.common.details,
      render: (e) => (
        <span className="details-inline">
          {Object.entries(e.details)
            .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
            .join(' · ')}
        </span>
      ),
    },
    { key: 'request', nowrap: true, header: m.audit.request, render: (e) => (e.request_id ? <code title={e.request_id}>{shortId(e.request_id)}</code> : m.common.none) },
  ];

  return (
    <section>
      <h1>{m.audit.title}</h1>
      <p className="intro">{m.audit.intro}</p>
      <Filters label={m.audit.title} onApply={() => update(draft)} onClear={() => update(Object.fromEntries(FILTERS.map((f) => [f, null])))}>
        <Field label={m.audit.action}>
          {(ids) => (
            <select {...ids} value={draft.action} onChange={(e) => set('action')(e.target.value)}>
              <Options values={AUDIT_ACTIONS} labels={m.labels.action} all={m.audit.allActions} />
            </select>
          )}
        </Field>
        <Field label={m.common.from}>{(ids) => <input {...ids} type="date" value={draft.from} onChange={(e) => set('from')(e.target.value)} />}</Field>
        <Field label={m.common.to}>{(ids) => <input {...ids} type="date" value={draft.to} onChange={(e) => set('to')(e.target.value)} />}</Field>
      </Filters>
      <DataState loaded={entries} isEmpty={(d) => d.count === 0} empty={m.audit.empty}>
        {(d) => (
          <>
            <Table caption={m.audit.title} columns={columns} rows={d.data} rowKey={(e) => e.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
    </section>
  );
}
