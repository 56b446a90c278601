// Loads something from the API for a page: data, the error, whether it is loading, and reload(). A newer
// load replaces an older one that is still running; the last data stays shown while reloading.
import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api/errors';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/** `deps` are what `load` depends on: plain values (ids, a serialised query). */
export function useApi<T>(load: () => Promise<T>, deps: readonly (string | number | boolean | undefined | null)[]): Loaded<T> {
  const [generation, setGeneration] = useState(0);
  const key = JSON.stringify([...deps, generation]);
  const [result, setResult] = useState<{ key: string | null; data: T | undefined; error: ApiError | null }>({ key: null, data: undefined, error: null });

  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setResult({ key, data, error: null }),
      (e: unknown) => {
        const error = ApiError.of(e);
        if (current) setResult((previous) => ({ key, data: previous.data, error }));
      },
    );
    return () => {
      current = false;
    };
    // `load` is a new function every render; what it depends on is in `key`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const settled = result.key === key;
  return { data: result.data, error: settled ? result.error : null, loading: !settled, reload };
}
