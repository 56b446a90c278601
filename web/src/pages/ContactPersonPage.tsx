// Settings → Contact person: whom data principals contact (DPDP Rule 9; GET /dpo, PUT
// /api/v1/organization/dpo), shown on the consent page, the Rights Center and every message about a
// ticket; and the grievance period the organization publishes (DPDP Rule 14(3); PATCH /api/v1/organization).
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import type { Components as components } from '../api/types';
import { useSession } from '../api/use-session';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { useMessages } from '../i18n';
import { contactPersonChanged } from '../lib/contact-person';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

type Person = components['schemas']['ContactPerson'];
const TEXT_FIELDS = ['full_name', 'email', 'phone', 'working_hours', 'response_time', 'qualifications', 'responsibilities'] as const;
type Form = Record<(typeof TEXT_FIELDS)[number], string>;

export default function ContactPersonPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.contactPerson.title, session.organization.name);
  const [notice, setNotice] = useState<string | null>(null);
  // 404: none set yet, an empty form.
  const person = useApi(
    () =>
      call(api.GET('/dpo')).catch((e: unknown) => {
        if (ApiError.of(e).status === 404) return null;
        throw e;
      }),
    [],
  );
  return (
    <section>
      <h1>{m.contactPerson.title}</h1>
      <p>{m.contactPerson.intro}</p>
      <Notice>{notice}</Notice>
      <DataState loaded={person}>
        {(p) => (
          <PersonForm
            initial={p}
            onSaved={() => {
              setNotice(m.contactPerson.saved);
              contactPersonChanged();
              person.reload();
            }}
          />
        )}
      </DataState>
      <GrievancePeriod onSaved={() => setNotice(m.contactPerson.periodSaved)} />
    </section>
  );
}

function PersonForm({ initial, onSaved }: { initial: Person | null; onSaved: () => void }) {
  const m = useMessages();
  const t = m.contactPerson;
  const [form, setForm] = useState<Form>(() => Object.fromEntries(TEXT_FIELDS.map((k) => [k, initial?.[k] ?? ''])) as Form);
  const set = (k: keyof Form, v: string) => setForm((f) => ({ ...f, [k]: v }));
  const { busy, error, onSubmit } = useAction(async () => {
    // The whole record: an empty optional field is cleared; the appointment date is kept as it was.
    const optional = (v: string) => (v.trim() === '' ? null : v.trim());
    await call(
      api.PUT('/api/v1/organization/dpo', {
        body: {
          full_name: form.full_name,
          email: form.email,
          phone: optional(form.phone),
          working_hours: optional(form.working_hours),
          response_time: optional(form.response_time),
          qualifications: optional(form.qualifications),
          responsibilities: optional(form.responsibilities),
          appointment_date: initial?.appointment_date ?? null,
        },
      }),
    );
    onSaved();
  });
  const input = (k: keyof Form, type: 'text' | 'email' | 'tel', max: number, hint?: string) => (
    <Field key={k} label={t.labels[k]} field={k} error={error} hint={hint}>
      {(ids) => <input {...ids} type={type} maxLength={max} value={form[k]} onChange={(e) => set(k, e.target.value)} />}
    </Field>
  );
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{t.personTitle}</h2>
      <FormError error={error} fields={[...TEXT_FIELDS]} />
      {input('full_name', 'text', 255)}
      {input('email', 'email', 254)}
      {input('phone', 'tel', 20, t.phoneHint)}
      {input('working_hours', 'text', 255, t.hoursHint)}
      {input('response_time', 'text', 255, t.responseHint)}
      <Field label={t.labels.qualifications} field="qualifications" error={error}>
        {(ids) => <textarea {...ids} rows={2} maxLength={1000} value={form.qualifications} onChange={(e) => set('qualifications', e.target.value)} />}
      </Field>
      <Field label={t.labels.responsibilities} field="responsibilities" error={error}>
        {(ids) => <textarea {...ids} rows={3} maxLength={2000} value={form.responsibilities} onChange={(e) => set('responsibilities', e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.common.save}
      </button>
    </form>
  );
}

function GrievancePeriod({ onSaved }: { onSaved: () => void }) {
  const organization = useApi(() => call(api.GET('/api/v1/organization')), []);
  return (
    <DataState loaded={organization}>
      {(org) => (
        <PeriodForm
          initial={org.grievance_period_days}
          onSaved={() => {
            onSaved();
            organization.reload();
          }}
        />
      )}
    </DataState>
  );
}

function PeriodForm({ initial, onSaved }: { initial: number; onSaved: () => void }) {
  const m = useMessages();
  const t = m.contactPerson;
  const [days, setDays] = useState(String(initial));
  const { busy, error, onSubmit } = useAction(async () => {
    await call(api.PATCH('/api/v1/organization', { body: { grievance_period_days: Number(days) } }));
    onSaved();
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{t.periodTitle}</h2>
      <p>{t.periodIntro}</p>
      <FormError error={error} fields={['grievance_period_days']} />
      <Field label={t.periodLabel} field="grievance_period_days" error={error} hint={t.periodHint}>
        {(ids) => <input {...ids} type="number" min={1} max={90} step={1} inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} />}
      </Field>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.saving : m.common.save}
      </button>
    </form>
  );
}
