// The overview: open tickets by status and by category, and consent links of the last 30 days.
import { api, call } from '../api/client';
import { useSession } from '../api/use-session';
import { BarChart } from '../components/BarChart';
import { DataState } from '../components/states';
import { StatCard } from '../components/StatCard';
import { label, useMessages } from '../i18n';
import { formatDay } from '../lib/format';
import { useApi } from '../lib/use-api';
import { useTitle } from '../lib/use-title';

const OPEN = ['open', 'in_progress', 'on_hold'] as const;
const COLORS = { tickets: '#1f6feb', open: '#0b5cd5', completed: '#1a7f37', active: '#0969da', expired: '#a0a7b0' };

export default function OverviewPage() {
  const m = useMessages();
  const session = useSession();
  useTitle(m.overview.title, session.organization.name);
  const tickets = useApi(() => call(api.GET('/api/v1/grievances/summary')), []);
  const links = useApi(() => call(api.GET('/api/v1/consent-links/daily', { params: { query: { days: 30 } } })), []);

  return (
    <section>
      <h1>{m.overview.title}</h1>
      <DataState loaded={tickets}>
        {(s) => (
          <>
            <div className="cards">
              <StatCard title={m.overview.openTickets} value={s.open} />
              <StatCard title={m.overview.allTickets} value={s.total} />
              {OPEN.map((status) => (
                <StatCard key={status} title={label(m.labels.status, status)} value={s.by_status[status]} />
              ))}
            </div>
            {s.total === 0 ? (
              <p className="state state-empty">{m.overview.noTickets}</p>
            ) : (
              <div className="charts">
                <BarChart
                  title={m.overview.byStatus}
                  categoryLabel={m.common.status}
                  categories={Object.keys(s.by_status).map((k) => label(m.labels.status, k))}
                  series={[{ label: m.overview.count, values: Object.values(s.by_status), color: COLORS.tickets }]}
                  horizontal
                />
                <BarChart
                  title={m.overview.byCategory}
                  categoryLabel={m.grievances.category}
                  categories={Object.keys(s.open_by_category).map((k) => label(m.labels.category, k))}
                  series={[{ label: m.overview.count, values: Object.values(s.open_by_category), color: COLORS.open }]}
                  horizontal
                />
              </div>
            )}
          </>
        )}
      </DataState>

      <h2>{m.overview.consentTitle}</h2>
      <DataState loaded={links}>
        {(d) => (
          <>
            <div className="cards">
              <StatCard title={m.overview.created} value={d.totals.created} />
              <StatCard title={m.overview.completed} value={d.totals.completed} />
              <StatCard title={m.overview.active} value={d.totals.active} />
              <StatCard title={m.overview.expired} value={d.totals.expired} />
            </div>
            <BarChart
              title={m.overview.consentChart}
              categoryLabel={m.overview.day}
              categories={d.days.map((day) => formatDay(day.date))}
              series={[
                { label: m.overview.completed, values: d.days.map((x) => x.completed), color: COLORS.completed },
                { label: m.overview.active, values: d.days.map((x) => x.active), color: COLORS.active },
                { label: m.overview.expired, values: d.days.map((x) => x.expired), color: COLORS.expired },
              ]}
            />
          </>
        )}
      </DataState>
    </section>
  );
}
