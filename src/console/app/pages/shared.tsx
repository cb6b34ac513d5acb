/**
 * The page a share link opens (/shared/<token>, no sign-in): a dashboard's tiles, one insight, or the web analytics
 * page, read-only, with the answers the link gives (`GET /api/shared/<token>`). A password-protected link asks for
 * its password first (PostHog's unlock, `POST /shared/<token>`); the token that buys is kept for this tab only.
 * Loaded as its own chunk; nothing here uses the signed-in user's API.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { DashboardGrid } from '../components/dashboard-grid';
import { DashboardTile, type Tile, type TileInsight } from '../components/dashboard-tile';
import { ErrorNote, Loading, Page } from '../components/ui';
import { placementOf } from '../lib/dashboard-layout';
import { ago } from '../lib/format';
import { SharedViewContext, type SharedView } from '../lib/shared-view';
import { WebAnalyticsPage } from './web-analytics';

interface SharedAnswer {
  type: 'dashboard' | 'insight' | 'web_analytics';
  project: { name: string; timezone: string };
  dashboard?: { name: string; description: string; tiles: Tile[] };
  insight?: TileInsight & { description: string };
}

class SharedError extends Error {
  constructor(readonly status: number, readonly code: string | undefined, detail: string) {
    super(detail);
  }
}

const unlockKey = (token: string) => `quill.shared.${token}`;

/** A request of the link: its unlock token (if any) as Bearer, errors as SharedError (never the console's sign-out). */
async function shared<T>(token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const unlock = sessionStorage.getItem(unlockKey(token));
  if (unlock) headers.authorization = `Bearer ${unlock}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
  const parsed = await res.json().catch(() => null);
  if (!res.ok) throw new SharedError(res.status, parsed?.code, parsed?.detail ?? `HTTP ${res.status}`);
  return parsed as T;
}

export function SharedPage({ token }: { token: string }) {
  const [answer, setAnswer] = useState<SharedAnswer | null>(null);
  const [error, setError] = useState<SharedError | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setError(null);
    shared<SharedAnswer>(token, 'GET', `/api/shared/${token}`).then(setAnswer, setError);
  }, [token, attempt]);
  const view = useMemo<SharedView | null>(() => answer && {
    timezone: answer.project.timezone,
    runQuery: <T,>(query: object) => shared<T>(token, 'POST', `/api/shared/${token}/query/`, { query }),
  }, [answer, token]);

  if (error?.code === 'password_required') return <Unlock token={token} onUnlocked={() => setAttempt(attempt + 1)} />;
  if (error) {
    return (
      <main class="shared" data-testid="shared-page">
        <Page title="Shared link">
          <p role="alert" data-testid="shared-missing">{error.status === 404 ? 'This link does not exist or is no longer shared.' : error.message}</p>
        </Page>
      </main>
    );
  }
  if (!answer || !view) return <Loading when />;
  return (
    <SharedViewContext.Provider value={view}>
      <main class="shared" data-testid="shared-page" data-type={answer.type}>
        <p class="muted small">{answer.project.name} · shared read-only with Quill</p>
        {answer.type === 'web_analytics' && <WebAnalyticsPage projectId={0} title={`Web analytics · ${answer.project.name}`} />}
        {answer.type === 'dashboard' && answer.dashboard && <SharedDashboard dashboard={answer.dashboard} />}
        {answer.type === 'insight' && answer.insight && <SharedInsight insight={answer.insight} />}
      </main>
    </SharedViewContext.Provider>
  );
}

function computedText(refreshes: (string | null)[]): string {
  const oldest = refreshes.filter((r): r is string => r !== null).sort()[0];
  return oldest ? `Computed ${ago(oldest)}` : '';
}

function SharedDashboard({ dashboard }: { dashboard: NonNullable<SharedAnswer['dashboard']> }) {
  const placement = useMemo(() => placementOf(dashboard.tiles), [dashboard]);
  return (
    <Page title={dashboard.name || 'Dashboard'} testId="dashboard-page" actions={<span class="muted small">{computedText(dashboard.tiles.map((t) => t.insight.last_refresh))}</span>}>
      {dashboard.description && <p class="muted">{dashboard.description}</p>}
      {dashboard.tiles.length === 0
        ? <p class="muted">This dashboard has no tiles.</p>
        : <DashboardGrid placement={placement} tiles={dashboard.tiles.map((t) => ({
          id: t.id, title: t.insight.name || 'Insight', render: (handle) => <DashboardTile projectId={0} tile={t} handle={handle} />,
        }))} />}
    </Page>
  );
}

function SharedInsight({ insight }: { insight: NonNullable<SharedAnswer['insight']> }) {
  const tile: Tile = { id: 0, layouts: {}, color: null, insight };
  return (
    <Page title={insight.name || 'Insight'} testId="shared-insight" actions={<span class="muted small">{computedText([insight.last_refresh])}</span>}>
      {insight.description && <p class="muted">{insight.description}</p>}
      <DashboardTile projectId={0} tile={tile} handle={null} />
    </Page>
  );
}

function Unlock({ token, onUnlocked }: { token: string; onUnlocked(): void }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<Error | null>(null);
  return (
    <main class="shared" data-testid="shared-unlock">
      <Page title="This link is protected">
        <form class="row" onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          try {
            sessionStorage.removeItem(unlockKey(token));
            const { shareToken } = await shared<{ shareToken: string }>(token, 'POST', `/shared/${token}`, { password });
            sessionStorage.setItem(unlockKey(token), shareToken);
            onUnlocked();
          } catch (err) {
            setError(err as Error);
          }
        }}>
          <input type="password" aria-label="password" required autoFocus value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
          <button type="submit" class="primary">Open</button>
        </form>
        <ErrorNote error={error} />
      </Page>
    </main>
  );
}
