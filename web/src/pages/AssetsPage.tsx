// Assets (where consent is collected): the list, and a new one (owners and admins).
import { useState } from 'react';
import { Link } from 'wouter';
import { api, call } from '../api/client';
import { canChange, useSession } from '../api/use-session';
import type { Asset } from '../api/types';
import { StatusBadge } from '../components/Badge';
import { FormError } from '../components/fields';
import { Notice } from '../components/Notice';
import { ListFooter } from '../components/Pager';
import { DataState } from '../components/states';
import { Table, type Column } from '../components/Table';
import { label, useMessages } from '../i18n';
import { formatDateTime } from '../lib/format';
import { intParam, useSearchState } from '../lib/search-state';
import { useAction } from '../lib/use-action';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';
import { AssetFields } from './AssetFields';
import { pathTo, PAGES } from '../routes';

export default function AssetsPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.assets.title, session.organization.name);
  const [params, update] = useSearchState();
  const limit = intParam(params, 'limit', 50, 1, 200);
  const offset = intParam(params, 'offset', 0);
  const list = useApi(() => call(api.GET('/api/v1/assets', { params: { query: { limit, offset } } })), [limit, offset]);
  const [created, setCreated] = useState<string | null>(null);

  const columns: Column<Asset>[] = [
    { key: 'name', header: m.common.name, render: (a) => <Link href={pathTo(PAGES.asset, { assetId: a.id })}>{a.name}</Link> },
    { key: 'kind', header: m.assets.kind, render: (a) => label(m.labels.kind, a.kind) },
    { key: 'status', header: m.common.status, render: (a) => <StatusBadge status={a.status} /> },
    { key: 'created', nowrap: true, header: m.common.created, render: (a) => formatDateTime(a.created_at) },
  ];

  return (
    <section>
      <h1>{m.assets.title}</h1>
      <p className="intro">{m.assets.intro}</p>
      <Notice>{created ? m.assets.created(created) : null}</Notice>
      <DataState loaded={list} isEmpty={(d) => d.count === 0} empty={m.assets.empty}>
        {(d) => (
          <>
            <Table caption={m.assets.title} columns={columns} rows={d.data} rowKey={(a) => a.id} />
            <ListFooter count={d.count} limit={limit} offset={offset} update={update} />
          </>
        )}
      </DataState>
      {canChange(session) ? (
        <NewAsset
          onCreated={(name) => {
            setCreated(name);
            list.reload();
          }}
        />
      ) : null}
    </section>
  );
}

function NewAsset({ onCreated }: { onCreated: (name: string) => void }) {
  const m = useMessages();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Asset['kind']>('website');
  const { busy, error, onSubmit } = useAction(async () => {
    const asset = await call(api.POST('/api/v1/assets', { body: { name, kind } }));
    setName('');
    onCreated(asset.name);
  });
  return (
    <form className="card form" onSubmit={onSubmit()} noValidate>
      <h2>{m.assets.newAsset}</h2>
      <FormError error={error} fields={['name', 'kind']} />
      <AssetFields name={name} kind={kind} onName={setName} onKind={setKind} error={error} />
      <button type="submit" className="button primary" disabled={busy}>
        {busy ? m.common.creating : m.common.create}
      </button>
    </form>
  );
}
