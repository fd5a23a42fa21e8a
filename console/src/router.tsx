// The console's pages (TanStack Router, under /console). Every page but sign-in needs the API key.
import { createRootRoute, createRoute, createRouter, Link, Outlet, redirect } from '@tanstack/react-router';
import { useQueryClient } from '@tanstack/react-query';
import { session, useSessionKey } from './session';
import { SignIn } from './pages/sign-in';
import { RunsPage, runsSearch } from './pages/runs';
import { RunDetailPage } from './pages/run-detail';
import { KnowledgeBasesPage } from './pages/knowledge-bases';
import { KnowledgeBasePage } from './pages/knowledge-base';
import { SettingsPage } from './pages/settings';
import { StructuresPage } from './pages/structures';
import { StructurePage } from './pages/structure';

function Frame() {
  const key = useSessionKey();
  const queries = useQueryClient();
  if (!key) return <SignIn />;
  const signOut = () => {
    session.signOut();
    queries.clear(); // nothing read with the key stays in memory
  };
  return (
    <div className="frame">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Tarmac</span>
        <nav aria-label="Main">
          <Link to="/runs" activeProps={{ 'aria-current': 'page' }}>
            Runs
          </Link>
          <Link to="/structures" activeProps={{ 'aria-current': 'page' }}>
            Structures
          </Link>
          <Link to="/knowledge-bases" activeProps={{ 'aria-current': 'page' }}>
            Knowledge bases
          </Link>
          <Link to="/settings" activeProps={{ 'aria-current': 'page' }}>
            Settings
          </Link>
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
    throw redirect({ to: '/runs' });
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
const settingsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/settings', component: SettingsPage });

const routeTree = rootRoute.addChildren([
  indexRoute,
  runsRoute,
  runDetailRoute,
  structuresRoute,
  structureRoute,
  knowledgeBasesRoute,
  knowledgeBaseRoute,
  settingsRoute,
]);

export const router = createRouter({ routeTree, basepath: '/console', defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
