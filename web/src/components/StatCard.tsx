// One number with its name, for the summary rows of the overview and the consent-link history.
import { formatNumber } from '../lib/format';

export function StatCard({ title, value }: { title: string; value: number }) {
  return (
    <div className="card stat">
      <span className="stat-title">{title}</span>
      <span className="stat-value">{formatNumber(value)}</span>
    </div>
  );
}
