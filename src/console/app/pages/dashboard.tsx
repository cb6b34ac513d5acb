/** The project's dashboard: every saved insight as a tile, each computed afresh by its kind's endpoint. */
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import type { Paginated } from '../api';
import { InsightResult } from '../components/insight-result';
import { ErrorNote, Loading, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { kindOf, runInsight } from '../lib/insight-kinds';

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
  const [result, setResult] = useState<unknown>(null);
  const [error, setError] = useState<Error | null>(null);
  const kind = kindOf(insight.filters.insight);
  useEffect(() => {
    if (!kind?.available) return;
    runInsight(projectId, insight.filters).then(setResult, setError);
  }, [insight.id]);
  return (
    <article class="tile card" data-testid="dashboard-tile" data-kind={kind?.kind}>
      <h3><Link href={`/project/${projectId}/insights/saved/${insight.id}`}>{insight.name || `Insight ${insight.id}`}</Link></h3>
      {!kind?.available && <p class="muted">{kind?.title ?? 'This kind'} is not available yet.</p>}
      <ErrorNote error={error} />
      {result ? <InsightResult filters={insight.filters} result={result} projectId={projectId} compact /> : kind?.available && !error && <p class="muted">Calculating…</p>}
    </article>
  );
}
