// A short message after an action ("The ticket is now resolved."), announced to screen readers.
import type { ReactNode } from 'react';

export function Notice({ kind = 'success', children }: { kind?: 'success' | 'error'; children: ReactNode }) {
  if (!children) return null;
  return (
    <div className={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
