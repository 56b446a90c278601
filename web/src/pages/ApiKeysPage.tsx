// Settings, API keys: generate one (name and scopes; the key is shown once, with a copy button and a
// warning), list them (prefix, scopes, last use), revoke after a confirmation.
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import { useSession } from '../api/use-session';
import type { ApiKey, CreatedApiKey } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { SCOPES } from '../lib/enums';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

type Scope = (typeof SCOPES)[number];

export default function ApiKeysPage() {
  const m = useMessages();
  useTitle(m.apiKeys.title, useSession().organization.name);
  const keys = useApi(() => call(api.GET('/api/v1/api-keys')), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await call(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: revoking.id } } }));
      setNotice({ kind: 'success', text: m.apiKeys.revokedNotice(revoking.name || m.apiKeys.unnamed) });
      keys.reload();
    } catch (e) {
      setNotice({ kind: 'error', text: (e as ApiError).message });
    } finally {
      setBusy(false);
      setRevoking(null);
    }
  };

  const columns: Column<ApiKey>[] = [
    { key: 'name', header: m.common.name, render: (k) => k.name || m.apiKeys.unnamed },
    { key: 'prefix', nowrap: true, header: m.apiKeys.prefix, render: (k) => <code>{k.prefix}…</code> },
    { key: 'scopes', header: m.apiKeys.scopes, render: (k) => k.scopes.join(', ') },
    { key: 'created', nowrap: true, header: m.common.created, render: (k) => formatDateTime(k.created_at) },
    { key: 'used', nowrap: true, header: m.apiKeys.lastUsed, render: (k) => (k.last_used_at ? formatDateTime(k.last_used_at) : m.apiKeys.never) },
    {
      key: 'status',
      header: m.common.status,
      render: (k) => (k.revoked_at ? `${m.apiKeys.revoked} ${formatDateTime(k.revoked_at)}` : m.apiKeys.active),
    },
    {
      key: 'actions',
      header: m.common.actions,
      render: (k) =>
        k.revoked_at ? null : (
          <button type="button" className="button danger" onClick={() => setRevoking(k)}>
            {m.apiKeys.revoke}
            <span className="sr-only"> {k.name || k.prefix}</span>
          </button>
        ),
    },
  ];

  return (
    <section>
      <h1>{m.apiKeys.title}</h1>
      <p className="intro">{m.apiKeys.intro}</p>
      {created ? (
        <div className="card reveal" role="region" aria-label={m.apiKeys.yourKey}>
          <h2>{m.apiKeys.yourKey}</h2>
          <p className="warning">{m.apiKeys.shownOnce}</p>
          <p>
            <code className="secret" data-testid="new-api-key">
              {created.key}
            </code>
          </p>
          <div className="actions">
            <CopyButton value={created.key} />
            <button type="button" className="button secondary" onClick={() => setCreated(null)}>
              {m.apiKeys.done}
            </button>
          </div>
        </div>
      ) : (
        <NewKey
          onCreated={(k) => {
            setCreated(k);
            setNotice(null);
            keys.reload();
          }}
        />
      )}
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={keys} isEmpty={(k) => k.length === 0} empty={m.apiKeys.empty}>
        {(k) => <Table caption={m.apiKeys.title} columns={columns} rows={k} rowKey={(x) => x.id} />}
      </DataState>
      <ConfirmDialog
        open={revoking !== null}
        title={m.apiKeys.revokeTitle(revoking?.name || revoking?.prefix || '')}
        confirmLabel={m.apiKeys.revoke}
        busy={busy}
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>{m.apiKeys.revokeBody}</p>
      </ConfirmDialog>
    </section>
  );
}

function NewKey({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const m = useMessages();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const toggle = (s: Scope, on: boolean) => setScopes((all) => (on ? [...all, s] : all.filter((x) => x !== s)));
  const { busy, error, onSubmit } = useAction(async () => {
    onCreated(await call(api.POST('/api/v1/api-keys', { body: { name, scopes } })));
    setName('');
    setScopes([]);
  });
  const scopeProblems = error?.problemsFor('scopes') ?? [];
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.apiKeys.generate}</h2>
      <FormError error={error} fields={['name', 'scopes']} />
      <Field label={m.common.name} field="name" error={error}>
        {(ids) => <input {...ids} required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <fieldset className={scopeProblems.length ? 'field-invalid' : undefined} aria-describedby="scopes-hint">
        <legend>{m.apiKeys.scopes}</legend>
        <span className="hint" id="scopes-hint">
          {m.apiKeys.scopesHint}
        </span>
        {SCOPES.map((s) => (
          <div className="check" key={s}>
            <input id={`scope-${s}`} type="checkbox" checked={scopes.includes(s)} onChange={(e) => toggle(s, e.target.checked)} />
            <label htmlFor={`scope-${s}`}>{label(m.labels.scope, s)}</label>
          </div>
        ))}
        {scopeProblems.length ? <span className="field-error">{scopeProblems.join('; ')}</span> : null}
      </fieldset>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.creating : m.apiKeys.submit}
      </button>
    </form>
  );
}
