// One collection point: edit its name, notice and purposes (a new notice version when the notice or the
// purposes change), deactivate or activate it. Members see it read-only.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { canChange, useSession } from '../api/use-session';
import type { CollectionPoint, CollectionPointChanges } from '../api/types';
import { StatusBadge } from '../components/Badge';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { PurposesEditor, purposesBody, type PurposeDraft } from '../components/PurposesEditor';
import { DataState } from '../components/states';
import { useMessages } from '../i18n';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { pathTo, PAGES } from '../routes';

export default function CollectionPointPage({ pointId }: { pointId: string }) {
  const m = useMessages();
  const session = useSession();
  const point = useApi(() => call(api.GET('/api/v1/collection-points/{id}', { params: { path: { id: pointId } } })), [pointId]);
  useTitle(point.data?.name ?? m.assets.points, session.organization.name);
  const [notice, setNotice] = useState<string | null>(null);

  return (
    <section>
      <DataState loaded={point}>
        {(p) => (
          <>
            <p>
              <Link href={pathTo(PAGES.asset, { assetId: p.asset_id })}>← {m.assets.backToAsset}</Link>
            </p>
            <div className="title-row">
              <h1>
                {p.display_id} · {p.name}
              </h1>
              <StatusBadge status={p.status} />
            </div>
            <p className="muted">
              {m.assets.noticeVersion}: {p.notice_version}
            </p>
            <Notice>{notice}</Notice>
            {canChange(session) ? (
              <PointForm
                key={p.updated_at}
                point={p}
                onSaved={() => {
                  setNotice(m.common.saved);
                  point.reload();
                }}
              />
            ) : (
              <ReadOnlyPoint point={p} />
            )}
          </>
        )}
      </DataState>
    </section>
  );
}

function ReadOnlyPoint({ point }: { point: CollectionPoint }) {
  const m = useMessages();
  return (
    <>
      <h2>{m.assets.notice}</h2>
      <p className="prose">{point.notice}</p>
      <h2>{m.assets.purposes}</h2>
      <ul>
        {point.purposes.map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong>
            {p.required ? ` (${m.assets.purposeRequired})` : ''}
            {p.description ? `: ${p.description}` : ''}
          </li>
        ))}
      </ul>
    </>
  );
}

function PointForm({ point, onSaved }: { point: CollectionPoint; onSaved: () => void }) {
  const m = useMessages();
  const [name, setName] = useState(point.name);
  const [notice, setNotice] = useState(point.notice);
  const [purposes, setPurposes] = useState<PurposeDraft[]>(() => point.purposes.map((p) => ({ ...p, key: p.id })));
  const [confirming, setConfirming] = useState(false);
  const { busy, error, run: patch, onSubmit } = useAction(async (body: CollectionPointChanges) => {
    setConfirming(false);
    await call(api.PATCH('/api/v1/collection-points/{id}', { params: { path: { id: point.id } }, body }));
    onSaved();
  });

  return (
    <form className="card form" onSubmit={onSubmit({ name, notice, purposes: purposesBody(purposes) })} noValidate>
      <h2>{m.assets.editPoint}</h2>
      <p className="hint">{m.assets.versionNote}</p>
      <FormError error={error} fields={['name', 'notice', 'purposes', 'status']} />
      <Field label={m.common.name} field="name" error={error}>
        {(ids) => <input {...ids} required maxLength={255} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <Field label={m.assets.notice} field="notice" error={error} hint={m.assets.noticeHint}>
        {(ids) => <textarea {...ids} rows={6} required value={notice} onChange={(e) => setNotice(e.target.value)} />}
      </Field>
      <PurposesEditor rows={purposes} onChange={setPurposes} error={error} />
      <div className="actions">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? m.common.saving : m.common.save}
        </button>
        <button
          type="button"
          className={`button ${point.status === 'active' ? 'danger' : 'secondary'}`}
          disabled={busy}
          onClick={() => (point.status === 'active' ? setConfirming(true) : void patch({ status: 'active' }))}
        >
          {point.status === 'active' ? m.assets.deactivate : m.assets.activate}
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={m.assets.deactivatePointTitle(point.name)}
        confirmLabel={m.assets.deactivate}
        busy={busy}
        onConfirm={() => void patch({ status: 'inactive' })}
        onCancel={() => setConfirming(false)}
      >
        <p>{m.assets.deactivatePointBody}</p>
      </ConfirmDialog>
    </form>
  );
}
