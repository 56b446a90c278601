// The dashboard and the server agree: every page the app routes is served as index.html, and the value
// lists the forms offer are the API's.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DASHBOARD_PAGES } from '../../src/features/dashboard/pages';
import { GRIEVANCE_CATEGORIES as SERVER_CATEGORIES, GRIEVANCE_STATUSES as SERVER_STATUSES } from '../../src/features/grievances/schemas';
import { NOMINEE_STATUSES as SERVER_NOMINEE_STATUSES, RELATIONSHIPS as SERVER_RELATIONSHIPS } from '../../src/features/nominees/schemas';
import { ASSET_KINDS as SERVER_KINDS } from '../../src/features/collection-points/schemas';
import { SCOPES as SERVER_SCOPES } from '../../src/features/accounts/service';
import { ROLES as SERVER_ROLES } from '../../src/features/accounts/users';
import { en } from './i18n/en';
import { hi } from './i18n/hi';
import { catalogueFor } from './i18n';
import { ASSET_KINDS, AUDIT_ACTIONS, GRIEVANCE_CATEGORIES, GRIEVANCE_STATUSES, NOMINEE_STATUSES, RELATIONSHIPS, ROLES, SCOPES } from './lib/enums';
import { PAGES, pathTo } from './routes';

const shape = (path: string) => path.replace(/:[A-Za-z_]+/g, ':param');

describe('routes', () => {
  test('the server answers index.html on exactly the paths the app routes', () => {
    expect(Object.values(PAGES).map(shape).sort()).toEqual(DASHBOARD_PAGES.map(shape).sort());
  });

  test('pathTo fills and encodes parameters', () => {
    expect(pathTo(PAGES.grievance, { ticketId: 'GRV-ABCD1234' })).toBe('/grievances/GRV-ABCD1234');
    expect(pathTo(PAGES.collectionPoint, { pointId: 'a/b' })).toBe('/collection-points/a%2Fb');
  });
});

describe('value lists', () => {
  test("every list is the API's, in the API's order", () => {
    expect(GRIEVANCE_STATUSES).toEqual(SERVER_STATUSES);
    expect(GRIEVANCE_CATEGORIES).toEqual(SERVER_CATEGORIES);
    expect(NOMINEE_STATUSES).toEqual(SERVER_NOMINEE_STATUSES);
    expect(RELATIONSHIPS).toEqual(SERVER_RELATIONSHIPS);
    expect(ASSET_KINDS).toEqual(SERVER_KINDS);
    expect(SCOPES).toEqual(SERVER_SCOPES);
    expect(ROLES).toEqual(SERVER_ROLES);
  });

  test('the audit-action filter offers every action the server writes', () => {
    // Tests run from the checkout's root.
    const dir = resolve('src/features');
    const written = new Set<string>();
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      // Every dotted literal after `action:` on its line, so a choice (`action: created ? 'a.b' : 'a.c'`) counts both.
      for (const line of readFileSync(join(dir, file), 'utf8').matchAll(/action: ([^\n]*)/g)) {
        for (const match of line[1]!.matchAll(/'([a-z_]+\.[a-z_]+)'/g)) written.add(match[1]!);
      }
    }
    expect(written.size).toBeGreaterThan(10);
    expect([...written].filter((a) => !(AUDIT_ACTIONS as readonly string[]).includes(a))).toEqual([]);
    // The data principal's own acts and the organization's on their behalf (issue 30 item 7).
    for (const a of ['data_principal.token_issued', 'data_principal.contact_created', 'data_principal.contact_updated', 'data_principal.signed_in']) expect(written, a).toContain(a);
  });

  test('the catalogue has a label for every value the pages show', () => {
    for (const v of [...GRIEVANCE_STATUSES, ...NOMINEE_STATUSES, 'active', 'inactive', 'complete', 'expired']) expect(en.labels.status[v], v).toBeTruthy();
    for (const v of GRIEVANCE_CATEGORIES) expect(en.labels.category[v], v).toBeTruthy();
    for (const v of RELATIONSHIPS) expect(en.labels.relationship[v], v).toBeTruthy();
    for (const v of ASSET_KINDS) expect(en.labels.kind[v], v).toBeTruthy();
    for (const v of SCOPES) expect(en.labels.scope[v], v).toBeTruthy();
    for (const v of ROLES) expect(en.labels.role[v], v).toBeTruthy();
    for (const v of AUDIT_ACTIONS) expect(en.labels.action[v], v).toBeTruthy();
  });
});

describe('languages', () => {
  /** Every path of a catalogue to a text or a sentence-making function, with which of the two it is. */
  const leaves = (value: unknown, path = ''): string[] =>
    typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k))
      : [`${path}:${typeof value}`];

  test('the Hindi catalogue has every text the English one has, and no other', () => {
    expect(leaves(hi).sort()).toEqual(leaves(en).sort());
    for (const v of AUDIT_ACTIONS) expect(hi.labels.action[v], v).toBeTruthy();
    expect(hi.lang).toBe('hi');
  });

  test("the browser's first preference between Hindi and English decides; anything else is English", () => {
    expect(catalogueFor(['hi-IN', 'en-GB'])).toBe(hi);
    expect(catalogueFor(['en-GB', 'hi'])).toBe(en);
    expect(catalogueFor(['fr-FR', 'hi'])).toBe(hi);
    expect(catalogueFor(['fr-FR'])).toBe(en);
    expect(catalogueFor([])).toBe(en);
  });
});
