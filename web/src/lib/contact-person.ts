// Whether the organization has named its contact person (DPDP Rule 9): the frame warns on every page
// until it has. The settings page says when it saved one, so the warning goes at once.
import { useEffect, useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';

const listeners = new Set<() => void>();

/** Tells every frame that the contact person was set (it checks again). */
export function contactPersonChanged(): void {
  for (const listener of listeners) listener();
}

/** true: none is set (GET /dpo answers 404); false: one is; null: not known yet, or the check failed. */
export function useContactPersonMissing(): boolean | null {
  const [generation, setGeneration] = useState(0);
  const [missing, setMissing] = useState<boolean | null>(null);
  useEffect(() => {
    const listener = () => setGeneration((g) => g + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  useEffect(() => {
    let current = true;
    call(api.GET('/dpo')).then(
      () => current && setMissing(false),
      (e: unknown) => current && setMissing(ApiError.of(e).status === 404 ? true : null),
    );
    return () => {
      current = false;
    };
  }, [generation]);
  return missing;
}
