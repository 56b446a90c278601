// An asset's name and kind: the same two fields to create one and to edit one.
import type { ApiError } from '../api/errors';
import type { Asset } from '../api/types';
import { Field } from '../components/fields';
import { Options } from '../components/Filters';
import { useMessages } from '../i18n';
import { ASSET_KINDS } from '../lib/enums';

export function AssetFields(props: { name: string; kind: Asset['kind']; onName: (v: string) => void; onKind: (v: Asset['kind']) => void; error: ApiError | null }) {
  const m = useMessages();
  return (
    <>
      <Field label={m.common.name} field="name" error={props.error}>
        {(ids) => <input {...ids} required maxLength={255} value={props.name} onChange={(e) => props.onName(e.target.value)} />}
      </Field>
      <Field label={m.assets.kind} field="kind" error={props.error}>
        {(ids) => (
          <select {...ids} value={props.kind} onChange={(e) => props.onKind(e.target.value as Asset['kind'])}>
            <Options values={ASSET_KINDS} labels={m.labels.kind} />
          </select>
        )}
      </Field>
    </>
  );
}
