/** Insights: the kinds (those whose analysis Quill serves, and those still to come) and the saved insights. */
import { Link } from 'wouter-preact';
import { api, type Paginated } from '../api';
import { ErrorNote, Page } from '../components/ui';
import { ago } from '../lib/format';
import { useGet } from '../lib/hooks';
import { INSIGHT_KINDS, kindOf } from '../lib/insight-kinds';

interface SavedInsight {
  id: number;
  name: string;
  filters: Record<string, unknown>;
  last_modified_at: string;
}

export function InsightsPage({ projectId, kind }: { projectId: number; kind?: string }) {
  const saved = useGet<Paginated<SavedInsight>>(`/api/projects/${projectId}/insights/?limit=100`);
  const chosen = kind ? INSIGHT_KINDS.find((k) => k.kind === kind) : undefined;
  if (kind && chosen && !chosen.available) {
    return (
      <Page title={chosen.title} testId="insight-unavailable">
        <p class="notice">Not available yet: {chosen.description} It needs the analysis endpoint <code>/api/projects/:id/{chosen.endpoint}</code>, which this Quill does not serve yet.</p>
        <Link href={`/project/${projectId}/insights`}>Back to insights</Link>
      </Page>
    );
  }
  return (
    <Page title="Insights" testId="insights-page">
      <div class="kinds">
        {INSIGHT_KINDS.map((k) => (
          <Link key={k.kind} href={`/project/${projectId}/insights/${k.kind}`} class={k.available ? 'kind card' : 'kind card unavailable'} data-kind={k.kind}>
            <strong>{k.title}</strong>
            <span>{k.description}</span>
            {!k.available && <em class="badge">not available yet</em>}
          </Link>
        ))}
      </div>
      <h2>Saved insights</h2>
      <ErrorNote error={saved.error} />
      {saved.data && (saved.data.results.length === 0 ? <p class="muted">None yet: build one and save it.</p> : (
        <table class="list" data-testid="saved-insights">
          <thead><tr><th>Name</th><th>Kind</th><th>Modified</th><th></th></tr></thead>
          <tbody>
            {saved.data.results.map((i) => (
              <tr key={i.id}>
                <td><Link href={`/project/${projectId}/insights/saved/${i.id}`}>{i.name || `Insight ${i.id}`}</Link></td>
                <td>{kindOf(i.filters.insight)?.title ?? String(i.filters.insight ?? '')}</td>
                <td>{ago(i.last_modified_at)}</td>
                <td><button class="ghost danger" onClick={async () => {
                  if (!confirm(`Delete ${i.name}?`)) return;
                  await api.patch(`/api/projects/${projectId}/insights/${i.id}/`, { deleted: true });
                  saved.reload();
                }}>Delete</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </Page>
  );
}
