// The data map, Data categories: the kinds of personal data the organization holds, what each is used
// for and its retention hold. Every member reads; owners and admins declare, edit and delete (a category
// a system holds cannot be deleted: the API says so).
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import { canChange, useSession } from '../api/use-session';
import type { DataCategory } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { intParam, useSearchState } from '../lib/search-state';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

type Shown = { kind: 'success' | 'error'; text: string } | null;

/** Lines of a textarea as a list: trimmed, blank lines dropped. */
export const linesOf = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

export default function DataCategoriesPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.dataCategories.title, session.organization.name);
  return <DataCategories manager={canChange(session)} />;
}

/** The page without its document title and session (what the component test renders). */
export function DataCategories({ manager }: { manager: boolean }) {
  const m = useMessages();
  const [params, update] = useSearchState();
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const list = useApi(() => call(api.GET('/api/v1/data-categories', { params: { query: { limit, offset } } })), [limit, offset]);
  const [editing, setEditing] = useState<DataCategory | null>(null);
  const [removing, setRemoving] = useState<DataCategory | null>(null);
  const [notice, setNotice] = useState<Shown>(null);
  const [busy, setBusy] = useState(false);

  const remove = async () => {
    if (!removing) return;
    setBusy(true);
    setNotice(null);
    try {
      await call(api.DELETE('/api/v1/data-categories/{id}', { params: { path: { id: removing.id } } }));
      setNotice({ kind: 'success', text: m.dataCategories.removed(removing.name) });
      if (editing?.id === removing.id) setEditing(null);
      list.reload();
    } catch (e) {
      setNotice({ kind: 'error', text: ApiError.of(e).message });
    } finally {
      setBusy(false);
      setRemoving(null);
    }
  };

  const columns: Column<DataCategory>[] = [
    { key: 'key', nowrap: true, header: m.dataCategories.key, render: (c) => <code>{c.key}</code> },
    { key: 'name', header: m.dataCategories.name, render: (c) => c.name },
    { key: 'purposes', header: m.dataCategories.purposes, render: (c) => (c.purposes.length ? c.purposes.join(', ') : m.common.none) },
    {
      key: 'retention',
      header: m.dataCategories.retention,
      render: (c) => (c.retention_days === null ? m.common.none : m.dataCategories.retentionOf(c.retention_days, c.retention_basis ?? '')),
    },
    { key: 'updated', nowrap: true, header: m.common.updated, render: (c) => formatDateTime(c.updated_at) },
  ];
  if (manager) {
    columns.push({
      key: 'actions',
      header: m.common.actions,
      render: (c) => (
        <div className="actions">
          <button type="button" className="button secondary" onClick={() => setEditing(c)}>
            {m.dataCategories.edit}
            <span className="sr-only">{m.dataCategories.editWhat(c.name)}</span>
          </button>
          <button type="button" className="button danger" onClick={() => setRemoving(c)}>
            {m.dataCategories.remove}
            <span className="sr-only">{m.dataCategories.removeWhat(c.name)}</span>
          </button>
        </div>
      ),
    });
  }

  return (
    <section>
      <h1>{m.dataCategories.title}</h1>
      <p className="intro">{m.dataCategories.intro}</p>
      {manager ? (
        <CategoryForm
          key={editing?.id ?? 'new'}
          editing={editing}
          onSaved={(c, created) => {
            setNotice({ kind: 'success', text: created ? m.dataCategories.created(c.name) : m.dataCategories.saved(c.name) });
            setEditing(null);
            list.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={m.dataCategories.empty}>
        {(d) => (
          <>
            <Table caption={m.dataCategories.title} columns={columns} rows={d.data} rowKey={(c) => c.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
      <ConfirmDialog
        open={removing !== null}
        title={m.dataCategories.removeTitle(removing?.name ?? '')}
        confirmLabel={m.dataCategories.remove}
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setRemoving(null)}
      >
        <p>{m.dataCategories.removeBody}</p>
      </ConfirmDialog>
    </section>
  );
}

/** Declares a category, or edits one (every field but its key). */
function CategoryForm({ editing, onSaved, onCancel }: { editing: DataCategory | null; onSaved: (c: DataCategory, created: boolean) => void; onCancel: () => void }) {
  const m = useMessages();
  const [key, setKey] = useState('');
  const [name, setName] = useState(editing?.name ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [purposes, setPurposes] = useState((editing?.purposes ?? []).join('\n'));
  const [days, setDays] = useState(editing && editing.retention_days !== null ? String(editing.retention_days) : '');
  const [basis, setBasis] = useState(editing?.retention_basis ?? '');
  const { busy, error, onSubmit } = useAction(async () => {
    const fields = {
      name,
      description: description.trim() ? description : null,
      purposes: linesOf(purposes),
      // Empty number: no hold (the API wants both retention fields or neither, and says so).
      retention_days: days.trim() === '' ? null : Number(days),
      retention_basis: basis.trim() ? basis : null,
    };
    if (editing) {
      onSaved(await call(api.PATCH('/api/v1/data-categories/{id}', { params: { path: { id: editing.id } }, body: fields })), false);
    } else {
      onSaved(await call(api.POST('/api/v1/data-categories', { body: { key, ...fields } })), true);
    }
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate aria-labelledby="category-form-title">
      <h2 id="category-form-title">{editing ? m.dataCategories.editTitle(editing.name) : m.dataCategories.add}</h2>
      <FormError error={error} fields={['key', 'name', 'description', 'purposes', 'retention_days', 'retention_basis']} />
      {editing ? null : (
        <Field label={m.dataCategories.key} field="key" error={error} hint={m.dataCategories.keyHint}>
          {(ids) => <input {...ids} required maxLength={63} value={key} onChange={(e) => setKey(e.target.value)} />}
        </Field>
      )}
      <Field label={m.dataCategories.name} field="name" error={error}>
        {(ids) => <input {...ids} required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label={m.dataCategories.description} field="description" error={error}>
        {(ids) => <textarea {...ids} rows={2} maxLength={2000} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <Field label={m.dataCategories.purposes} field="purposes" error={error} hint={m.dataCategories.purposesHint}>
        {(ids) => <textarea {...ids} rows={3} value={purposes} onChange={(e) => setPurposes(e.target.value)} />}
      </Field>
      <Field label={m.dataCategories.retentionDays} field="retention_days" error={error} hint={m.dataCategories.retentionDaysHint}>
        {(ids) => <input {...ids} type="number" min={1} max={36500} inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} />}
      </Field>
      <Field label={m.dataCategories.retentionBasis} field="retention_basis" error={error} hint={m.dataCategories.retentionBasisHint}>
        {(ids) => <input {...ids} maxLength={500} value={basis} onChange={(e) => setBasis(e.target.value)} />}
      </Field>
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.common.saving : editing ? m.dataCategories.save : m.dataCategories.submit}
        </button>
        {editing ? (
          <button type="button" className="button secondary" onClick={onCancel}>
            {m.common.cancel}
          </button>
        ) : null}
      </div>
    </form>
  );
}
