// Settings, Webhooks: add an endpoint (URL, events; the signing secret is shown once), list them, turn a
// disabled one back on, rotate its secret, send a test event, see its deliveries, every attempt of one,
// and retry one, delete.
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import { webhookEventTypes } from '../../../clients/typescript/src/index';
import { useSession } from '../api/use-session';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEventType } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { Field, FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

/** What an endpoint can subscribe to: generated from the API's document (clients/typescript/src/webhook-events.ts). */
export const EVENT_TYPES: readonly WebhookEventType[] = webhookEventTypes;

type Notice = { kind: 'success' | 'error'; text: string } | null;

export default function WebhooksPage() {
  const m = useMessages();
  useTitle(m.webhooks.title, useSession().organization.name);
  return <Webhooks />;
}

/** The page without its document title (what the component test renders). */
export function Webhooks() {
  const m = useMessages();
  const endpoints = useApi(() => call(api.GET('/api/v1/webhooks')), []);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [removing, setRemoving] = useState<WebhookEndpoint | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState(false);

  const act = async (run: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    try {
      await run();
    } catch (e) {
      setNotice({ kind: 'error', text: (e as ApiError).message });
    } finally {
      setBusy(false);
    }
  };
  const path = (id: string) => ({ params: { path: { id } } });
  const rotate = (e: WebhookEndpoint) =>
    act(async () => {
      const r = await call(api.POST('/api/v1/webhooks/{id}/rotate-secret', path(e.id)));
      setSecret({ url: r.url, secret: r.secret });
    });
  const enable = (e: WebhookEndpoint) =>
    act(async () => {
      await call(api.PATCH('/api/v1/webhooks/{id}', { ...path(e.id), body: { enabled: true } }));
      endpoints.reload();
    });
  const sendTest = (e: WebhookEndpoint) =>
    act(async () => {
      await call(api.POST('/api/v1/webhooks/{id}/test', path(e.id)));
      setNotice({ kind: 'success', text: m.webhooks.testQueued });
      setOpen(e.id);
    });
  const remove = () =>
    act(async () => {
      if (!removing) return;
      await call(api.DELETE('/api/v1/webhooks/{id}', path(removing.id)));
      setNotice({ kind: 'success', text: m.webhooks.removed });
      setRemoving(null);
      endpoints.reload();
    });

  const columns: Column<WebhookEndpoint>[] = [
    { key: 'url', header: m.webhooks.url, render: (e) => <code>{e.url}</code> },
    { key: 'events', header: m.webhooks.events, render: (e) => e.events.join(', ') },
    { key: 'status', header: m.common.status, render: (e) => (e.enabled ? m.webhooks.enabled : m.webhooks.disabled(e.disabled_reason)) },
    {
      key: 'actions',
      header: m.common.actions,
      render: (e) => (
        <div className="actions">
          {e.enabled ? null : (
            <button type="button" className="button secondary" disabled={busy} onClick={() => void enable(e)}>
              {m.webhooks.enable}
            </button>
          )}
          <button type="button" className="button secondary" disabled={busy || !e.enabled} onClick={() => void sendTest(e)}>
            {m.webhooks.sendTest}
          </button>
          <button type="button" className="button secondary" disabled={busy} onClick={() => void rotate(e)}>
            {m.webhooks.rotate}
          </button>
          <button type="button" className="button secondary" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>
            {m.webhooks.showDeliveries}
          </button>
          <button type="button" className="button danger" onClick={() => setRemoving(e)}>
            {m.webhooks.remove}
          </button>
        </div>
      ),
    },
  ];

  return (
    <section>
      <h1>{m.webhooks.title}</h1>
      <p className="intro">{m.webhooks.intro}</p>
      {secret ? (
        <div className="card reveal" role="region" aria-label={m.webhooks.secretTitle}>
          <h2>{m.webhooks.secretTitle}</h2>
          <p>
            <code>{secret.url}</code>
          </p>
          <p className="warning">{m.webhooks.shownOnce}</p>
          <p>
            <code className="secret" data-testid="webhook-secret">
              {secret.secret}
            </code>
          </p>
          <div className="actions">
            <CopyButton value={secret.secret} />
            <button type="button" className="button secondary" onClick={() => setSecret(null)}>
              {m.webhooks.done}
            </button>
          </div>
        </div>
      ) : (
        <NewEndpoint
          onCreated={(url, s) => {
            setSecret({ url, secret: s });
            setNotice(null);
            endpoints.reload();
          }}
        />
      )}
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      <DataState loaded={endpoints} isEmpty={(d) => d.data.length === 0} empty={m.webhooks.empty}>
        {(d) => <Table caption={m.webhooks.title} columns={columns} rows={d.data} rowKey={(x) => x.id} />}
      </DataState>
      {open ? <Deliveries key={open} endpointId={open} onNotice={setNotice} /> : null}
      <ConfirmDialog
        open={removing !== null}
        title={m.webhooks.removeTitle(removing?.url ?? '')}
        confirmLabel={m.webhooks.remove}
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setRemoving(null)}
      >
        <p>{m.webhooks.removeBody}</p>
      </ConfirmDialog>
    </section>
  );
}

function Deliveries({ endpointId, onNotice }: { endpointId: string; onNotice: (n: Notice) => void }) {
  const m = useMessages();
  const list = useApi(() => call(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: endpointId } } })), [endpointId]);
  const retry = async (d: WebhookDelivery) => {
    try {
      await call(api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id: endpointId, delivery_id: d.id } } }));
      onNotice({ kind: 'success', text: m.webhooks.retried });
      list.reload();
    } catch (e) {
      onNotice({ kind: 'error', text: (e as ApiError).message });
    }
  };
  const [shown, setShown] = useState<WebhookDelivery | null>(null);
  const columns: Column<WebhookDelivery>[] = [
    { key: 'event', header: m.webhooks.event, render: (d) => d.event_type },
    { key: 'created', nowrap: true, header: m.common.created, render: (d) => formatDateTime(d.created_at) },
    { key: 'status', header: m.common.status, render: (d) => d.status },
    { key: 'attempts', header: m.webhooks.attempts, render: (d) => String(d.attempts) },
    { key: 'answer', header: m.webhooks.lastAnswer, render: (d) => d.last_error ?? (d.last_response_status === null ? '' : String(d.last_response_status)) },
    {
      key: 'actions',
      header: m.common.actions,
      render: (d) => (
        <>
          <button type="button" className="button secondary" aria-expanded={shown?.id === d.id} onClick={() => setShown(shown?.id === d.id ? null : d)}>
            {m.webhooks.showAttempts}
            <span className="sr-only"> {d.event_type}</span>
          </button>{' '}
          <button type="button" className="button secondary" onClick={() => void retry(d)}>
            {m.webhooks.retry}
            <span className="sr-only"> {d.event_type}</span>
          </button>
        </>
      ),
    },
  ];
  return (
    <div className="card">
      <h2>{m.webhooks.deliveries}</h2>
      <DataState loaded={list} isEmpty={(d) => d.data.length === 0} empty={m.webhooks.noDeliveries}>
        {(d) => <Table caption={m.webhooks.deliveries} columns={columns} rows={d.data} rowKey={(x) => x.id} />}
      </DataState>
      {shown && <Attempts endpointId={endpointId} delivery={shown} />}
    </div>
  );
}

/** Every attempt made at one delivery (the delivery log), oldest first. */
function Attempts({ endpointId, delivery }: { endpointId: string; delivery: WebhookDelivery }) {
  const m = useMessages();
  const log = useApi(
    () => call(api.GET('/api/v1/webhooks/{id}/deliveries/{delivery_id}/attempts', { params: { path: { id: endpointId, delivery_id: delivery.id } } })),
    [endpointId, delivery.id],
  );
  const caption = m.webhooks.attemptsOf(delivery.event_type, formatDateTime(delivery.created_at));
  const columns: Column<WebhookAttempt>[] = [
    { key: 'attempt', header: m.webhooks.attempt, render: (a) => String(a.attempt) },
    { key: 'sent', nowrap: true, header: m.webhooks.sentAt, render: (a) => formatDateTime(a.attempted_at) },
    { key: 'took', nowrap: true, header: m.webhooks.duration, render: (a) => `${a.duration_ms} ms` },
    { key: 'answer', header: m.webhooks.answer, render: (a) => (a.response_status === null ? m.webhooks.noAnswer : String(a.response_status)) },
    { key: 'error', header: m.webhooks.why, render: (a) => a.error ?? '' },
  ];
  return (
    <section aria-label={caption}>
      <h3>{caption}</h3>
      <DataState loaded={log} isEmpty={(d) => d.attempts.length === 0} empty={m.webhooks.noAttempts}>
        {(d) => <Table caption={caption} columns={columns} rows={d.attempts} rowKey={(x) => String(x.attempt)} />}
      </DataState>
    </section>
  );
}

function NewEndpoint({ onCreated }: { onCreated: (url: string, secret: string) => void }) {
  const m = useMessages();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([]);
  const toggle = (t: WebhookEventType, on: boolean) => setEvents((all) => (on ? [...all, t] : all.filter((x) => x !== t)));
  const { busy, error, onSubmit } = useAction(async () => {
    const created = await call(api.POST('/api/v1/webhooks', { body: { url, events, ...(description.trim() ? { description } : {}) } }));
    onCreated(created.url, created.secret);
    setUrl('');
    setDescription('');
    setEvents([]);
  });
  const eventProblems = error?.problemsFor('events') ?? [];
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.webhooks.add}</h2>
      <FormError error={error} fields={['url', 'events', 'description']} />
      <Field label={m.webhooks.url} field="url" error={error} hint={m.webhooks.urlHint}>
        {(ids) => <input {...ids} type="url" required maxLength={2048} value={url} onChange={(e) => setUrl(e.target.value)} />}
      </Field>
      <Field label={m.webhooks.description} field="description" error={error}>
        {(ids) => <input {...ids} maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <fieldset className={eventProblems.length ? 'field-invalid' : undefined}>
        <legend>{m.webhooks.events}</legend>
        {EVENT_TYPES.map((t) => (
          <div className="check" key={t}>
            <input id={`event-${t}`} type="checkbox" checked={events.includes(t)} onChange={(e) => toggle(t, e.target.checked)} />
            <label htmlFor={`event-${t}`}>
              <code>{t}</code>
            </label>
          </div>
        ))}
        {eventProblems.length ? <span className="field-error">{eventProblems.join('; ')}</span> : null}
      </fieldset>
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.creating : m.webhooks.submit}
      </button>
    </form>
  );
}
