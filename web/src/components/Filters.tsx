// A filter form over the address-bar state: fields edit a draft, "Apply" writes it to the query string
// (back to the first page), "Clear" removes every filter.
import { useState, type FormEvent, type ReactNode } from 'react';
import { useMessages } from '../i18n';

export function useFilterDraft(params: URLSearchParams, names: readonly string[]) {
  const fromParams = () => Object.fromEntries(names.map((n) => [n, params.get(n) ?? '']));
  const [draft, setDraft] = useState<Record<string, string>>(fromParams);
  const key = names.map((n) => params.get(n) ?? '').join('\u0000');
  // The address changed (back button, a link): show what it says.
  const [shown, setShown] = useState(key);
  if (shown !== key) {
    setShown(key);
    setDraft(fromParams());
  }
  const set = (name: string) => (value: string) => setDraft((d) => ({ ...d, [name]: value }));
  return { draft, set };
}

export function Filters(props: { label: string; onApply: () => void; onClear: () => void; children: ReactNode }) {
  const m = useMessages();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    props.onApply();
  };
  return (
    <form className="filters" role="search" aria-label={props.label} onSubmit={submit}>
      <div className="filter-fields">{props.children}</div>
      <div className="filter-actions">
        <button type="submit" className="button primary">
          {m.common.apply}
        </button>
        <button type="button" className="button secondary" onClick={props.onClear}>
          {m.common.clear}
        </button>
      </div>
    </form>
  );
}

/** `<select>` options from a value list, labelled from the catalogue, with "All" first. */
export function Options({ values, labels, all }: { values: readonly string[]; labels: Record<string, string>; all?: string }) {
  return (
    <>
      {all !== undefined ? <option value="">{all}</option> : null}
      {values.map((v) => (
        <option key={v} value={v}>
          {labels[v] ?? v}
        </option>
      ))}
    </>
  );
}
