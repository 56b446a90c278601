// Consent-link history for one asset: summary cards, the breakdown per collection point, filters, the
// links (phones masked by the API) with paging, and a new link for an expired request.
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import type { ApiError } from '../api/errors';
import { useSession } from '../api/use-session';
import type { CollectionPoint, ConsentRequest, CreatedLink } from '../api/types';
import { StatusBadge } from '../components/Badge';
import { CopyButton } from '../components/CopyButton';
import { Field } from '../components/fields';
import { Filters, useFilterDraft } from '../components/Filters';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { StatCard } from '../components/StatCard';
import { DataState, Empty } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { dayBoundary, formatDateTime, shortId } from '../lib/format';
import { intParam, useSearchState } from '../lib/search-state';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { PAGES } from '../routes';

const FILTERS = ['collection_point_id', 'event_id', 'dp_id', 'from', 'to'] as const;

export default function ConsentLinksPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.consent.title, session.organization.name);
  const [params, update] = useSearchState();
  const assets = useApi(() => call(api.GET('/api/v1/assets', { params: { query: { limit: 200 } } })), []);
  const assetId = params.get('asset_id') || assets.data?.data[0]?.id || '';

  return (
    <section>
      <div className="title-row">
        <h1>{m.consent.title}</h1>
        <Link className="button primary" href={PAGES.newConsentLink}>
          {m.consent.newLink}
        </Link>
      </div>
      <DataState loaded={assets} isEmpty={(a) => a.count === 0} empty={m.consent.noAssets}>
        {(a) => (
          <>
            <Field label={m.consent.asset} className="asset-picker">
              {(ids) => (
                <select {...ids} value={assetId} onChange={(e) => update({ asset_id: e.target.value, ...Object.fromEntries(FILTERS.map((f) => [f, null])) })}>
                  {a.data.map((asset) => (
                    <option key={asset.id} value={asset.id}>
                      {asset.name}
                      {asset.status === 'inactive' ? ` (${label(m.labels.status, 'inactive')})` : ''}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {assetId ? <History key={assetId} assetId={assetId} params={params} update={update} /> : null}
          </>
        )}
      </DataState>
    </section>
  );
}

function History({ assetId, params, update }: { assetId: string; params: URLSearchParams; update: ReturnType<typeof useSearchState>[1] }) {
  const m = useMessages();
  const session = useSession();
  const { draft, set } = useFilterDraft(params, FILTERS);
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const points = useApi(() => call(api.GET('/api/v1/collection-points', { params: { query: { asset_id: assetId, limit: 200 } } })), [assetId]);
  const query = {
    asset_id: assetId,
    collection_point_id: params.get('collection_point_id') || undefined,
    event_id: params.get('event_id') || undefined,
    dp_id: params.get('dp_id') || undefined,
    from: dayBoundary(params.get('from') ?? '', false),
    to: dayBoundary(params.get('to') ?? '', true),
    limit,
    offset,
  };
  const history = useApi(
    () => call(api.GET('/api/v1/external/public/consent-link/history', { params: { query, header: { 'X-Org-Id': session.organization.slug } } })),
    [JSON.stringify(query)],
  );
  const [regenerated, setRegenerated] = useState<CreatedLink | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const pointName = (id: string) => {
    const p = points.data?.data.find((x: CollectionPoint) => x.id === id);
    return p ? `${p.display_id} · ${p.name}` : shortId(id);
  };

  const pointCode = (id: string) => points.data?.data.find((x: CollectionPoint) => x.id === id)?.display_id ?? shortId(id);

  const regenerate = async (r: ConsentRequest) => {
    setFailure(null);
    try {
      const created = await call(
        api.POST('/api/v1/external/public/consent-link/duplicate/{request_id}', { params: { path: { request_id: r.request_id } }, body: {} }),
      );
      setRegenerated(created);
      history.reload();
    } catch (e) {
      setFailure((e as ApiError).message);
    }
  };

  const columns: Column<ConsentRequest>[] = [
    { key: 'request', nowrap: true, header: m.consent.request, render: (r) => <code title={r.request_id}>{shortId(r.request_id)}</code> },
    { key: 'point', header: m.consent.collectionPoint, render: (r) => <span title={pointName(r.collection_point_id)}>{pointCode(r.collection_point_id)}</span> },
    { key: 'phone', nowrap: true, header: m.consent.phone, render: (r) => <code>{r.phone}</code> },
    { key: 'status', header: m.common.status, render: (r) => <StatusBadge status={r.status} /> },
    { key: 'action', header: m.consent.action, render: (r) => label(m.labels.consentAction, r.consent_action) || m.common.none },
    { key: 'created', nowrap: true, header: m.common.created, render: (r) => formatDateTime(r.created_at) },
    { key: 'expires', nowrap: true, header: m.consent.expiresAt, render: (r) => formatDateTime(r.expires_at) },
    { key: 'completed', nowrap: true, header: m.consent.completedAt, render: (r) => formatDateTime(r.completed_at) || m.common.none },
    { key: 'regenerations', header: m.consent.regenerations, numeric: true, render: (r) => r.regeneration_count },
    {
      key: 'actions',
      header: m.common.actions,
      nowrap: true,
      render: (r) =>
        r.status === 'expired' && r.regeneration_count < 5 ? (
          <button type="button" className="button secondary" onClick={() => void regenerate(r)}>
            {m.consent.regenerate}
          </button>
        ) : null,
    },
  ];

  return (
    <>
      <Filters label={m.consent.history} onApply={() => update(draft)} onClear={() => update(Object.fromEntries(FILTERS.map((f) => [f, null])))}>
        <Field label={m.consent.collectionPoint}>
          {(ids) => (
            <select {...ids} value={draft.collection_point_id} onChange={(e) => set('collection_point_id')(e.target.value)}>
              <option value="">{m.consent.allPoints}</option>
              {(points.data?.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.display_id} · {p.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label={m.consent.eventId}>{(ids) => <input {...ids} value={draft.event_id} onChange={(e) => set('event_id')(e.target.value)} />}</Field>
        <Field label={m.consent.dpId}>{(ids) => <input {...ids} value={draft.dp_id} onChange={(e) => set('dp_id')(e.target.value)} />}</Field>
        <Field label={m.common.from}>{(ids) => <input {...ids} type="date" value={draft.from} onChange={(e) => set('from')(e.target.value)} />}</Field>
        <Field label={m.common.to}>{(ids) => <input {...ids} type="date" value={draft.to} onChange={(e) => set('to')(e.target.value)} />}</Field>
      </Filters>
      {failure ? <Notice kind="error">{failure}</Notice> : null}
      {regenerated ? (
        <Notice>
          {m.consent.regenerated} <code className="link-value">{regenerated.consent_link}</code> <CopyButton value={regenerated.consent_link} />
        </Notice>
      ) : null}
      <DataState loaded={history}>
        {(h) => (
          <>
            <h2 className="sr-only">{m.consent.summary}</h2>
            <div className="cards">
              <StatCard title={m.consent.totalLinks} value={h.summary.total_links} />
              <StatCard title={m.consent.active} value={h.summary.active} />
              <StatCard title={m.consent.completed} value={h.summary.completed} />
              <StatCard title={m.consent.expired} value={h.summary.expired} />
            </div>
            {Object.keys(h.collectionPointSummary).length > 0 ? (
              <>
                <h2>{m.consent.byPoint}</h2>
                <Table
                  caption={m.consent.byPoint}
                  rowKey={(row) => row.id}
                  rows={Object.entries(h.collectionPointSummary).map(([id, c]) => ({ id, ...c }))}
                  columns={[
                    { key: 'point', header: m.consent.collectionPoint, render: (row) => pointName(row.id) },
                    { key: 'total', header: m.consent.totalLinks, numeric: true, render: (row) => row.total.toLocaleString() },
                    { key: 'active', header: m.consent.active, numeric: true, render: (row) => row.active.toLocaleString() },
                    { key: 'completed', nowrap: true, header: m.consent.completed, numeric: true, render: (row) => row.completed.toLocaleString() },
                    { key: 'expired', header: m.consent.expired, numeric: true, render: (row) => row.expired.toLocaleString() },
                  ]}
                />
              </>
            ) : null}
            <h2>{m.consent.history}</h2>
            {h.count === 0 ? (
              <Empty>{FILTERS.some((f) => params.get(f)) ? m.consent.empty : m.consent.none}</Empty>
            ) : (
              <>
                <Table caption={m.consent.history} columns={columns} rows={h.data} rowKey={(r) => r.request_id} />
                <ListFooter count={h.count} limit={limit} offset={offset} update={update} />
              </>
            )}
          </>
        )}
      </DataState>
    </>
  );
}
