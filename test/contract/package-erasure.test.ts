// The hourly erasure of access packages past their 14 days (issue 33): each organization is worked in
// its own transactions, in turns, so one organization's backlog does not hold the others back and one
// organization's failure does not stop them. On both stores.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../support/app.js';

type Tenant = TestOrg & { key: string };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

const call = (a: Tenant, method: 'GET' | 'POST', url: string, body?: unknown) => t.call({ method, url, org: a, key: a.key, body });

async function ok<T = any>(pending: ReturnType<typeof call>, status = 200): Promise<T> {
  const res = await pending;
  expect(res.statusCode, res.body).toBe(status);
  return res.json<T>();
}

/** n access requests of one organization, each fulfilled by its one system: n packages. */
async function packages(a: Tenant, n: number): Promise<string[]> {
  const category = await ok(call(a, 'POST', '/api/v1/data-categories', { key: 'contact', name: 'Contact details', purposes: ['Account'] }), 201);
  await ok(call(a, 'POST', '/api/v1/systems', { name: 'CRM', owner: 'Sales', category_ids: [category.id], can_access: true }), 201);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const ticket = await ok(call(a, 'POST', '/grievance', { client_user_id: `dp-${i}`, subject: 'My data', description: 'A copy, please', category: 'data_access' }), 201);
    const view = await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`));
    await ok(call(a, 'POST', `/api/v1/fulfilment/tasks/${view.tasks[0].id}/complete`, { result: { found: true } }));
    ids.push((await ok(call(a, 'GET', `/api/v1/fulfilment/tickets/${ticket.ticket_id}`))).package.id);
  }
  return ids;
}

const erasedAt = async (a: Tenant) =>
  (await t.db.tenantTransaction(a.id, (tx) => tx.query<{ erased_at: Date | null }>('select erased_at from access_packages where org_id = $1::uuid', [a.id]))).map((r) => r.erased_at);

describe('access package erasure', () => {
  test('organizations are worked in turns, each in its own transactions: a backlog does not hold the others, a failure does not stop them', async () => {
    const big = await t.tenant();
    const small = await t.tenant();
    const broken = await t.tenant();
    await packages(big, 3);
    await packages(small, 1);
    await packages(broken, 1);
    // Not yet due: nothing is erased.
    expect((await t.app.services.fulfilment.eraseExpiredPackages()).packages).toBe(0);

    t.clock.advance(14 * 86_400_000);
    // The order in which packages are erased is recorded; the broken organization's erasure fails.
    await t.db.system.query('create table erasure_order (seq serial primary key, org_id uuid not null)');
    await t.db.system.query(
      `create function erasure_watch() returns trigger language plpgsql security definer as $$
       begin
         if new.org_id = '${broken.id}'::uuid then raise exception 'storage failure'; end if;
         insert into erasure_order (org_id) values (new.org_id);
         return new;
       end $$`,
    );
    await t.db.system.query('create trigger erasure_watch before update of erased_at on access_packages for each row execute function erasure_watch()');
    try {
      const run = await t.app.services.fulfilment.eraseExpiredPackages({ batch: 1 });
      expect(run.packages).toBe(4);
      expect(run.failed.map((f) => f.org_id)).toEqual([broken.id]);
      expect(String(run.failed[0]!.error)).toContain('storage failure');
      // One package per organization per turn: the small organization is done in the first round,
      // before the big one's second package.
      const order = (await t.db.system.query<{ org_id: string }>('select org_id from erasure_order order by seq'))
        .map((r) => r.org_id)
        .filter((id) => id === big.id || id === small.id);
      expect(order).toEqual([big.id, small.id, big.id, big.id]);
      expect((await erasedAt(big)).every((at) => at !== null)).toBe(true);
      expect((await erasedAt(small)).every((at) => at !== null)).toBe(true);
      // The failed organization is untouched (its transaction rolled back) and is tried again next run.
      expect(await erasedAt(broken)).toEqual([null]);
      await t.db.system.query('drop trigger erasure_watch on access_packages');
      const again = await t.app.services.fulfilment.eraseExpiredPackages();
      expect(again).toEqual({ packages: 1, failed: [] });
      expect((await erasedAt(broken)).every((at) => at !== null)).toBe(true);
    } finally {
      await t.db.system.query('drop trigger if exists erasure_watch on access_packages');
      await t.db.system.query('drop function if exists erasure_watch()');
      await t.db.system.query('drop table if exists erasure_order');
      t.clock.advance(-14 * 86_400_000);
    }
  });
});
