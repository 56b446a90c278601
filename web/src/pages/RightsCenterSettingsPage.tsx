// The Rights Center settings the truConsent SDKs' widget reads: access mode, grievance mode, colours,
// which sections it shows, their titles. One form; the API keeps fields that are not sent as they were.
import { useState } from 'react';
import { api, call } from '../api/client';
import type { Components as components } from '../api/types';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { useMessages } from '../i18n';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { useSession } from '../api/use-session';

type Settings = components['schemas']['RightsCenterSettings'];

const COLOURS = ['background_color', 'primary_text_color', 'secondary_text_color', 'button_color', 'button_text_color'] as const;
const SECTIONS = ['show_consents_section', 'show_rights_section', 'show_nominees_section', 'show_grievance_section', 'show_transparency_section', 'show_dpo_section'] as const;
const TITLES = ['consents_section_title', 'rights_section_title', 'nominees_section_title'] as const;
const DPO_FIELDS = ['dpo_qualifications_enabled', 'dpo_responsibilities_enabled', 'dpo_working_hours_enabled', 'dpo_response_time_enabled'] as const;

export default function RightsCenterSettingsPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.rightsCenter.title, session.organization.name);
  return <RightsCenterSettings />;
}

export function RightsCenterSettings() {
  const m = useMessages();
  const settings = useApi(() => call(api.GET('/api/v1/organization/rights-center-settings')), []);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section>
      <h1>{m.rightsCenter.title}</h1>
      <p>{m.rightsCenter.intro}</p>
      <Notice>{notice}</Notice>
      <DataState loaded={settings}>
        {(s) => (
          <SettingsForm
            initial={s}
            onSaved={() => {
              setNotice(m.common.saved);
              settings.reload();
            }}
          />
        )}
      </DataState>
      <AllowedOrigins onSaved={() => setNotice(m.common.saved)} />
    </section>
  );
}

/** The browser origins whose pages may call the data principal's API and the SDK surface (CORS). */
function AllowedOrigins({ onSaved }: { onSaved: () => void }) {
  const m = useMessages();
  const organization = useApi(() => call(api.GET('/api/v1/organization')), []);
  return (
    <DataState loaded={organization}>
      {(org) => (
        <OriginsForm
          initial={org.allowed_origins}
          onSaved={() => {
            onSaved();
            organization.reload();
          }}
          labels={m.rightsCenter}
        />
      )}
    </DataState>
  );
}

function OriginsForm({ initial, onSaved, labels }: { initial: string[]; onSaved: () => void; labels: ReturnType<typeof useMessages>['rightsCenter'] }) {
  const m = useMessages();
  const [text, setText] = useState(initial.join('\n'));
  const { busy, error, onSubmit } = useAction(async () => {
    const allowed_origins = text
      .split(/[\s,]+/)
      .map((o) => o.trim())
      .filter((o) => o !== '');
    await call(api.PATCH('/api/v1/organization', { body: { allowed_origins } }));
    onSaved();
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{labels.originsTitle}</h2>
      <p>{labels.originsIntro}</p>
      <FormError error={error} fields={['allowed_origins']} />
      <Field label={labels.originsLabel} field="allowed_origins" error={error} hint={labels.originsHint}>
        {(ids) => <textarea {...ids} rows={4} value={text} onChange={(e) => setText(e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.common.save}
      </button>
    </form>
  );
}

function SettingsForm({ initial, onSaved }: { initial: Settings; onSaved: () => void }) {
  const m = useMessages();
  const t = m.rightsCenter;
  const [form, setForm] = useState<Settings>(initial);
  const set = <K extends keyof Settings>(k: K, v: Settings[K]) => setForm((f) => ({ ...f, [k]: v }));
  const { busy, error, onSubmit } = useAction(async () => {
    await call(api.PATCH('/api/v1/organization/rights-center-settings', { body: form }));
    onSaved();
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <FormError error={error} fields={Object.keys(initial)} />
      <Field label={t.accessMode} field="access_mode" error={error} hint={t.accessModeHint}>
        {(ids) => (
          <select {...ids} value={form.access_mode} onChange={(e) => set('access_mode', e.target.value as Settings['access_mode'])}>
            <option value="sso">{t.sso}</option>
            <option value="non_sso">{t.nonSso}</option>
          </select>
        )}
      </Field>
      <Field label={t.grievanceMode} field="grievance_mode" error={error}>
        {(ids) => (
          <select {...ids} value={form.grievance_mode} onChange={(e) => set('grievance_mode', e.target.value as Settings['grievance_mode'])}>
            <option value="truconsent">{t.grievanceHere}</option>
            <option value="external">{t.grievanceExternal}</option>
          </select>
        )}
      </Field>
      <Field label={t.externalUrl} field="grievance_external_url" error={error}>
        {(ids) => <input {...ids} type="url" maxLength={2048} value={form.grievance_external_url} onChange={(e) => set('grievance_external_url', e.target.value)} />}
      </Field>
      <fieldset>
        <legend>{t.colours}</legend>
        {COLOURS.map((k) => (
          <Field key={k} label={t.labels[k] ?? k} field={k} error={error}>
            {(ids) => <input {...ids} type="color" value={form[k]} onChange={(e) => set(k, e.target.value)} />}
          </Field>
        ))}
        <Field label={t.font} field="font_family" error={error}>
          {(ids) => <input {...ids} maxLength={100} value={form.font_family} onChange={(e) => set('font_family', e.target.value)} />}
        </Field>
      </fieldset>
      <fieldset>
        <legend>{t.sections}</legend>
        {[...SECTIONS, ...DPO_FIELDS].map((k) => (
          <div className="check" key={k}>
            <input id={`rc-${k}`} type="checkbox" checked={form[k]} onChange={(e) => set(k, e.target.checked)} />
            <label htmlFor={`rc-${k}`}>{t.labels[k] ?? k}</label>
          </div>
        ))}
      </fieldset>
      {TITLES.map((k) => (
        <Field key={k} label={t.labels[k] ?? k} field={k} error={error}>
          {(ids) => <input {...ids} maxLength={255} value={form[k]} onChange={(e) => set(k, e.target.value)} />}
        </Field>
      ))}
      <Field label={t.labels.transparency_description ?? "Transparency"} field="transparency_description" error={error}>
        {(ids) => <textarea {...ids} rows={3} maxLength={5000} value={form.transparency_description} onChange={(e) => set('transparency_description', e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.common.save}
      </button>
    </form>
  );
}
