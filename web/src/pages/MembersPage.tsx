// Settings, members: who belongs to the organization and with which role; add, change role, remove.
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import { useSession } from '../api/use-session';
import type { Member } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/fields';
import { Options } from '../components/Filters';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { ROLES } from '../lib/enums';
import { formatDateTime } from '../lib/format';
import { intParam, useSearchState } from '../lib/search-state';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

type Role = (typeof ROLES)[number];

export default function MembersPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.members.title, session.organization.name);
  const [params, update] = useSearchState();
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const members = useApi(() => call(api.GET('/api/v1/members', { params: { query: { limit, offset } } })), [limit, offset]);
  const [notice, setNotice] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [busy, setBusy] = useState(false);

  const changeRole = async (member: Member, role: Role) => {
    setNotice(null);
    try {
      await call(api.PATCH('/api/v1/members/{user_id}', { params: { path: { user_id: member.user_id } }, body: { role } }));
      setNotice({ kind: 'success', text: m.members.roleChanged(member.email, label(m.labels.role, role)) });
    } catch (e) {
      setNotice({ kind: 'error', text: (e as ApiError).message });
    }
    members.reload();
  };
  const remove = async () => {
    if (!removing) return;
    setBusy(true);
    try {
      await call(api.DELETE('/api/v1/members/{user_id}', { params: { path: { user_id: removing.user_id } } }));
      setNotice({ kind: 'success', text: m.members.removed(removing.email) });
      members.reload();
    } catch (e) {
      setNotice({ kind: 'error', text: (e as ApiError).message });
    } finally {
      setBusy(false);
      setRemoving(null);
    }
  };

  const columns: Column<Member>[] = [
    { key: 'email', header: m.members.email, render: (x) => (x.user_id === session.user.id ? `${x.email} (${m.members.you})` : x.email) },
    {
      key: 'role',
      header: m.members.role,
      render: (x) => (
        <select aria-label={m.members.changeRole(x.email)} value={x.role} onChange={(e) => void changeRole(x, e.target.value as Role)}>
          <Options values={ROLES} labels={m.labels.role} />
        </select>
      ),
    },
    { key: 'joined', nowrap: true, header: m.members.joined, render: (x) => formatDateTime(x.created_at) },
    {
      key: 'actions',
      header: m.common.actions,
      render: (x) => (
        <button type="button" className="button danger" onClick={() => setRemoving(x)}>
          {m.members.remove}
          <span className="sr-only"> {x.email}</span>
        </button>
      ),
    },
  ];

  return (
    <section>
      <h1>{m.members.title}</h1>
      <p className="intro">{m.members.intro}</p>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={members}>
        {(d) => (
          <>
            <Table caption={m.members.title} columns={columns} rows={d.data} rowKey={(x) => x.user_id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
      <AddMember
        onAdded={(email) => {
          setNotice({ kind: 'success', text: m.members.added(email) });
          members.reload();
        }}
      />
      <ConfirmDialog
        open={removing !== null}
        title={m.members.removeTitle(removing?.email ?? '')}
        confirmLabel={m.members.remove}
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setRemoving(null)}
      >
        <p>{m.members.removeBody}</p>
      </ConfirmDialog>
    </section>
  );
}

function AddMember({ onAdded }: { onAdded: (email: string) => void }) {
  const m = useMessages();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useAction(async () => {
    const added = await call(api.POST('/api/v1/members', { body: { email, role, ...(password ? { password } : {}) } }));
    setEmail('');
    setPassword('');
    onAdded(added.email);
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.members.add}</h2>
      <FormError error={error} fields={['email', 'role', 'password']} />
      <Field label={m.members.email} field="email" error={error}>
        {(ids) => <input {...ids} type="email" autoComplete="off" required value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <Field label={m.members.role} field="role" error={error}>
        {(ids) => (
          <select {...ids} value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <Options values={ROLES} labels={m.labels.role} />
          </select>
        )}
      </Field>
      <Field label={m.members.password} field="password" error={error} hint={m.members.passwordHint}>
        {(ids) => <input {...ids} type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.members.submit}
      </button>
    </form>
  );
}
