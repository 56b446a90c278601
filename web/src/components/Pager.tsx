// "1–50 of 1,234" with Previous and Next, and the page-size choice.
import { useMessages } from '../i18n';
import { PAGE_SIZES } from '../lib/enums';
import { Field } from './fields';

export function Pager({ count, limit, offset, onChange }: { count: number; limit: number; offset: number; onChange: (offset: number) => void }) {
  const m = useMessages();
  const first = count === 0 ? 0 : Math.min(offset + 1, count);
  const last = Math.min(offset + limit, count);
  return (
    <nav className="pager" aria-label={m.pager.label}>
      <span aria-live="polite">{count === 0 || offset >= count ? m.pager.empty : m.pager.range(first, last, count)}</span>
      <button type="button" className="button secondary" disabled={offset <= 0} onClick={() => onChange(Math.max(0, offset - limit))}>
        {m.pager.previous}
      </button>
      <button type="button" className="button secondary" disabled={offset + limit >= count} onClick={() => onChange(offset + limit)}>
        {m.pager.next}
      </button>
    </nav>
  );
}

export function PageSize({ value, onChange }: { value: number; onChange: (n: number) => void }) {
  const m = useMessages();
  return (
    <Field label={m.common.perPage} className="page-size">
      {(ids) => (
        <select {...ids} value={value} onChange={(e) => onChange(Number(e.target.value))}>
          {PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Under a paged list: the pager and the page size, both kept in the address bar. */
export function ListFooter(props: { count: number; limit: number; offset: number; update: (changes: Record<string, number>) => void }) {
  return (
    <div className="list-footer">
      <Pager count={props.count} limit={props.limit} offset={props.offset} onChange={(offset) => props.update({ offset })} />
      <PageSize value={props.limit} onChange={(limit) => props.update({ limit })} />
    </div>
  );
}
