// A status shown as a coloured label (with its text, never colour alone).
import { label, useMessages } from '../i18n';

export function StatusBadge({ status }: { status: string }) {
  const m = useMessages();
  return <span className={`badge badge-${status}`}>{label(m.labels.status, status)}</span>;
}
