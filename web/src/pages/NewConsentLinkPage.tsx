// Generate a consent link: asset, then one of its active collection points, the phone, how long it is
// valid; the answer shows the link to copy and what was sent.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { useSession } from '../api/use-session';
import type { CreatedLink } from '../api/types';
import { CopyButton } from '../components/CopyButton';
import { Field, FormError } from '../components/fields';
import { DataState } from '../components/states';
import { useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { PAGES } from '../routes';

const FIELDS = ['asset_id', 'collection_point_id', 'phone', 'dp_id', 'email', 'expiry_hours', 'send_sms'];

export default function NewConsentLinkPage() {
  const m = useMessages();
  useTitle(m.consent.newLink, useSession().organization.name);
  const assets = useApi(() => call(api.GET('/api/v1/assets', { params: { query: { status: 'active', limit: 200 } } })), []);
  const [assetId, setAssetId] = useState('');
  const [created, setCreated] = useState<CreatedLink | null>(null);
  const chosenAsset = assetId || assets.data?.data[0]?.id || '';

  if (created) {
    return (
      <section>
        <h1>{m.consent.generated}</h1>
        <div className="card">
          <p className="label">{m.consent.linkLabel}</p>
          <p>
            <code className="link-value">{created.consent_link}</code>
          </p>
          <CopyButton value={created.consent_link} />
          <dl className="details">
            <dt>{m.consent.expiresAt}</dt>
            <dd>{formatDateTime(created.expires_at)}</dd>
            <dt>{m.consent.delivery}</dt>
            <dd>
              {Object.keys(created.delivery_status).length ? m.consent.deliveryQueued(Object.keys(created.delivery_status).join(', ')) : m.consent.deliveryNone}
            </dd>
            <dt>{m.consent.eventId}</dt>
            <dd>
              <code>{created.event_id}</code>
            </dd>
          </dl>
          <div className="actions">
            <button type="button" className="button secondary" onClick={() => setCreated(null)}>
              {m.consent.another}
            </button>
            <Link className="button secondary" href={`${PAGES.consentLinks}?asset_id=${encodeURIComponent(chosenAsset)}&event_id=${encodeURIComponent(created.event_id)}`}>
              {m.consent.toHistory}
            </Link>
          </div>
        </div>
      </section>
    );
  }

  return (
    <section>
      <h1>{m.consent.newLink}</h1>
      <DataState loaded={assets} isEmpty={(a) => a.count === 0} empty={m.consent.noAssets}>
        {(a) => (
          <>
            <Field label={m.consent.asset} className="asset-picker">
              {(ids) => (
                <select {...ids} value={chosenAsset} onChange={(e) => setAssetId(e.target.value)}>
                  {a.data.map((asset) => (
                    <option key={asset.id} value={asset.id}>
                      {asset.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <LinkForm key={chosenAsset} assetId={chosenAsset} onCreated={setCreated} />
          </>
        )}
      </DataState>
    </section>
  );
}

function LinkForm({ assetId, onCreated }: { assetId: string; onCreated: (link: CreatedLink) => void }) {
  const m = useMessages();
  const points = useApi(() => call(api.GET('/api/v1/collection-points', { params: { query: { asset_id: assetId, status: 'active', limit: 200 } } })), [assetId]);
  const [form, setForm] = useState({ collection_point_id: '', phone: '', dp_id: '', email: '', expiry_hours: '24', send_sms: true });
  const point = form.collection_point_id || points.data?.data[0]?.id || '';
  const { busy, error, onSubmit } = useAction(async () => {
    const hours = Number(form.expiry_hours);
    const body = {
      asset_id: assetId,
      collection_point_id: point,
      phone: form.phone,
      ...(form.dp_id.trim() ? { dp_id: form.dp_id } : {}),
      ...(form.email.trim() ? { email: form.email } : {}),
      // A non-number goes as typed, so the API names the problem.
      expiry_hours: (Number.isInteger(hours) ? hours : form.expiry_hours) as number,
      send_sms: form.send_sms,
    };
    onCreated(await call(api.POST('/api/v1/external/public/consent-link', { body })));
  });
  const change = (name: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [name]: e.target.value }));

  return (
    <DataState loaded={points} isEmpty={(p) => p.count === 0} empty={m.consent.noActivePoints}>
      {(p) => (
        <form className="card form" onSubmit={onSubmit()} noValidate>
          <FormError error={error} fields={FIELDS} />
          <Field label={m.consent.collectionPoint} field="collection_point_id" error={error}>
            {(ids) => (
              <select {...ids} value={point} onChange={change('collection_point_id')}>
                {p.data.map((cp) => (
                  <option key={cp.id} value={cp.id}>
                    {cp.display_id} · {cp.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label={m.consent.phone} field="phone" error={error} hint={m.consent.phoneHint}>
            {(ids) => <input {...ids} type="tel" inputMode="tel" autoComplete="off" required value={form.phone} onChange={change('phone')} />}
          </Field>
          <Field label={m.consent.dpId} field="dp_id" error={error} hint={m.consent.dpIdHint}>
            {(ids) => <input {...ids} value={form.dp_id} onChange={change('dp_id')} />}
          </Field>
          <Field label={m.consent.email} field="email" error={error} hint={m.consent.emailHint}>
            {(ids) => <input {...ids} type="email" value={form.email} onChange={change('email')} />}
          </Field>
          <Field label={m.consent.expiryHours} field="expiry_hours" error={error} hint={m.consent.expiryHint}>
            {(ids) => <input {...ids} type="number" min={1} max={24} step={1} value={form.expiry_hours} onChange={change('expiry_hours')} />}
          </Field>
          <div className="check">
            <input id="send-sms" type="checkbox" checked={form.send_sms} onChange={(e) => setForm((f) => ({ ...f, send_sms: e.target.checked }))} />
            <label htmlFor="send-sms">{m.consent.sendSms}</label>
          </div>
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? m.consent.generating : m.consent.generate}
          </button>
        </form>
      )}
    </DataState>
  );
}
