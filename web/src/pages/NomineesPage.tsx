// Nominees: filter by status, relationship and data principal; verify or reject (owners and admins).
import { useState } from 'react';
import { api, call } from '../api/client';
import type { ApiError } from '../api/errors';
import { canChange, useSession } from '../api/use-session';
import { StatusBadge } from '../components/Badge';
import { Field } from '../components/fields';
import { Filters, Options, useFilterDraft } from '../components/Filters';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import type { Nominee } from '../api/types';
import { NOMINEE_STATUSES, RELATIONSHIPS } from '../lib/enums';
import { formatDate, formatDateTime } from '../lib/format';
import { intParam, oneOf, useSearchState } from '../lib/search-state';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

const FILTERS = ['status', 'relationship', 'client_user_id'] as const;

export default function NomineesPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.nominees.title, session.organization.name);
  const [params, update] = useSearchState();
  const { draft, set } = useFilterDraft(params, FILTERS);
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const query = {
    status: oneOf(params, 'status', NOMINEE_STATUSES),
    relationship: oneOf(params, 'relationship', RELATIONSHIPS),
    client_user_id: params.get('client_user_id') || undefined,
    limit,
    offset,
  };
  const list = useApi(() => call(api.GET('/api/v1/nominees', { params: { query } })), [JSON.stringify(query)]);
  const [notice, setNotice] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const decide = async (n: Nominee, verdict: 'verify' | 'reject') => {
    setBusy(n.id);
    setNotice(null);
    try {
      const path = { params: { path: { nominee_id: n.id } } };
      await call(verdict === 'verify' ? api.POST('/api/v1/nominees/{nominee_id}/verify', path) : api.POST('/api/v1/nominees/{nominee_id}/reject', path));
      setNotice({ kind: 'success', text: verdict === 'verify' ? m.nominees.verified(n.nominee_name) : m.nominees.rejected(n.nominee_name) });
      list.reload();
    } catch (e) {
      setNotice({ kind: 'error', text: (e as ApiError).message });
    } finally {
      setBusy(null);
    }
  };

  const columns: Column<Nominee>[] = [
    {
      key: 'name',
      header: m.nominees.nominee,
      render: (n) => (
        <>
          <strong>{n.nominee_name}</strong>
          {n.purpose_of_appointment ? <span className="muted block">{n.purpose_of_appointment}</span> : null}
        </>
      ),
    },
    {
      key: 'contact',
      header: m.nominees.contact,
      render: (n) => (
        <>
          <a href={`mailto:${n.nominee_email}`}>{n.nominee_email}</a>
          <span className="block">{n.nominee_mobile}</span>
        </>
      ),
    },
    { key: 'relationship', header: m.nominees.relationship, render: (n) => label(m.labels.relationship, n.relationship) },
    { key: 'user', header: m.nominees.user, render: (n) => <code>{n.client_user_id}</code> },
    {
      key: 'status',
      header: m.common.status,
      render: (n) => (
        <>
          <StatusBadge status={n.status} />
          {n.verified_at ? <span className="muted block">{formatDate(n.verified_at)}</span> : null}
        </>
      ),
    },
    { key: 'created', nowrap: true, header: m.common.created, render: (n) => formatDateTime(n.created_at) },
  ];
  if (canChange(session)) {
    columns.push({
      key: 'actions',
      header: m.common.actions,
      render: (n) => (
        <span className="row-actions">
          <button type="button" className="button secondary" disabled={n.status === 'verified' || busy === n.id} onClick={() => void decide(n, 'verify')}>
            {m.nominees.verify}
            <span className="sr-only"> {n.nominee_name}</span>
          </button>
          <button type="button" className="button secondary" disabled={n.status === 'rejected' || busy === n.id} onClick={() => void decide(n, 'reject')}>
            {m.nominees.reject}
            <span className="sr-only"> {n.nominee_name}</span>
          </button>
        </span>
      ),
    });
  }

  return (
    <section>
      <h1>{m.nominees.title}</h1>
      <Filters label={m.nominees.filters} onApply={() => update(draft)} onClear={() => update(Object.fromEntries(FILTERS.map((f) => [f, null])))}>
        <Field label={m.common.status}>
          {(ids) => (
            <select {...ids} value={draft.status} onChange={(e) => set('status')(e.target.value)}>
              <Options values={NOMINEE_STATUSES} labels={m.labels.status} all={m.common.all} />
            </select>
          )}
        </Field>
        <Field label={m.nominees.relationship}>
          {(ids) => (
            <select {...ids} value={draft.relationship} onChange={(e) => set('relationship')(e.target.value)}>
              <Options values={RELATIONSHIPS} labels={m.labels.relationship} all={m.common.all} />
            </select>
          )}
        </Field>
        <Field label={m.nominees.user} hint={m.grievances.userHint}>
          {(ids) => <input {...ids} value={draft.client_user_id} onChange={(e) => set('client_user_id')(e.target.value)} />}
        </Field>
      </Filters>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={FILTERS.some((f) => params.get(f)) ? m.nominees.empty : m.nominees.none}>
        {(d) => (
          <>
            <Table caption={m.nominees.title} columns={columns} rows={d.data} rowKey={(n) => n.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
    </section>
  );
}
