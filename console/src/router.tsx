// The console's pages (TanStack Router, under /console). Every page but sign-in, set-password and accept-invite
// needs a signed-in person (a cookie session).
import { useEffect } from 'react';
import {
  createRootRoute,
  createRoute,
  createRouter,
  Link,
  Outlet,
  redirect,
  useRouterState,
} from '@tanstack/react-router';
import { useQueryClient } from '@tanstack/react-query';
import { session, useSignedIn } from './session';
import { currentSession, signOutSession } from './api/sessions';
import { queryKeys } from './api/query-keys';
import { SignIn } from './pages/sign-in';
import { SetPasswordPage } from './pages/set-password';
import { AcceptInvitePage } from './pages/accept-invite';
import { RunsPage, runsSearch } from './pages/runs';
import { RunDetailPage } from './pages/run-detail';
import { KnowledgeBasesPage } from './pages/knowledge-bases';
import { KnowledgeBasePage } from './pages/knowledge-base';
import { SettingsPage } from './pages/settings';
import { StructuresPage } from './pages/structures';
import { StructurePage } from './pages/structure';
import { CodeResourcesPage } from './pages/code-resources';
import { CodeResourcePage } from './pages/code-resource';
import { AssistantsPage } from './pages/assistants';
import { AssistantPage } from './pages/assistant';
import { DataConnectorsPage } from './pages/data-connectors';
import { DataConnectorPage } from './pages/data-connector';
import { IntegrationsPage } from './pages/integrations';
import { IntegrationPage } from './pages/integration';
import { BucketsPage } from './pages/buckets';
import { BucketPage } from './pages/bucket';
import { DashboardPage } from './pages/dashboard';
import { WaitpointsPage } from './pages/waitpoints';

/** The main navigation, in this order (schedules and queues are on their resource's page). */
const NAV = [
  ['/dashboard', 'Dashboard'],
  ['/runs', 'Runs'],
  ['/waitpoints', 'Waiting'],
  ['/structures', 'Structures'],
  ['/functions', 'Functions'],
  ['/tools', 'Tools'],
  ['/assistants', 'Assistants'],
  ['/knowledge-bases', 'Knowledge bases'],
  ['/data-connectors', 'Data connectors'],
  ['/integrations', 'Integrations'],
  ['/buckets', 'Buckets'],
  ['/settings', 'Settings'],
] as const;

function Frame() {
  const signedIn = useSignedIn();
  const queries = useQueryClient();
  // The pages of one-time links stand alone: they work signed out.
  const setPassword = useRouterState({
    select: (s) => s.matches.some((m) => m.routeId === '/set-password' || m.routeId === '/accept-invite'),
  });
  useEffect(() => {
    // A tab opened on a live session (the cookie outlives a reload) is signed in without asking again.
    if (signedIn === 'unknown')
      currentSession().then(
        (current) => {
          if (current) queries.setQueryData(queryKeys.session, current);
          session.cookieSession(current !== null);
        },
        () => session.cookieSession(false),
      );
  }, [signedIn, queries]);
  if (setPassword) return <Outlet />;
  if (signedIn === 'unknown') return <main id="main" aria-busy="true" />;
  if (signedIn === 'signed-out') return <SignIn />;
  const signOut = async () => {
    await signOutSession().catch(() => undefined); // an ended session is signed out already
    session.signOut();
    queries.clear(); // nothing read while signed in stays in memory
  };
  return (
    <div className="frame">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Tarmac</span>
        <nav aria-label="Main">
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} activeProps={{ 'aria-current': 'page' }}>
              {label}
            </Link>
          ))}
        </nav>
        <button type="button" className="signout" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Outlet />
      </main>
    </div>
  );
}

const rootRoute = createRootRoute({ component: Frame });

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/dashboard' });
  },
});
const runsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/runs',
  validateSearch: runsSearch,
  component: RunsPage,
});
export const runDetailRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/runs/$kind/$runId',
  component: RunDetailPage,
});
const structuresRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/structures',
  component: StructuresPage,
});
const structureRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/structures/$structureId',
  component: StructurePage,
});
const knowledgeBasesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/knowledge-bases',
  component: KnowledgeBasesPage,
});
export const knowledgeBaseRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/knowledge-bases/$knowledgeBaseId',
  component: KnowledgeBasePage,
});
const setPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/set-password',
  component: SetPasswordPage,
});
const acceptInviteRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/accept-invite',
  component: AcceptInvitePage,
});
const settingsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/settings', component: SettingsPage });
const dashboardRoute = createRoute({ getParentRoute: () => rootRoute, path: '/dashboard', component: DashboardPage });
const waitpointsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/waitpoints',
  component: WaitpointsPage,
});
const functionsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions',
  component: () => <CodeResourcesPage kind="function" />,
});
const functionRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/functions/$resourceId',
  component: () => <CodeResourcePage kind="function" />,
});
const toolsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/tools',
  component: () => <CodeResourcesPage kind="tool" />,
});
const toolRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/tools/$resourceId',
  component: () => <CodeResourcePage kind="tool" />,
});
const assistantsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/assistants',
  component: AssistantsPage,
});
const assistantRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/assistants/$assistantId',
  component: AssistantPage,
});
const dataConnectorsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/data-connectors',
  component: DataConnectorsPage,
});
const dataConnectorRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/data-connectors/$dataConnectorId',
  component: DataConnectorPage,
});
const integrationsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/integrations',
  component: IntegrationsPage,
});
const integrationRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/integrations/$integrationId',
  component: IntegrationPage,
});
const bucketsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/buckets', component: BucketsPage });
const bucketRoute = createRoute({ getParentRoute: () => rootRoute, path: '/buckets/$bucketId', component: BucketPage });

const routeTree = rootRoute.addChildren([
  indexRoute,
  runsRoute,
  runDetailRoute,
  structuresRoute,
  structureRoute,
  knowledgeBasesRoute,
  knowledgeBaseRoute,
  settingsRoute,
  setPasswordRoute,
  acceptInviteRoute,
  dashboardRoute,
  waitpointsRoute,
  functionsRoute,
  functionRoute,
  toolsRoute,
  toolRoute,
  assistantsRoute,
  assistantRoute,
  dataConnectorsRoute,
  dataConnectorRoute,
  integrationsRoute,
  integrationRoute,
  bucketsRoute,
  bucketRoute,
]);

export const router = createRouter({ routeTree, basepath: '/console', defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
