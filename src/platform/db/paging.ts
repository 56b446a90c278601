// One page of a list and how many rows match in all, in one statement: the total rides on every row of
// the page (`count(*) over ()`); only a page past the end, which has no row to carry it, counts again.
import type { Queryable } from './types.js';

export interface PageQuery {
  /** The select list (without the total). */
  columns: string;
  /** The table, or tables with their join. */
  from: string;
  /** The condition, with $n placeholders numbered from 1 over `params`. */
  where: string;
  params: readonly unknown[];
  /** Fixed text from the caller's code, never input. */
  orderBy: string;
  limit: number;
  offset: number;
}

export async function selectPage<T>(q: Queryable, p: PageQuery): Promise<{ data: T[]; count: number }> {
  const params = [...p.params];
  const rows = await q.query<T & { total: number }>(
    `select ${p.columns}, count(*) over ()::int as total from ${p.from} where ${p.where}
      order by ${p.orderBy} limit $${params.push(p.limit)}::int offset $${params.push(p.offset)}::int`,
    params,
  );
  let count = rows[0]?.total ?? 0;
  if (rows.length === 0 && p.offset > 0) {
    count = (await q.query<{ n: number }>(`select count(*)::int as n from ${p.from} where ${p.where}`, [...p.params]))[0]!.n;
  }
  return { data: rows.map(({ total: _total, ...row }) => row as T), count };
}
