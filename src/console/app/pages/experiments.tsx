/**
 * Experiments, read-only: the list (status from the dates), and an experiment's results per metric (exposures, the
 * metric per variant, chance to win or p-value, significance) with the sample-ratio warning. Experiments are
 * created and edited through the API.
 */
import { Link } from 'wouter-preact';
import type { Paginated } from '../api';
import { ErrorNote, Loading, Page } from '../components/ui';
import { when } from '../lib/format';
import { useGet } from '../lib/hooks';

interface Experiment {
  id: number;
  name: string;
  description: string;
  feature_flag_key: string;
  status: 'draft' | 'running' | 'stopped';
  start_date: string | null;
  end_date: string | null;
  conclusion: string | null;
  stats_config: { method?: string };
  created_at: string;
}

interface VariantRow {
  key: string;
  exposures: number;
  number_of_samples: number;
  sum?: number;
  step_counts?: number[];
  chance_to_win?: number;
  p_value?: number;
  significant?: boolean;
}

interface MetricResult {
  index: number;
  metric_type: 'mean' | 'funnel';
  metric: { source?: { event?: string | null; math?: string }; series?: { event?: string | null }[] };
  baseline: VariantRow;
  variant_results: VariantRow[];
  significant: boolean;
  guard: { meaningful: boolean } | null;
  error: string | null;
}

interface Results {
  exposures: Record<string, number>;
  stats_method: 'bayesian' | 'frequentist';
  srm: { flagged: boolean; p_value: number } | null;
  metrics: MetricResult[];
  metrics_secondary: MetricResult[];
  date_range: { date_from: string; date_to: string };
}

export function ExperimentsPage({ projectId }: { projectId: number }) {
  const list = useGet<Paginated<Experiment>>(`/api/projects/${projectId}/experiments/?limit=200`);
  return (
    <Page title="Experiments" testId="experiments-page">
      <ErrorNote error={list.error} />
      <Loading when={list.loading && !list.data} />
      {list.data && (
        <>
          <table class="list" data-testid="experiment-list">
            <thead><tr><th>Name</th><th>Flag</th><th>Status</th><th>Started</th><th>Conclusion</th></tr></thead>
            <tbody>
              {list.data.results.map((e) => (
                <tr key={e.id}>
                  <td><Link href={`/project/${projectId}/experiments/${e.id}`}>{e.name}</Link></td>
                  <td><code>{e.feature_flag_key}</code></td>
                  <td>{e.status}</td>
                  <td>{e.start_date ? when(e.start_date) : '—'}</td>
                  <td>{e.conclusion ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.results.length === 0 && <p class="muted">No experiments. Create them through the API (POST /api/projects/{projectId}/experiments/).</p>}
        </>
      )}
    </Page>
  );
}

const pct = (x: number | undefined) => (x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);

function metricName(m: MetricResult): string {
  if (m.metric_type === 'funnel') return `Funnel: ${(m.metric.series ?? []).map((s) => s.event ?? 'any event').join(' → ')}`;
  return `${m.metric.source?.math ?? 'total'} of ${m.metric.source?.event ?? 'any event'}`;
}

function valueOf(m: MetricResult, v: VariantRow): string {
  if (m.metric_type === 'funnel') {
    const done = v.step_counts?.at(-1) ?? 0;
    return v.exposures > 0 ? `${done} (${pct(done / v.exposures)})` : '0';
  }
  return v.number_of_samples > 0 ? ((v.sum ?? 0) / v.number_of_samples).toFixed(3) : '—';
}

function MetricTable({ m, method }: { m: MetricResult; method: string }) {
  return (
    <div class="metric" data-testid="experiment-metric">
      <h3>{metricName(m)}</h3>
      {m.error && <p class="error">{m.error}</p>}
      {m.guard && !m.guard.meaningful && <p class="muted">Not enough data yet for a meaningful result.</p>}
      <table class="list">
        <thead><tr><th>Variant</th><th>Exposures</th><th>{m.metric_type === 'funnel' ? 'Converted' : 'Mean per person'}</th><th>{method === 'frequentist' ? 'p-value' : 'Chance to win'}</th><th>Significant</th></tr></thead>
        <tbody>
          {[m.baseline, ...m.variant_results].map((v) => (
            <tr key={v.key}>
              <td><code>{v.key}</code></td>
              <td>{v.exposures}</td>
              <td>{valueOf(m, v)}</td>
              <td>{v.key === m.baseline.key ? '—' : method === 'frequentist' ? (v.p_value?.toFixed(4) ?? '—') : pct(v.chance_to_win)}</td>
              <td>{v.key === m.baseline.key ? '' : v.significant ? 'yes' : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ExperimentPage({ projectId, experimentId }: { projectId: number; experimentId: string }) {
  const base = `/api/projects/${projectId}/experiments/${experimentId}/`;
  const experiment = useGet<Experiment>(base);
  const e = experiment.data;
  const results = useGet<Results>(e && e.status !== 'draft' ? `${base}results/` : null);
  const r = results.data;
  return (
    <Page title={e ? e.name : 'Experiment'} testId="experiment-page" actions={<Link class="button" href={`/project/${projectId}/experiments`}>All experiments</Link>}>
      <ErrorNote error={experiment.error ?? results.error} />
      <Loading when={(experiment.loading && !e) || (results.loading && !r)} />
      {e && (
        <p>
          Flag <code>{e.feature_flag_key}</code> · {e.status}
          {e.start_date ? ` since ${when(e.start_date)}` : ' (draft: set start_date to see results)'}
          {e.end_date ? ` until ${when(e.end_date)}` : ''}
          {e.description ? ` · ${e.description}` : ''}
        </p>
      )}
      {r && (
        <div data-testid="experiment-results">
          <p>
            Exposures: {Object.entries(r.exposures).map(([k, n]) => `${k} ${n}`).join(', ')} · {r.stats_method}
          </p>
          {r.srm?.flagged && <p class="error" data-testid="srm-warning">Sample ratio mismatch: the exposures do not follow the flag's split (p = {r.srm.p_value.toPrecision(3)}).</p>}
          {r.metrics.length + r.metrics_secondary.length === 0 && <p class="muted">No metrics.</p>}
          {r.metrics.map((m) => <MetricTable key={`p${m.index}`} m={m} method={r.stats_method} />)}
          {r.metrics_secondary.length > 0 && <h2>Secondary metrics</h2>}
          {r.metrics_secondary.map((m) => <MetricTable key={`s${m.index}`} m={m} method={r.stats_method} />)}
        </div>
      )}
    </Page>
  );
}
