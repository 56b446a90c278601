// Copies a value (a key, a link) and says so; where the clipboard is not allowed, says to copy by hand.
import { useState } from 'react';
import { useMessages } from '../i18n';

export function CopyButton({ value, label }: { value: string; label?: string }) {
  const m = useMessages();
  const [outcome, setOutcome] = useState<'copied' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setOutcome('copied');
    } catch {
      setOutcome('failed');
    }
  };
  return (
    <span className="copy">
      <button type="button" className="button secondary" onClick={copy}>
        {label ?? m.common.copy}
      </button>
      <span role="status" className="copy-outcome">
        {outcome === 'copied' ? m.common.copied : outcome === 'failed' ? m.common.copyFailed : ''}
      </span>
    </span>
  );
}
