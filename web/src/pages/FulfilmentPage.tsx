// Fulfilment: every task of every rights request, per system, with what blocks it; a failed task is
// retried from here (owners and admins), who also set the organization's fulfilment choices (erasure on
// consent withdrawal, nominees acting for the person).
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { canChange, useSession } from '../api/use-session';
import type { FulfilmentSettings, FulfilmentTask } from '../api/types';
import { Field, FormError } from '../components/fields';
import { Filters, Options, useFilterDraft } from '../components/Filters';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { TASK_STATUSES } from '../lib/enums';
import { formatDateTime } from '../lib/format';
import { intParam, oneOf, useSearchState } from '../lib/search-state';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTaskRetry } from '../lib/use-task-retry';
import { useTitle } from '../lib/use-title';
import { PAGES, pathTo } from '../routes';

const FILTERS = ['status'] as const;

export default function FulfilmentPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.fulfilment.title, session.organization.name);
  const [params, update] = useSearchState();
  const { draft, set } = useFilterDraft(params, FILTERS);
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const query = { status: oneOf(params, 'status', TASK_STATUSES), limit, offset };
  const list = useApi(() => call(api.GET('/api/v1/fulfilment/tasks', { params: { query } })), [JSON.stringify(query)]);
  const { notice, busy, retry } = useTaskRetry(() => list.reload());

  const columns: Column<FulfilmentTask>[] = [
    { key: 'ticket', nowrap: true, header: m.fulfilment.request, render: (t) => <Link href={pathTo(PAGES.grievance, { ticketId: t.ticket_id })}>{t.ticket_id}</Link> },
    { key: 'system', header: m.fulfilment.system, render: (t) => t.system_name },
    { key: 'kind', header: m.fulfilment.kind, render: (t) => `${label(m.fulfilment.kinds, t.kind)} · ${label(m.fulfilment.modes, t.mode)}` },
    { key: 'status', header: m.common.status, render: (t) => label(m.fulfilment.statuses, t.status) },
    { key: 'blocked', header: m.fulfilment.blockedBy, render: (t) => t.blocked_by ?? m.common.none },
    { key: 'attempts', header: m.fulfilment.attempts, render: (t) => String(t.attempts) },
    { key: 'updated', nowrap: true, header: m.fulfilment.updated, render: (t) => formatDateTime(t.updated_at) },
  ];
  if (canChange(session)) {
    columns.push({
      key: 'actions',
      header: m.common.actions,
      render: (t) =>
        t.status === 'failed' ? (
          <button type="button" className="button secondary" disabled={busy === t.id} onClick={() => void retry(t)}>
            {m.fulfilment.retry}
            <span className="sr-only"> {m.fulfilment.retryWhat(t.system_name, t.ticket_id)}</span>
          </button>
        ) : null,
    });
  }

  return (
    <section>
      <h1>{m.fulfilment.title}</h1>
      <p className="intro">{m.fulfilment.intro}</p>
      {canChange(session) ? <SettingsForm /> : null}
      <Filters label={m.fulfilment.title} onApply={() => update(draft)} onClear={() => update(Object.fromEntries(FILTERS.map((f) => [f, null])))}>
        <Field label={m.common.status}>
          {(ids) => (
            <select {...ids} value={draft.status} onChange={(e) => set('status')(e.target.value)}>
              <Options values={TASK_STATUSES} labels={m.fulfilment.statuses} all={m.common.all} />
            </select>
          )}
        </Field>
      </Filters>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={m.fulfilment.none}>
        {(d) => (
          <>
            <Table caption={m.fulfilment.title} columns={columns} rows={d.data} rowKey={(t) => t.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
    </section>
  );
}

/** The organization's fulfilment choices (owners and admins; both off by default). */
export function SettingsForm() {
  const stored = useApi(() => call(api.GET('/api/v1/fulfilment/settings')), []);
  return (
    <DataState loaded={stored}>
      {(settings) => <SettingsFields stored={settings} />}
    </DataState>
  );
}

const CHOICES = ['erase_on_withdrawal', 'nominees_may_act'] as const;

function SettingsFields({ stored }: { stored: FulfilmentSettings }) {
  const m = useMessages();
  const [choices, setChoices] = useState<FulfilmentSettings>(stored);
  const [saved, setSaved] = useState(false);
  const { busy, error, onSubmit } = useAction(async () => {
    setSaved(false);
    setChoices(await call(api.PUT('/api/v1/fulfilment/settings', { body: choices })));
    setSaved(true);
  });
  const texts = { erase_on_withdrawal: m.fulfilment.eraseOnWithdrawal, nominees_may_act: m.fulfilment.nomineesMayAct };
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate aria-labelledby="fulfilment-settings-title">
      <h2 id="fulfilment-settings-title">{m.fulfilment.settingsTitle}</h2>
      <FormError error={error} fields={[...CHOICES]} />
      {CHOICES.map((c) => (
        <div className="check" key={c}>
          <input id={`setting-${c}`} type="checkbox" checked={choices[c]} onChange={(e) => setChoices({ ...choices, [c]: e.target.checked })} />
          <label htmlFor={`setting-${c}`}>{texts[c]}</label>
        </div>
      ))}
      {saved ? <Notice>{m.common.saved}</Notice> : null}
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.common.save}
      </button>
    </form>
  );
}
