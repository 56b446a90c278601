// Settings → Signing keys: the Ed25519 keys the organization signs consent receipts with (GET
// /api/v1/organization/signing-keys), and a rotation after a confirmation (POST …/rotate). A retired key
// stays published, so every receipt it signed still verifies.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { Components as components } from '../api/types';
import { useSession } from '../api/use-session';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

type SigningKey = components['schemas']['SigningKey'];

export default function SigningKeysPage() {
  const m = useMessages();
  const t = m.signingKeys;
  const session = useSession();
  useTitle(t.title, session.organization.name);
  const keys = useApi(() => call(api.GET('/api/v1/organization/signing-keys')), []);
  const [confirming, setConfirming] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const { busy, error, run } = useAction(async () => {
    const rotated = await call(api.POST('/api/v1/organization/signing-keys/rotate', {}));
    setConfirming(false);
    setNotice(t.rotated(rotated.kid));
    keys.reload();
  });
  const columns: Column<SigningKey>[] = [
    { key: 'kid', header: t.kid, render: (k) => <code>{k.kid}</code> },
    { key: 'state', header: t.state, render: (k) => (k.current ? t.current : t.retired), nowrap: true },
    { key: 'created_at', header: t.created, render: (k) => formatDateTime(k.created_at), nowrap: true },
    { key: 'retired_at', header: t.retiredAt, render: (k) => (k.retired_at ? formatDateTime(k.retired_at) : m.common.none), nowrap: true },
  ];
  return (
    <section>
      <div className="title-row">
        <h1>{t.title}</h1>
        <button type="button" className="button primary" onClick={() => setConfirming(true)}>
          {t.rotate}
        </button>
      </div>
      <p className="intro">{t.intro}</p>
      <Notice>{notice}</Notice>
      {error ? <Notice kind="error">{error.message}</Notice> : null}
      <DataState loaded={keys}>{(list) => <Table caption={t.title} columns={columns} rows={list} rowKey={(k) => k.kid} />}</DataState>
      <ConfirmDialog open={confirming} title={t.rotateTitle} confirmLabel={t.rotate} busy={busy} onConfirm={() => void run()} onCancel={() => setConfirming(false)}>
        <p>{t.rotateBody}</p>
      </ConfirmDialog>
    </section>
  );
}
