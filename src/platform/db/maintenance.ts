// PostgreSQL's own upkeep that Assent relies on. With autovacuum off (or track_counts, which it needs),
// nothing analyzes the tables as they grow: the server's prepared statements keep the plans chosen
// while the tables were small (a plan is made again only when the table is analyzed), and requests slow
// down as data grows. Measured with `npm run bench -- --soak 300 --store postgres` on one machine:
// 664 → 145 requests/s over five minutes with autovacuum off; 1,048–1,230 with the tables analyzed
// every 30 s (bench/results/2026-11-28T1042-… and T1037-soak-postgres.md). The server warns at start
// (src/main.ts); docs/operations.md, "PostgreSQL".
import type { Database } from './types.js';

/** null when PostgreSQL analyzes tables by itself (and always on the embedded store); else what to change. */
export async function autovacuumProblem(db: Database): Promise<string | null> {
  if (db.kind !== 'postgres') return null;
  const [row] = await db.system.query<{ autovacuum: string; track_counts: string }>(
    `select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts`,
  );
  const off = [row!.autovacuum !== 'on' ? 'autovacuum' : null, row!.track_counts !== 'on' ? 'track_counts' : null].filter((s) => s !== null);
  if (off.length === 0) return null;
  return (
    `PostgreSQL runs with ${off.join(' and ')} off: nothing analyzes the tables as they grow, so query plans made while they were small ` +
    `are kept and requests slow down as data grows. Turn ${off.join(' and ')} on in postgresql.conf (the default), ` +
    'or run VACUUM ANALYZE on a schedule; see docs/operations.md, "PostgreSQL"'
  );
}
