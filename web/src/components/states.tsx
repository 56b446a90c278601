// What a list or a record shows while it loads, when it failed, and when there is nothing.
import type { ReactNode } from 'react';
import type { ApiError } from '../api/errors';
import { useMessages } from '../i18n';

export function Loading({ label }: { label?: string }) {
  const m = useMessages();
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label ?? m.common.loading}
    </p>
  );
}

export function ErrorState({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  const m = useMessages();
  return (
    <div className="state state-error" role="alert">
      <p>
        <strong>{error.status === 403 ? m.common.forbidden : m.common.errorTitle}</strong>
      </p>
      <p>{error.message}</p>
      {onRetry && error.status !== 403 && error.status !== 404 ? (
        <button type="button" className="button secondary" onClick={onRetry}>
          {m.common.retry}
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/** Loading, error or empty, in that order; else the content. */
export function DataState<T>(props: {
  loaded: { data: T | undefined; error: ApiError | null; loading: boolean; reload: () => void };
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  const { data, error, loading, reload } = props.loaded;
  if (error) return <ErrorState error={error} onRetry={reload} />;
  if (data === undefined) return loading ? <Loading /> : null;
  if (props.isEmpty?.(data)) return <Empty>{props.empty}</Empty>;
  return <div aria-busy={loading}>{props.children(data)}</div>;
}
