// A data table: a caption for screen readers, optional sortable columns (a button in the header, with
// aria-sort), and a scrolling frame so wide tables work at phone width.
import type { ReactNode } from 'react';
import { useMessages } from '../i18n';

export interface Column<T> {
  key: string;
  header: string;
  render: (row: T) => ReactNode;
  /** Set on sortable columns: the current direction on this column (null: sorted by another). */
  sort?: { direction: 'asc' | 'desc' | null; onToggle: () => void };
  numeric?: boolean;
  /** Never break inside a word (dates, ids, phones, buttons); the cell still wraps between words, so wide tables fit. */
  nowrap?: boolean;
}

const cellClass = (c: { numeric?: boolean; nowrap?: boolean }) => [c.numeric ? 'numeric' : '', c.nowrap ? 'nowrap' : ''].filter(Boolean).join(' ') || undefined;

export function Table<T>({
  caption,
  columns,
  rows,
  rowKey,
  rowClass,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** A class for a row that stands out (an overdue ticket); never its only sign. */
  rowClass?: (row: T) => string | undefined;
}) {
  const m = useMessages();
  return (
    <div className="table-frame" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.key}
                scope="col"
                className={[cellClass(c), c.sort ? 'sortable' : ''].filter(Boolean).join(' ') || undefined}
                aria-sort={c.sort?.direction === 'asc' ? 'ascending' : c.sort?.direction === 'desc' ? 'descending' : undefined}
              >
                {c.sort ? (
                  <button
                    type="button"
                    className="sort"
                    onClick={c.sort.onToggle}
                    aria-label={m.sort.by(c.header, c.sort.direction === 'desc' ? m.sort.ascending : m.sort.descending)}
                  >
                    {c.header}
                    <span aria-hidden="true">{c.sort.direction === 'asc' ? ' ▲' : c.sort.direction === 'desc' ? ' ▼' : ' ↕'}</span>
                  </button>
                ) : (
                  c.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowClass?.(row)}>
              {columns.map((c) => (
                <td key={c.key} className={cellClass(c)} data-label={c.header}>
                  {c.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
