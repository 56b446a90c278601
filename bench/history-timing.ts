// Times the whole consent-link history response (page, count, both summaries) through the real app
// (app.inject: routing, auth, validation, SQL, serialization), on the configured store, and prints the
// query plans. `npm run bench:history -- --org <slug> [--asset <id>] [--runs 50] [--explain]`
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/platform/db/store.js';
import { buildApp } from '../src/app.js';
import type { Database, Queryable } from '../src/platform/db/types.js';

interface Case {
  name: string;
  query: { asset_id: string } & Record<string, string>;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Records the statements of tenant transactions, to EXPLAIN them afterwards. */
function recording(db: Database) {
  const seen: { text: string; params: readonly unknown[] }[] = [];
  let on = false;
  const wrapped: Database = {
    ...db,
    tenantTransaction: (orgId, fn) =>
      db.tenantTransaction(orgId, (tx) =>
        fn({
          query: <T>(text: string, params?: readonly unknown[]) => {
            if (on) seen.push({ text, params: params ?? [] });
            return tx.query<T>(text, params);
          },
        } as Queryable),
      ),
  };
  return { db: wrapped, seen, record: (v: boolean) => void (on = v) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      asset: { type: 'string' },
      runs: { type: 'string', default: '50' },
      explain: { type: 'boolean', default: false },
    },
  });
  if (!values.org) {
    process.stderr.write('Usage: npm run bench:history -- --org <slug> [--asset <id>] [--runs 50] [--explain]\n');
    process.exit(2);
  }
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
  const store = await openStore(config, 'cli');
  const rec = recording(store.db);
  const app = await buildApp({ config, db: rec.db, logger: false });
  try {
    const org = await app.services.accounts.organizationBySlug(values.org);
    const assetId =
      values.asset ??
      (
        await store.db.system.query<{ asset_id: string }>(
          'select asset_id from consent_link_daily_counts where org_id = $1 group by asset_id order by sum(created) desc limit 1',
          [org.id],
        )
      )[0]?.asset_id;
    if (!assetId) throw new Error(`organization ${values.org} has no consent links: run npm run seed:consent first`);
    const [{ links, point }] = (await store.db.system.query<{ links: number; point: string }>(
      `select (select count(*)::int from consent_requests where org_id = $1 and asset_id = $2) as links,
              (select id::text from collection_points where org_id = $1 and asset_id = $2 order by created_at limit 1) as point`,
      [org.id, assetId],
    )) as [{ links: number; point: string }];
    const key = await app.services.accounts.createApiKey(values.org, { scopes: ['admin'], name: 'bench:history' });
    const now = Date.now();
    const thirtyDaysAgo = new Date(now - 30 * 86_400_000).toISOString();
    const cases: Case[] = [
      { name: 'first page, unfiltered', query: { asset_id: assetId } },
      { name: '30-day window', query: { asset_id: assetId, from: thirtyDaysAgo } },
      { name: '30-day window, one collection point', query: { asset_id: assetId, from: thirtyDaysAgo, collection_point_id: point } },
      { name: 'deep offset (10,000)', query: { asset_id: assetId, offset: '10000' } },
      { name: 'dp_id filter (exact path)', query: { asset_id: assetId, dp_id: 'dp-42' } },
    ];
    const rows: string[] = [];
    process.stdout.write(`store: ${store.db.kind}; ${links.toLocaleString('en-US')} links in asset ${assetId}; ${values.runs} runs per case\n`);
    for (const c of cases) {
      const url = `/api/v1/external/public/consent-link/history?${new URLSearchParams(c.query)}`;
      const call = () =>
        app.inject({ method: 'GET', url, headers: { host: `${values.org}.${config.baseDomain}`, 'x-api-key': key.key, 'x-org-id': values.org! } });
      for (let i = 0; i < 5; i++) {
        const res = await call();
        if (res.statusCode !== 200) throw new Error(`${c.name}: ${res.statusCode} ${res.body}`);
      }
      const times: number[] = [];
      for (let i = 0; i < Number(values.runs); i++) {
        const t0 = performance.now();
        await call();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const body = (await call()).json();
      // The same envelope counted row by row (no rollups), through the service, for comparison.
      const ctx = { orgId: org.id, slug: org.slug, orgName: org.name, actor: { type: 'api_key' as const, id: key.id, scopes: key.scopes }, requestId: 'bench' };
      const exactTimes: number[] = [];
      for (let i = 0; i < Math.min(10, Number(values.runs)); i++) {
        const t0 = performance.now();
        await app.services.consentLinks.history(ctx, { ...c.query, offset: c.query.offset ? Number(c.query.offset) : undefined }, { strategy: 'exact' });
        exactTimes.push(performance.now() - t0);
      }
      exactTimes.sort((a, b) => a - b);
      rows.push(
        `| ${c.name} | ${percentile(times, 0.5).toFixed(2)} | ${percentile(times, 0.95).toFixed(2)} | ${percentile(exactTimes, 0.5).toFixed(2)} | ${body.count.toLocaleString('en-US')} | ${body.data.length} |`,
      );
      if (values.explain) {
        rec.seen.length = 0;
        rec.record(true);
        await call();
        rec.record(false);
        process.stdout.write(`\n### ${c.name}\n`);
        for (const q of rec.seen.filter((s) => !s.text.startsWith('select id, scopes'))) {
          const plan = await store.db.tenantTransaction(org.id, (tx) =>
            tx.query<Record<string, string>>(`explain (analyze, buffers, costs off) ${q.text}`, q.params),
          );
          process.stdout.write(q.text.replace(/\s+/g, ' ').slice(0, 160) + '…\n' + plan.map((r) => Object.values(r)[0]).join('\n') + '\n\n');
        }
      }
    }
    process.stdout.write(`\n| case | median ms | p95 ms | exact path, median ms | count | rows |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`);
    await app.services.accounts.revokeApiKey(values.org, key.id);
  } finally {
    await app.close();
    await store.close();
  }
}

await main();
