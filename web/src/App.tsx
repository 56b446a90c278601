// The app: sign-in first (or the organization picker on the bare domain), then the pages in the frame.
// Pages load on demand, so the first screen downloads only what it shows.
import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { Link, Redirect, Route, Switch } from 'wouter';
import { restoreSession } from './api/session';
import { canChange, useSession, useSessionState } from './api/use-session';
import { Layout } from './components/Layout';
import { Empty, Loading } from './components/states';
import { useMessages } from './i18n';
import { PAGES } from './routes';
import { LoginPage, OrganizationPicker, isBaseDomain } from './pages/LoginPage';

const OverviewPage = lazy(() => import('./pages/OverviewPage'));
const GrievancesPage = lazy(() => import('./pages/GrievancesPage'));
const GrievancePage = lazy(() => import('./pages/GrievancePage'));
const NomineesPage = lazy(() => import('./pages/NomineesPage'));
const ConsentLinksPage = lazy(() => import('./pages/ConsentLinksPage'));
const NewConsentLinkPage = lazy(() => import('./pages/NewConsentLinkPage'));
const AssetsPage = lazy(() => import('./pages/AssetsPage'));
const AssetPage = lazy(() => import('./pages/AssetPage'));
const CollectionPointPage = lazy(() => import('./pages/CollectionPointPage'));
const ApiKeysPage = lazy(() => import('./pages/ApiKeysPage'));
const WebhooksPage = lazy(() => import('./pages/WebhooksPage'));
const RightsCenterSettingsPage = lazy(() => import('./pages/RightsCenterSettingsPage'));
const ContactPersonPage = lazy(() => import('./pages/ContactPersonPage'));
const SigningKeysPage = lazy(() => import('./pages/SigningKeysPage'));
const MembersPage = lazy(() => import('./pages/MembersPage'));
const AuditLogPage = lazy(() => import('./pages/AuditLogPage'));
const FulfilmentPage = lazy(() => import('./pages/FulfilmentPage'));
const DataCategoriesPage = lazy(() => import('./pages/DataCategoriesPage'));
const SystemsPage = lazy(() => import('./pages/SystemsPage'));

export function App() {
  const state = useSessionState();
  const m = useMessages();
  const bare = isBaseDomain();
  useEffect(() => {
    if (!bare) void restoreSession();
  }, [bare]);

  if (bare) return <OrganizationPicker />;
  if (state.status === 'unknown') return <Loading label={m.app.loadingSession} />;
  if (state.status === 'signed-out') return <LoginPage ended={state.ended} />;
  return (
    <Layout>
      <Suspense fallback={<Loading />}>
        <Pages />
      </Suspense>
    </Layout>
  );
}

function Pages() {
  const m = useMessages();
  const manager = canChange(useSession());
  // Pages for owners and admins: a member sees why, not a page of errors (the API refuses them too).
  const managersOnly = (page: ReactNode) => (manager ? page : <Empty>{m.common.forbidden}</Empty>);
  return (
    <Switch>
      <Route path={PAGES.overview}>
        <OverviewPage />
      </Route>
      <Route path={PAGES.login}>
        <Redirect to={PAGES.overview} replace />
      </Route>
      <Route path={PAGES.grievances}>
        <GrievancesPage />
      </Route>
      <Route path={PAGES.grievance}>{(p) => <GrievancePage ticketId={p.ticketId} />}</Route>
      <Route path={PAGES.nominees}>
        <NomineesPage />
      </Route>
      <Route path={PAGES.consentLinks}>{managersOnly(<ConsentLinksPage />)}</Route>
      <Route path={PAGES.newConsentLink}>{managersOnly(<NewConsentLinkPage />)}</Route>
      <Route path={PAGES.assets}>
        <AssetsPage />
      </Route>
      <Route path={PAGES.asset}>{(p) => <AssetPage assetId={p.assetId} />}</Route>
      <Route path={PAGES.collectionPoint}>{(p) => <CollectionPointPage pointId={p.pointId} />}</Route>
      <Route path={PAGES.apiKeys}>{managersOnly(<ApiKeysPage />)}</Route>
      <Route path={PAGES.webhooks}>{managersOnly(<WebhooksPage />)}</Route>
      <Route path={PAGES.rightsCenter}>{managersOnly(<RightsCenterSettingsPage />)}</Route>
      <Route path={PAGES.contactPerson}>{managersOnly(<ContactPersonPage />)}</Route>
      <Route path={PAGES.signingKeys}>{managersOnly(<SigningKeysPage />)}</Route>
      <Route path={PAGES.members}>{managersOnly(<MembersPage />)}</Route>
      <Route path={PAGES.auditLog}>{managersOnly(<AuditLogPage />)}</Route>
      <Route path={PAGES.fulfilment}>
        <FulfilmentPage />
      </Route>
      <Route path={PAGES.dataCategories}>
        <DataCategoriesPage />
      </Route>
      <Route path={PAGES.systems}>
        <SystemsPage />
      </Route>
      <Route>
        <section>
          <h1>{m.app.notFound}</h1>
          <Link href={PAGES.overview}>{m.app.backToOverview}</Link>
        </section>
      </Route>
    </Switch>
  );
}
