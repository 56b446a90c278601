// Every path the dashboard app routes in the browser: the server answers each with index.html.
// web/src/routes.ts names the same paths (web/src/routes.test.tsx compares the two lists).
export const DASHBOARD_PAGES = [
  '/',
  '/login',
  '/grievances',
  '/grievances/:ticket_id',
  '/nominees',
  '/consent-links',
  '/consent-links/new',
  '/assets',
  '/assets/:asset_id',
  '/collection-points/:point_id',
  '/settings/api-keys',
  '/settings/webhooks',
  '/settings/rights-center',
  '/settings/contact-person',
  '/settings/signing-keys',
  '/settings/members',
  '/settings/audit-log',
  '/fulfilment',
  '/data-map/categories',
  '/data-map/systems',
] as const;
