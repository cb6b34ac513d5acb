/**
 * The Quill console: a Preact single-page app under /console/, talking to the private API with the session cookie.
 * Pages that draw charts (insights, dashboard, health) load as separate chunks on first use.
 */
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter-preact';
import { api, onSignedOut, setCsrfToken } from './api';
import { Layout } from './components/layout';
import { lazyPage } from './components/lazy';
import { Page } from './components/ui';
import { SessionContext, type Me, type Project, type Session } from './session';
import { LoginPage } from './pages/login';
import { EventsPage } from './pages/events';
import { PersonsPage } from './pages/persons';
import { PersonPage } from './pages/person';
import { FlagsPage } from './pages/flags';
import { FlagPage } from './pages/flag-form';
import { CohortsPage, CohortPage } from './pages/cohorts';
import { DefinitionsPage } from './pages/definitions';
import { InsightsPage } from './pages/insights';
import { AccountPage } from './pages/account';
import { SettingsPage } from './pages/settings';
import 'uplot/dist/uPlot.min.css';
import './styles.css';

// One chunk for every insight page (uPlot and d3-sankey come with it), one for the dashboards, one for health.
const insightPages = () => import('./pages/insight-pages');
const TrendsPage = lazyPage(() => insightPages().then((m) => m.TrendsPage));
const FunnelPage = lazyPage(() => insightPages().then((m) => m.FunnelPage));
const RetentionPage = lazyPage(() => insightPages().then((m) => m.RetentionPage));
const PathsPage = lazyPage(() => insightPages().then((m) => m.PathsPage));
const SavedInsightPage = lazyPage(() => insightPages().then((m) => m.SavedInsightPage));
const dashboardPages = () => import('./pages/dashboard-pages');
const DashboardsPage = lazyPage(() => dashboardPages().then((m) => m.DashboardsPage));
const DashboardPage = lazyPage(() => dashboardPages().then((m) => m.DashboardPage));
const SqlPage = lazyPage(() => import('./pages/sql').then((m) => m.SqlPage));
const HealthPage = lazyPage(() => import('./pages/health').then((m) => m.HealthPage));
// Recordings: the list and a recording's page (its player, rrweb's Replayer, is a further chunk loaded with a recording).
const recordingPages = () => import('./pages/recordings');
const RecordingsPage = lazyPage(() => recordingPages().then((m) => m.RecordingsPage));
const RecordingPage = lazyPage(() => recordingPages().then((m) => m.RecordingPage));
const WebAnalyticsPage = lazyPage(() => import('./pages/web-analytics').then((m) => m.WebAnalyticsPage));
// What a share link opens (/shared/<token>): no sign-in, its own chunk.
const SharedPage = lazyPage(() => import('./pages/shared').then((m) => m.SharedPage));
const experimentPages = () => import('./pages/experiments');
const ExperimentsPage = lazyPage(() => experimentPages().then((m) => m.ExperimentsPage));
const ExperimentPage = lazyPage(() => experimentPages().then((m) => m.ExperimentPage));

type Auth = { state: 'loading' } | { state: 'signed-out' } | { state: 'signed-in'; me: Me; projects: Project[] };

async function loadSession(): Promise<Auth> {
  try {
    const probe = await api.get<{ authenticated: boolean }>('/api/login');
    if (!probe.authenticated) return { state: 'signed-out' };
    const me = await api.get<Me>('/api/users/@me/');
    setCsrfToken(me.csrf_token ?? null);
    const projects = await api.get<{ results: Project[] }>('/api/projects/');
    return { state: 'signed-in', me, projects: projects.results };
  } catch {
    return { state: 'signed-out' };
  }
}

function App() {
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });
  const [location, navigate] = useLocation();
  useEffect(() => {
    loadSession().then(setAuth);
    return onSignedOut(() => setAuth({ state: 'signed-out' }));
  }, []);
  const session = useMemo<Session | null>(() => auth.state !== 'signed-in' ? null : {
    me: auth.me,
    projects: auth.projects,
    async signOut() {
      await api.post('/api/logout').catch(() => undefined);
      setCsrfToken(null);
      setAuth({ state: 'signed-out' });
      navigate('/login');
    },
  }, [auth]);

  const sharedLink = /^\/shared\/([A-Za-z0-9_-]+)\/?$/.exec(location);
  if (sharedLink) return <SharedPage token={sharedLink[1]!} />;
  if (auth.state === 'loading') return <p class="muted boot">Loading…</p>;
  if (auth.state === 'signed-out' || !session) {
    return <LoginPage onSignedIn={async () => {
      const next = await loadSession();
      setAuth(next);
      if (location === '/login' || location === '/') navigate('/');
    }} />;
  }
  const home = session.me.team?.id ?? session.projects[0]?.id;
  return (
    <SessionContext.Provider value={session}>
      <Switch>
        <Route path="/account">{() => <Layout projectId={home ?? 0}><AccountPage /></Layout>}</Route>
        <Route path="/project/:pid/*?">
          {(params: { pid: string }) => <ProjectRoutes projectId={Number(params.pid)} />}
        </Route>
        {/* A signed-in user lands on the project's web analytics, the page a team opens first. */}
        <Route path="/">{() => (home ? <Redirect to={`/project/${home}/web`} replace /> : <p>No project.</p>)}</Route>
        {/* After signing in from another address, the login page's own address leads home. */}
        <Route path="/login">{() => <Redirect to="/" replace />}</Route>
        <Route>{() => <Layout projectId={home ?? 0}><NotFoundPage home={home ? `/project/${home}/events` : '/'} /></Layout>}</Route>
      </Switch>
    </SessionContext.Provider>
  );
}

function ProjectRoutes({ projectId }: { projectId: number }) {
  const base = `/project/${projectId}`;
  const p = { projectId };
  return (
    <Layout projectId={projectId}>
      <Switch>
        <Route path={`${base}/events`}>{() => <EventsPage {...p} />}</Route>
        <Route path={`${base}/persons`}>{() => <PersonsPage {...p} />}</Route>
        <Route path={`${base}/persons/:id`}>{(a: { id: string }) => <PersonPage {...p} personId={a.id} />}</Route>
        <Route path={`${base}/flags`}>{() => <FlagsPage {...p} />}</Route>
        <Route path={`${base}/flags/:id`}>{(a: { id: string }) => <FlagPage {...p} flagId={a.id} />}</Route>
        <Route path={`${base}/cohorts`}>{() => <CohortsPage {...p} />}</Route>
        <Route path={`${base}/cohorts/:id`}>{(a: { id: string }) => <CohortPage {...p} cohortId={a.id} />}</Route>
        <Route path={`${base}/experiments`}>{() => <ExperimentsPage {...p} />}</Route>
        <Route path={`${base}/experiments/:id`}>{(a: { id: string }) => <ExperimentPage key={a.id} {...p} experimentId={a.id} />}</Route>
        <Route path={`${base}/definitions`}>{() => <DefinitionsPage {...p} />}</Route>
        <Route path={`${base}/insights`}>{() => <InsightsPage {...p} />}</Route>
        <Route path={`${base}/insights/trends`}>{() => <TrendsPage {...p} insightId={null} />}</Route>
        <Route path={`${base}/insights/lifecycle`}>{() => <TrendsPage {...p} insightId={null} insight="LIFECYCLE" />}</Route>
        <Route path={`${base}/sql`}>{() => <SqlPage {...p} insightId={null} />}</Route>
        <Route path={`${base}/insights/stickiness`}>{() => <TrendsPage {...p} insightId={null} insight="STICKINESS" />}</Route>
        <Route path={`${base}/insights/funnels`}>{() => <FunnelPage {...p} insightId={null} />}</Route>
        <Route path={`${base}/insights/retention`}>{() => <RetentionPage {...p} insightId={null} />}</Route>
        <Route path={`${base}/insights/paths`}>{() => <PathsPage {...p} insightId={null} />}</Route>
        <Route path={`${base}/insights/saved/:id`}>{(a: { id: string }) => <SavedInsightPage key={a.id} {...p} insightId={Number(a.id)} />}</Route>
        <Route path={`${base}/insights/:kind`}>{(a: { kind: string }) => <InsightsPage {...p} kind={a.kind} />}</Route>
        <Route path={`${base}/dashboard`}>{() => <DashboardsPage {...p} />}</Route>
        <Route path={`${base}/dashboard/:id`}>{(a: { id: string }) => <DashboardPage key={a.id} {...p} dashboardId={Number(a.id)} />}</Route>
        <Route path={`${base}/replay`}>{() => <RecordingsPage {...p} />}</Route>
        <Route path={`${base}/replay/:id`}>{(a: { id: string }) => <RecordingPage key={a.id} {...p} sessionId={decodeURIComponent(a.id)} />}</Route>
        <Route path={`${base}/web`}>{() => <WebAnalyticsPage {...p} />}</Route>
        <Route path={`${base}/health`}>{() => <HealthPage />}</Route>
        <Route path={`${base}/settings`}>{() => <SettingsPage {...p} />}</Route>
        <Route path={base}>{() => <Redirect to={`${base}/web`} replace />}</Route>
        <Route>{() => <NotFoundPage home={`${base}/events`} />}</Route>
      </Switch>
    </Layout>
  );
}

/** An address the console has no page for (a mistyped or stale link): said so, not silently another page. */
function NotFoundPage({ home }: { home: string }) {
  const [location] = useLocation();
  return (
    <Page title="Page not found" testId="not-found-page">
      <p>The console has no page at <code>/console{location}</code>.</p>
      <p><Link href={home}>Go to live events</Link></p>
    </Page>
  );
}

render(
  <Router base="/console">
    <App />
  </Router>,
  document.getElementById('app')!,
);
