// A form's or a button's action: busy while it runs, the API's error when it fails (for FormError and
// the fields), cleared on the next try.
import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/errors';

export function useAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (...args: A): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await action(...args);
    } catch (e) {
      setError(ApiError.of(e));
    } finally {
      setBusy(false);
    }
  };
  /** For `<form onSubmit>`: no page load, then the action. */
  const onSubmit = (...args: A) => (e: FormEvent) => {
    e.preventDefault();
    void run(...args);
  };
  return { busy, error, run, onSubmit };
}
