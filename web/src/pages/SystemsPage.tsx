// The data map, Systems: what holds personal data, who owns it, which categories it holds, whom it shares
// them with, and which requests it answers itself. Every member reads; owners and admins register, edit,
// archive (no delete: tasks and the export refer to systems) and make a system's key (shown once).
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import { canChange, useSession } from '../api/use-session';
import type { DataCategory, DataSystem, SystemKey } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { intParam, useSearchState } from '../lib/search-state';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { linesOf } from './DataCategoriesPage';

type Shown = { kind: 'success' | 'error'; text: string } | null;
const ANSWERS = ['can_access', 'can_correct', 'can_erase'] as const;

export default function SystemsPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.systems.title, session.organization.name);
  return <Systems manager={canChange(session)} />;
}

/** The page without its document title and session (what the component test renders). */
export function Systems({ manager }: { manager: boolean }) {
  const m = useMessages();
  const [params, update] = useSearchState();
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const list = useApi(() => call(api.GET('/api/v1/systems', { params: { query: { limit, offset } } })), [limit, offset]);
  // The categories by id, to name what each system holds (and to choose from in the form).
  const categories = useApi(() => call(api.GET('/api/v1/data-categories', { params: { query: { limit: 200 } } })), []);
  const [editing, setEditing] = useState<DataSystem | null>(null);
  const [archiving, setArchiving] = useState<DataSystem | null>(null);
  const [key, setKey] = useState<{ system: string; key: SystemKey } | null>(null);
  const [notice, setNotice] = useState<Shown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (run: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    try {
      await run();
    } catch (e) {
      setNotice({ kind: 'error', text: ApiError.of(e).message });
    } finally {
      setBusy(false);
    }
  };
  const setStatus = (s: DataSystem, status: 'active' | 'archived') =>
    act(async () => {
      await call(api.PATCH('/api/v1/systems/{id}', { params: { path: { id: s.id } }, body: { status } }));
      setNotice({ kind: 'success', text: status === 'archived' ? m.systems.archived(s.name) : m.systems.reactivated(s.name) });
      setArchiving(null);
      list.reload();
    });
  const makeKey = (s: DataSystem) =>
    act(async () => {
      setKey({ system: s.name, key: await call(api.POST('/api/v1/systems/{id}/keys', { params: { path: { id: s.id } }, body: {} })) });
    });

  const nameOf = new Map((categories.data?.data ?? []).map((c) => [c.id, c.name]));
  const kinds = (s: DataSystem) =>
    m.systems.automatic(
      [s.can_access ? m.systems.canAccess : '', s.can_correct ? m.systems.canCorrect : '', s.can_erase ? m.systems.canErase : ''].filter(Boolean).join(', '),
    );
  const columns: Column<DataSystem>[] = [
    { key: 'name', header: m.systems.name, render: (s) => s.name },
    { key: 'owner', header: m.systems.owner, render: (s) => s.owner },
    { key: 'categories', header: m.systems.categories, render: (s) => (s.category_ids.length ? s.category_ids.map((id) => nameOf.get(id) ?? id).join(', ') : m.common.none) },
    { key: 'processors', header: m.systems.processors, render: (s) => (s.processors.length ? s.processors.join(', ') : m.common.none) },
    { key: 'answers', header: m.systems.answers, render: kinds },
    { key: 'status', nowrap: true, header: m.common.status, render: (s) => label(m.systems.statuses, s.status) },
  ];
  if (manager) {
    columns.push({
      key: 'actions',
      header: m.common.actions,
      render: (s) => (
        <div className="actions">
          <button type="button" className="button secondary" onClick={() => setEditing(s)}>
            {m.systems.edit}
            <span className="sr-only">{m.systems.editWhat(s.name)}</span>
          </button>
          {s.status === 'active' ? (
            <>
              <button type="button" className="button secondary" disabled={busy} onClick={() => void makeKey(s)}>
                {m.systems.createKey}
                <span className="sr-only">{m.systems.createKeyWhat(s.name)}</span>
              </button>
              <button type="button" className="button danger" onClick={() => setArchiving(s)}>
                {m.systems.archive}
                <span className="sr-only">{m.systems.archiveWhat(s.name)}</span>
              </button>
            </>
          ) : (
            <button type="button" className="button secondary" disabled={busy} onClick={() => void setStatus(s, 'active')}>
              {m.systems.reactivate}
              <span className="sr-only">{m.systems.reactivateWhat(s.name)}</span>
            </button>
          )}
        </div>
      ),
    });
  }

  return (
    <section>
      <h1>{m.systems.title}</h1>
      <p className="intro">{m.systems.intro}</p>
      {key ? (
        <div className="card reveal" role="region" aria-label={m.systems.keyTitle(key.system)}>
          <h2>{m.systems.keyTitle(key.system)}</h2>
          <p className="warning">{m.systems.keyShownOnce}</p>
          <p>
            <code className="secret" data-testid="system-key">
              {key.key.key}
            </code>
          </p>
          <div className="actions">
            <CopyButton value={key.key.key} />
            <button type="button" className="button secondary" onClick={() => setKey(null)}>
              {m.systems.done}
            </button>
          </div>
        </div>
      ) : null}
      {manager && !key ? (
        <SystemForm
          key={editing?.id ?? 'new'}
          editing={editing}
          categories={categories.data?.data ?? []}
          onSaved={(s, created) => {
            setNotice({ kind: 'success', text: created ? m.systems.created(s.name) : m.systems.saved(s.name) });
            setEditing(null);
            list.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={m.systems.empty}>
        {(d) => (
          <>
            <Table caption={m.systems.title} columns={columns} rows={d.data} rowKey={(s) => s.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
      <ConfirmDialog
        open={archiving !== null}
        title={m.systems.archiveTitle(archiving?.name ?? '')}
        confirmLabel={m.systems.archive}
        busy={busy}
        onConfirm={() => archiving && void setStatus(archiving, 'archived')}
        onCancel={() => setArchiving(null)}
      >
        <p>{m.systems.archiveBody}</p>
      </ConfirmDialog>
    </section>
  );
}

/** Registers a system, or edits one. */
function SystemForm(props: { editing: DataSystem | null; categories: DataCategory[]; onSaved: (s: DataSystem, created: boolean) => void; onCancel: () => void }) {
  const m = useMessages();
  const { editing } = props;
  const [name, setName] = useState(editing?.name ?? '');
  const [owner, setOwner] = useState(editing?.owner ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [held, setHeld] = useState<string[]>(editing?.category_ids ?? []);
  const [processors, setProcessors] = useState((editing?.processors ?? []).join('\n'));
  const [answers, setAnswers] = useState<Record<(typeof ANSWERS)[number], boolean>>({
    can_access: editing?.can_access ?? false,
    can_correct: editing?.can_correct ?? false,
    can_erase: editing?.can_erase ?? false,
  });
  const { busy, error, onSubmit } = useAction(async () => {
    const body = { name, owner, description: description.trim() ? description : null, category_ids: held, processors: linesOf(processors), ...answers };
    if (editing) props.onSaved(await call(api.PATCH('/api/v1/systems/{id}', { params: { path: { id: editing.id } }, body })), false);
    else props.onSaved(await call(api.POST('/api/v1/systems', { body })), true);
  });
  const toggle = (id: string, on: boolean) => setHeld((all) => (on ? [...all, id] : all.filter((x) => x !== id)));
  const answerLabels = { can_access: m.systems.canAccess, can_correct: m.systems.canCorrect, can_erase: m.systems.canErase };
  const categoryProblems = error?.problemsFor('category_ids') ?? [];
  const formId = editing ? `system-${editing.id}` : 'system-new';
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate aria-labelledby={`${formId}-title`}>
      <h2 id={`${formId}-title`}>{editing ? m.systems.editTitle(editing.name) : m.systems.add}</h2>
      <FormError error={error} fields={['name', 'owner', 'description', 'category_ids', 'processors', ...ANSWERS]} />
      <Field label={m.systems.name} field="name" error={error}>
        {(ids) => <input {...ids} required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label={m.systems.owner} field="owner" error={error} hint={m.systems.ownerHint}>
        {(ids) => <input {...ids} required maxLength={255} value={owner} onChange={(e) => setOwner(e.target.value)} />}
      </Field>
      <Field label={m.systems.description} field="description" error={error}>
        {(ids) => <textarea {...ids} rows={2} maxLength={2000} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <fieldset className={categoryProblems.length ? 'field-invalid' : undefined}>
        <legend>{m.systems.categories}</legend>
        {props.categories.length === 0 ? <p className="hint">{m.systems.noCategories}</p> : null}
        {props.categories.map((c) => (
          <div className="check" key={c.id}>
            <input id={`${formId}-category-${c.id}`} type="checkbox" checked={held.includes(c.id)} onChange={(e) => toggle(c.id, e.target.checked)} />
            <label htmlFor={`${formId}-category-${c.id}`}>{c.name}</label>
          </div>
        ))}
        {categoryProblems.length ? <span className="field-error">{categoryProblems.join('; ')}</span> : null}
      </fieldset>
      <Field label={m.systems.processors} field="processors" error={error} hint={m.systems.processorsHint}>
        {(ids) => <textarea {...ids} rows={2} value={processors} onChange={(e) => setProcessors(e.target.value)} />}
      </Field>
      <fieldset>
        <legend>{m.systems.answers}</legend>
        <p className="hint">{m.systems.answersHint}</p>
        {ANSWERS.map((a) => (
          <div className="check" key={a}>
            <input id={`${formId}-${a}`} type="checkbox" checked={answers[a]} onChange={(e) => setAnswers({ ...answers, [a]: e.target.checked })} />
            <label htmlFor={`${formId}-${a}`}>{answerLabels[a]}</label>
          </div>
        ))}
      </fieldset>
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.common.saving : editing ? m.systems.save : m.systems.submit}
        </button>
        {editing ? (
          <button type="button" className="button secondary" onClick={props.onCancel}>
            {m.common.cancel}
          </button>
        ) : null}
      </div>
    </form>
  );
}
