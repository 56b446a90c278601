// Filters, sort and paging kept in the address bar (?status=open&offset=50): a reload or a shared link
// shows the same page. Setting a filter goes back to the first page.
import { useCallback } from 'react';
import { useSearchParams } from 'wouter';

export function useSearchState(): [URLSearchParams, (changes: Record<string, string | number | null | undefined>) => void] {
  const [params, setParams] = useSearchParams();
  const update = useCallback(
    (changes: Record<string, string | number | null | undefined>) => {
      setParams((prev) => {
        const next = new URLSearchParams(prev);
        for (const [k, v] of Object.entries(changes)) {
          if (v === null || v === undefined || v === '') next.delete(k);
          else next.set(k, String(v));
        }
        if (!('offset' in changes)) next.delete('offset');
        return next;
      });
    },
    [setParams],
  );
  return [params, update];
}

/** A whole number from the query, within bounds, or the fallback. */
export function intParam(params: URLSearchParams, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(params.get(name));
  return params.has(name) && Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

/** A value from the query when it is one of `allowed`. */
export function oneOf<T extends string>(params: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const v = params.get(name);
  return v !== null && (allowed as readonly string[]).includes(v) ? (v as T) : undefined;
}
