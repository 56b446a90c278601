// One asset: rename or re-kind it, deactivate or activate it, its collection points and a new one.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { canChange, useSession } from '../api/use-session';
import type { Asset, CollectionPoint } from '../api/types';
import { StatusBadge } from '../components/Badge';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { newPurpose, PurposesEditor, purposesBody, type PurposeDraft } from '../components/PurposesEditor';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { AssetFields } from './AssetFields';
import { pathTo, PAGES } from '../routes';

export default function AssetPage({ assetId }: { assetId: string }) {
  const m = useMessages();
  const session = useSession();
  const asset = useApi(() => call(api.GET('/api/v1/assets/{id}', { params: { path: { id: assetId } } })), [assetId]);
  const points = useApi(() => call(api.GET('/api/v1/collection-points', { params: { query: { asset_id: assetId, limit: 200 } } })), [assetId]);
  useTitle(asset.data?.name ?? m.assets.title, session.organization.name);
  const [notice, setNotice] = useState<string | null>(null);
  const manager = canChange(session);

  const columns: Column<CollectionPoint>[] = [
    { key: 'id', nowrap: true, header: m.assets.displayId, render: (p) => <Link href={pathTo(PAGES.collectionPoint, { pointId: p.id })}>{p.display_id}</Link> },
    { key: 'name', header: m.common.name, render: (p) => p.name },
    { key: 'purposes', header: m.assets.purposes, numeric: true, render: (p) => p.purposes.length },
    { key: 'version', header: m.assets.noticeVersion, numeric: true, render: (p) => p.notice_version },
    { key: 'status', header: m.common.status, render: (p) => <StatusBadge status={p.status} /> },
    { key: 'updated', nowrap: true, header: m.common.updated, render: (p) => formatDateTime(p.updated_at) },
  ];

  return (
    <section>
      <p>
        <Link href={PAGES.assets}>← {m.assets.backToAssets}</Link>
      </p>
      <DataState loaded={asset}>
        {(a) => (
          <>
            <div className="title-row">
              <h1>{a.name}</h1>
              <StatusBadge status={a.status} />
            </div>
            <Notice>{notice}</Notice>
            {manager ? (
              <AssetForm
                key={a.updated_at}
                asset={a}
                onSaved={(text) => {
                  setNotice(text);
                  asset.reload();
                }}
              />
            ) : (
              <p>
                {m.assets.kind}: {label(m.labels.kind, a.kind)}
              </p>
            )}
          </>
        )}
      </DataState>
      <h2>{m.assets.points}</h2>
      <DataState loaded={points} isEmpty={(p) => p.count === 0} empty={m.assets.noPoints}>
        {(p) => <Table caption={m.assets.points} columns={columns} rows={p.data} rowKey={(x) => x.id} />}
      </DataState>
      {manager && asset.data ? (
        <NewPoint
          assetId={assetId}
          onCreated={(name) => {
            setNotice(m.assets.created(name));
            points.reload();
          }}
        />
      ) : null}
    </section>
  );
}

function AssetForm({ asset, onSaved }: { asset: Asset; onSaved: (notice: string) => void }) {
  const m = useMessages();
  const [name, setName] = useState(asset.name);
  const [kind, setKind] = useState(asset.kind);
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run: patch, onSubmit } = useAction(async (body: { name?: string; kind?: Asset['kind']; status?: Asset['status'] }) => {
    setConfirming(false);
    await call(api.PATCH('/api/v1/assets/{id}', { params: { path: { id: asset.id } }, body }));
    onSaved(m.common.saved);
  });
  const toggle = () => (asset.status === 'active' ? setConfirming(true) : void patch({ status: 'active' }));

  return (
    <form className="card form" onSubmit={onSubmit({ name, kind })} noValidate>
      <h2>{m.assets.edit}</h2>
      <FormError error={error} fields={['name', 'kind']} />
      <AssetFields name={name} kind={kind} onName={setName} onKind={setKind} error={error} />
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.common.saving : m.common.save}
        </button>
        <button type="button" className={`button ${asset.status === 'active' ? 'danger' : 'secondary'}`} disabled={busy} onClick={toggle}>
          {asset.status === 'active' ? m.assets.deactivate : m.assets.activate}
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={m.assets.deactivateTitle(asset.name)}
        confirmLabel={m.assets.deactivate}
        busy={busy}
        onConfirm={() => void patch({ status: 'inactive' })}
        onCancel={() => setConfirming(false)}
      >
        <p>{m.assets.deactivateBody}</p>
      </ConfirmDialog>
    </form>
  );
}

function NewPoint({ assetId, onCreated }: { assetId: string; onCreated: (name: string) => void }) {
  const m = useMessages();
  const [name, setName] = useState('');
  const [displayId, setDisplayId] = useState('');
  const [notice, setNotice] = useState('');
  const [purposes, setPurposes] = useState<PurposeDraft[]>(() => [newPurpose()]);
  const { busy, error, onSubmit } = useAction(async () => {
    const body = { asset_id: assetId, name, notice, purposes: purposesBody(purposes), ...(displayId.trim() ? { display_id: displayId.trim() } : {}) };
    const point = await call(api.POST('/api/v1/collection-points', { body }));
    setName('');
    setDisplayId('');
    setNotice('');
    setPurposes([newPurpose()]);
    onCreated(`${point.display_id} · ${point.name}`);
  });

  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.assets.newPoint}</h2>
      <FormError error={error} fields={['name', 'display_id', 'notice', 'purposes']} />
      <Field label={m.common.name} field="name" error={error}>
        {(ids) => <input {...ids} required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label={m.assets.displayId} field="display_id" error={error} hint={m.assets.displayIdHint}>
        {(ids) => <input {...ids} maxLength={32} value={displayId} onChange={(e) => setDisplayId(e.target.value.toUpperCase())} />}
      </Field>
      <Field label={m.assets.notice} field="notice" error={error} hint={m.assets.noticeHint}>
        {(ids) => <textarea {...ids} rows={4} required value={notice} onChange={(e) => setNotice(e.target.value)} />}
      </Field>
      <PurposesEditor rows={purposes} onChange={setPurposes} error={error} />
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.creating : m.common.create}
      </button>
    </form>
  );
}
