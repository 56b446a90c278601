// The dashboard's pages and their paths (the server answers each with index.html: its list is
// src/features/dashboard/pages.ts, compared with this one by routes.test.tsx).
export const PAGES = {
  overview: '/',
  login: '/login',
  grievances: '/grievances',
  grievance: '/grievances/:ticketId',
  nominees: '/nominees',
  consentLinks: '/consent-links',
  newConsentLink: '/consent-links/new',
  assets: '/assets',
  asset: '/assets/:assetId',
  collectionPoint: '/collection-points/:pointId',
  apiKeys: '/settings/api-keys',
  webhooks: '/settings/webhooks',
  rightsCenter: '/settings/rights-center',
  contactPerson: '/settings/contact-person',
  signingKeys: '/settings/signing-keys',
  members: '/settings/members',
  auditLog: '/settings/audit-log',
  fulfilment: '/fulfilment',
  dataCategories: '/data-map/categories',
  systems: '/data-map/systems',
} as const;

/** A page path with its parameters filled in (encoded). */
export function pathTo(pattern: string, params: Record<string, string>): string {
  return pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}
