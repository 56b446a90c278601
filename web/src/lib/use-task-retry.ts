// Retrying a failed fulfilment task, as the Fulfilment page and a ticket's fulfilment panel both offer
// it: which task is being retried (its button disabled), and the notice that says how it went.
import { useState } from 'react';
import { api, call } from '../api/client';
import { ApiError } from '../api/errors';
import type { FulfilmentTask } from '../api/types';
import { useMessages } from '../i18n';

export function useTaskRetry(reload: () => void) {
  const m = useMessages();
  const [notice, setNotice] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const retry = async (t: FulfilmentTask) => {
    setBusy(t.id);
    setNotice(null);
    try {
      await call(api.POST('/api/v1/fulfilment/tasks/{id}/retry', { params: { path: { id: t.id } } }));
      setNotice({ kind: 'success', text: m.fulfilment.retried(t.system_name, t.ticket_id) });
      reload();
    } catch (e) {
      setNotice({ kind: 'error', text: ApiError.of(e).message });
    } finally {
      setBusy(null);
    }
  };
  return { notice, busy, retry };
}
