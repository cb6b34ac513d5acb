/** The project's dashboard: every saved insight as a tile, each computed afresh. Loaded as its own chunk. */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type Paginated } from '../api';
import { TrendView } from '../components/trend-view';
import { ErrorNote, Loading, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { kindOf } from '../lib/insight-kinds';
import type { TrendResult } from '../lib/trends-filters';

interface SavedInsight {
  id: number;
  name: string;
  filters: Record<string, any>;
}

export function DashboardPage({ projectId }: { projectId: number }) {
  const saved = useGet<Paginated<SavedInsight>>(`/api/projects/${projectId}/insights/?limit=50`);
  return (
    <Page title="Dashboard" testId="dashboard-page">
      <ErrorNote error={saved.error} />
      <Loading when={saved.loading && !saved.data} />
      {saved.data?.results.length === 0 && <p class="muted">Save an insight to see it here. <Link href={`/project/${projectId}/insights/trends`}>New trend</Link></p>}
      <div class="tiles">
        {saved.data?.results.map((i) => <Tile key={i.id} projectId={projectId} insight={i} />)}
      </div>
    </Page>
  );
}

function Tile({ projectId, insight }: { projectId: number; insight: SavedInsight }) {
  const [result, setResult] = useState<TrendResult[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const kind = kindOf(insight.filters.insight ?? 'TRENDS');
  useEffect(() => {
    if (!kind?.available) return;
    api.post<{ result: TrendResult[] }>(`/api/projects/${projectId}/insights/trend/`, insight.filters).then((a) => setResult(a.result), setError);
  }, [insight.id]);
  return (
    <article class="tile card" data-testid="dashboard-tile">
      <h3><Link href={`/project/${projectId}/insights/saved/${insight.id}`}>{insight.name || `Insight ${insight.id}`}</Link></h3>
      {!kind?.available && <p class="muted">{kind?.title ?? 'This kind'} is not available yet.</p>}
      <ErrorNote error={error} />
      {result ? <TrendView result={result} display={insight.filters.display} projectId={projectId} compact /> : kind?.available && !error && <p class="muted">Calculating…</p>}
    </article>
  );
}
