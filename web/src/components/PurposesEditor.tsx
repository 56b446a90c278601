// The purposes of a collection point: name, description, required; add and remove rows. An existing
// purpose keeps its id through edits, so consents given under it keep meaning the same purpose.
import { useMessages } from '../i18n';
import type { ApiError } from '../api/errors';
import { Field } from './fields';

export interface PurposeDraft {
  /** The service's id for a purpose that exists already; absent for a new one. */
  id?: string;
  /** A key for React that stays with the row. */
  key: string;
  name: string;
  description: string;
  required: boolean;
}

let drafted = 0;
export function newPurpose(): PurposeDraft {
  drafted += 1;
  return { key: `new-${drafted}`, name: '', description: '', required: false };
}

/** The request body's `purposes`: ids kept, empty descriptions sent as empty. */
export function purposesBody(rows: PurposeDraft[]) {
  return rows.map(({ id, name, description, required }) => ({ ...(id ? { id } : {}), name, description, required }));
}

export function PurposesEditor({ rows, onChange, error }: { rows: PurposeDraft[]; onChange: (rows: PurposeDraft[]) => void; error: ApiError | null }) {
  const m = useMessages();
  const edit = (i: number, patch: Partial<PurposeDraft>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const general = error?.details.filter((d) => d.field === 'purposes').map((d) => d.message) ?? [];
  return (
    <fieldset className="purposes">
      <legend>{m.assets.purposes}</legend>
      {general.length ? <p className="field-error">{general.join('; ')}</p> : null}
      {rows.map((row, i) => (
        <div className="purpose-row" key={row.key} role="group" aria-label={m.assets.purposeN(i + 1)}>
          <Field label={m.assets.purposeName} field={`purposes.${i}.name`} error={error}>
            {(ids) => <input {...ids} required maxLength={255} value={row.name} onChange={(e) => edit(i, { name: e.target.value })} />}
          </Field>
          <Field label={m.assets.purposeDescription} field={`purposes.${i}.description`} error={error}>
            {(ids) => <input {...ids} maxLength={1000} value={row.description} onChange={(e) => edit(i, { description: e.target.value })} />}
          </Field>
          <div className="check">
            <input id={`required-${row.key}`} type="checkbox" checked={row.required} onChange={(e) => edit(i, { required: e.target.checked })} />
            <label htmlFor={`required-${row.key}`}>{m.assets.purposeRequired}</label>
          </div>
          <button type="button" className="button secondary" disabled={rows.length === 1} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            {m.assets.removePurpose(i + 1)}
          </button>
        </div>
      ))}
      <button type="button" className="button secondary" onClick={() => onChange([...rows, newPurpose()])}>
        {m.assets.addPurpose}
      </button>
    </fieldset>
  );
}
