/**
 * Experiments: the list (status from the dates) with a form that creates one (a new flag, or an existing
 * multivariate one, and a funnel or mean metric); an experiment's page with its lifecycle (start, stop, conclude),
 * the first exposures per variant over time, the results per metric (exposures, the metric per variant, chance to
 * win or p-value, the interval of the lift drawn against zero, significance) and the sample-ratio warning.
 */
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type Paginated } from '../api';
import { PropertyInput, PropertyScope } from '../components/property-input';
import { ErrorNote, Field, Loading, Page } from '../components/ui';
import { guardReasonsText, intervalAxisText, type GuardReasonView } from '../lib/experiment-text';
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
  /** Relative lift intervals: Bayesian credible, frequentist confidence. */
  credible_interval?: [number, number];
  confidence_interval?: [number, number];
}

interface MetricResult {
  index: number;
  metric_type: 'mean' | 'funnel';
  metric: { source?: { event?: string | null; math?: string }; series?: { event?: string | null }[] };
  baseline: VariantRow;
  variant_results: VariantRow[];
  significant: boolean;
  guard: { meaningful: boolean; reasons?: GuardReasonView[] } | null;
  error: string | null;
}

interface Results {
  exposures: Record<string, number>;
  stats_method: 'bayesian' | 'frequentist';
  srm: { flagged: boolean; p_value: number } | null;
  metrics: MetricResult[];
  metrics_secondary: MetricResult[];
  date_range: { date_from: string; date_to: string };
  exposures_timeline?: { days: string[]; counts: Record<string, number[]> };
}

export function ExperimentsPage({ projectId }: { projectId: number }) {
  const list = useGet<Paginated<Experiment>>(`/api/projects/${projectId}/experiments/?limit=200`);
  const [creating, setCreating] = useState(false);
  return (
    <Page title="Experiments" testId="experiments-page" actions={!creating && <button class="primary" onClick={() => setCreating(true)}>New experiment</button>}>
      {creating && <NewExperiment projectId={projectId} onCancel={() => setCreating(false)} />}
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
          {list.data.results.length === 0 && <p class="muted">No experiments yet.</p>}
        </>
      )}
    </Page>
  );
}

/** The form's metric, as PostHog's `ExperimentMetric`. */
function metricOf(type: string, events: string, math: string, property: string): Record<string, unknown> {
  if (type === 'funnel') {
    const steps = events.split(/\s*(?:,|→|->)\s*/).map((e) => e.trim()).filter(Boolean);
    return { kind: 'ExperimentMetric', metric_type: 'funnel', series: steps.map((event) => ({ kind: 'EventsNode', event })) };
  }
  return {
    kind: 'ExperimentMetric', metric_type: 'mean',
    source: { kind: 'EventsNode', event: events.trim(), math, ...(math !== 'total' && property.trim() ? { math_property: property.trim() } : {}) },
  };
}

function NewExperiment({ projectId, onCancel }: { projectId: number; onCancel(): void }) {
  const [, navigate] = useLocation();
  const [form, setForm] = useState({ name: '', key: '', description: '', type: 'funnel', events: '', math: 'total', property: '', method: 'bayesian' });
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (field: keyof typeof form) => (e: Event) => setForm({ ...form, [field]: (e.target as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        name: form.name, feature_flag_key: form.key, description: form.description,
        metrics: form.events.trim() ? [metricOf(form.type, form.events, form.math, form.property)] : [],
        stats_config: { method: form.method },
      };
      const created = await api.post<{ id: number }>(`/api/projects/${projectId}/experiments/`, body);
      navigate(`/project/${projectId}/experiments/${created.id}`);
    } catch (err) {
      setError(err as Error);
      setBusy(false);
    }
  };
  return (
    <form class="card form" data-testid="experiment-form" onSubmit={submit}>
      <h2>New experiment</h2>
      <Field label="Name"><input name="name" required value={form.name} onInput={set('name')} /></Field>
      <Field label="Feature flag key" hint="A new key creates a flag with control and test at 50/50; an existing flag must be multivariate with a control variant.">
        <input name="feature_flag_key" required pattern={'[A-Za-z0-9_\\-]+'} value={form.key} onInput={set('key')} />
      </Field>
      <Field label="Description"><input name="description" value={form.description} onInput={set('description')} /></Field>
      <Field label="Metric">
        <select name="metric_type" value={form.type} onChange={set('type')}>
          <option value="funnel">Conversion (funnel of steps)</option>
          <option value="mean">Mean per person</option>
        </select>
      </Field>
      <Field label={form.type === 'funnel' ? 'Steps' : 'Event'} hint={form.type === 'funnel' ? 'Event names in order, separated by commas: counted after each person\'s exposure.' : 'Counted after each person\'s exposure.'}>
        <input name="metric_events" value={form.events} onInput={set('events')} placeholder={form.type === 'funnel' ? 'signup, purchase' : 'purchase'} />
      </Field>
      {form.type === 'mean' && (
        <>
          <Field label="Per person">
            <select name="metric_math" value={form.math} onChange={set('math')}>
              <option value="total">number of events</option>
              <option value="sum">sum of a property</option>
              <option value="avg">average of a property</option>
            </select>
          </Field>
          {form.math !== 'total' && (
            <Field label="Property">
              <PropertyScope projectId={projectId}>
                <PropertyInput kind="event" numeric live name="metric_property" label="metric property" value={form.property} onChange={(property) => setForm({ ...form, property })} />
              </PropertyScope>
            </Field>
          )}
        </>
      )}
      <Field label="Statistics">
        <select name="stats_method" value={form.method} onChange={set('method')}>
          <option value="bayesian">Bayesian (chance to win)</option>
          <option value="frequentist">Frequentist (p-value)</option>
        </select>
      </Field>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>Create</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
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

const COLORS = ['#64748b', '#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626'];

/**
 * A variant's interval of the relative lift over control, drawn on one axis shared by the metric's rows (so rows
 * compare), with zero marked: an interval clear of zero is the significant one.
 */
function IntervalBar({ interval, extent, significant }: { interval: [number, number]; extent: number; significant: boolean }) {
  const W = 180;
  const x = (v: number) => ((Math.max(-extent, Math.min(extent, v)) + extent) / (2 * extent)) * W;
  const [lo, hi] = interval;
  const color = !significant ? '#94a3b8' : lo > 0 ? '#16a34a' : '#dc2626';
  return (
    <svg width={W} height="18" role="img" aria-label={`lift between ${pct(lo)} and ${pct(hi)}`} data-testid="lift-interval">
      <line x1={x(0)} x2={x(0)} y1="0" y2="18" stroke="#0f172a" stroke-width="1" />
      <rect x={x(lo)} width={Math.max(2, x(hi) - x(lo))} y="5" height="8" rx="2" fill={color} />
      <title>{`${pct(lo)} … ${pct(hi)}`}</title>
    </svg>
  );
}

function MetricTable({ m, method }: { m: MetricResult; method: string }) {
  const intervalOf = (v: VariantRow) => (method === 'frequentist' ? v.confidence_interval : v.credible_interval) ?? null;
  const bounds = m.variant_results.flatMap((v) => intervalOf(v) ?? []).filter(Number.isFinite).map(Math.abs);
  // The axis covers every row's interval (at least ±10 %, at most ±500 %).
  const extent = Math.min(5, Math.max(0.1, ...bounds));
  return (
    <div class="metric" data-testid="experiment-metric">
      <h3>{metricName(m)}</h3>
      {m.error && <p class="error">{m.error}</p>}
      {m.guard && !m.guard.meaningful && (
        <div class="warning" data-testid="experiment-guard">
          <p>Not significant yet, whatever the chance to win and the interval say: each variant needs a minimum sample before a result is called.</p>
          <ul>{guardReasonsText(m.guard.reasons ?? []).map((line) => <li key={line}>{line}</li>)}</ul>
        </div>
      )}
      <table class="list">
        <thead>
          <tr>
            <th>Variant</th><th>Exposures</th><th>{m.metric_type === 'funnel' ? 'Converted' : 'Mean per person'}</th>
            <th>{method === 'frequentist' ? 'p-value' : 'Chance to win'}</th>
            <th title={intervalAxisText(extent)}>{method === 'frequentist' ? '95 % confidence interval of the lift' : '95 % credible interval of the lift'}</th>
            <th>Significant</th>
          </tr>
        </thead>
        <tbody>
          {[m.baseline, ...m.variant_results].map((v) => {
            const interval = v.key === m.baseline.key ? null : intervalOf(v);
            return (
              <tr key={v.key}>
                <td><code>{v.key}</code></td>
                <td>{v.exposures}</td>
                <td>{valueOf(m, v)}</td>
                <td>{v.key === m.baseline.key ? '—' : method === 'frequentist' ? (v.p_value?.toFixed(4) ?? '—') : pct(v.chance_to_win)}</td>
                <td>
                  {interval && interval.every(Number.isFinite)
                    ? <span class="interval"><IntervalBar interval={interval} extent={extent} significant={v.significant === true} /> {pct(interval[0])} … {pct(interval[1])}</span>
                    : v.key === m.baseline.key ? 'baseline' : '—'}
                </td>
                <td>{v.key === m.baseline.key ? '' : v.significant ? 'yes' : 'no'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p class="muted" data-testid="interval-axis">{intervalAxisText(extent)}</p>
    </div>
  );
}

const BAR_W = 28;
const DASHES = [undefined, '7 4', '2 3', '10 3 2 3'];

/** Cumulative first exposures per variant, one line each, per day of the experiment. */
function ExposuresChart({ timeline }: { timeline: NonNullable<Results['exposures_timeline']> }) {
  const W = 640;
  const H = 160;
  const PAD = { left: 44, right: 12, top: 10, bottom: 24 };
  const keys = Object.keys(timeline.counts);
  const cumulative = keys.map((k) => {
    let total = 0;
    return timeline.counts[k]!.map((n) => (total += n));
  });
  const days = timeline.days.length;
  const max = Math.max(1, ...cumulative.map((c) => c.at(-1) ?? 0));
  // One day is drawn in the middle; more spread over the width.
  const x = (d: number) => PAD.left + (days <= 1 ? 0.5 : d / (days - 1)) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const label = (iso: string) => iso.slice(5, 10);
  // At most ~6 date labels, so they never overlap.
  const every = Math.max(1, Math.ceil(days / 6));
  return (
    <figure class="exposures" data-testid="exposures-chart">
      <svg width={W} height={H} role="img" aria-label="first exposures per variant over time">
        <line x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} stroke="#cbd5e1" />
        <text x={PAD.left - 6} y={y(max) + 4} text-anchor="end" font-size="11">{max}</text>
        <text x={PAD.left - 6} y={y(0) + 4} text-anchor="end" font-size="11">0</text>
        {timeline.days.map((d, i) => ((i % every === 0 && days - 1 - i >= Math.ceil(every / 2)) || i === days - 1
          // The first and last labels are anchored inwards so they stay inside the chart.
          ? <text key={d} x={x(i)} y={H - 6} text-anchor={days > 1 && i === 0 ? 'start' : days > 1 && i === days - 1 ? 'end' : 'middle'} font-size="11">{label(d)}</text>
          : null))}
        {days <= 1
          // One day: a bar per variant side by side, each with its count (points at one x hid each other).
          ? cumulative.map((c, k) => {
            const bx = x(0) + (k - (keys.length - 1) / 2) * (BAR_W + 8) - BAR_W / 2;
            return (
              <g key={keys[k]} data-testid="exposure-bar">
                <rect x={bx} y={y(c[0] ?? 0)} width={BAR_W} height={Math.max(1, y(0) - y(c[0] ?? 0))} fill={COLORS[k % COLORS.length]} />
                <text x={bx + BAR_W / 2} y={y(c[0] ?? 0) - 4} text-anchor="middle" font-size="11">{c[0] ?? 0}</text>
              </g>
            );
          })
          // Lines of equal counts lie on each other: each variant's dash pattern keeps them apart.
          : cumulative.map((c, k) => (
            <polyline key={keys[k]} fill="none" stroke={COLORS[k % COLORS.length]} stroke-width="2" stroke-dasharray={DASHES[k % DASHES.length]} points={c.map((v, i) => `${x(i)},${y(v)}`).join(' ')} />
          ))}
      </svg>
      <figcaption>
        {keys.map((k, i) => <span key={k} class="legend-item"><span class="swatch" style={{ background: COLORS[i % COLORS.length] }} />{k}: {cumulative[i]!.at(-1) ?? 0}</span>)}
      </figcaption>
    </figure>
  );
}

const CONCLUSIONS = ['won', 'lost', 'inconclusive', 'stopped_early', 'invalid'] as const;

/** Start (draft), stop (running), conclude (running or stopped): PATCHes of the dates and the conclusion. */
function Lifecycle({ base, e, onChanged }: { base: string; e: Experiment; onChanged(): void }) {
  const [conclusion, setConclusion] = useState<string>(e.conclusion ?? 'won');
  const [comment, setComment] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const patch = async (body: Record<string, unknown>) => {
    setError(null);
    try {
      await api.patch(base, body);
      onChanged();
    } catch (err) {
      setError(err as Error);
    }
  };
  const now = () => new Date().toISOString();
  return (
    <div class="lifecycle" data-testid="experiment-lifecycle">
      {e.status === 'draft' && <button class="primary" onClick={() => patch({ start_date: now() })}>Start</button>}
      {e.status === 'running' && <button onClick={() => patch({ end_date: now() })}>Stop</button>}
      {e.status !== 'draft' && (
        <span class="conclude">
          <select aria-label="conclusion" value={conclusion} onChange={(ev) => setConclusion((ev.target as HTMLSelectElement).value)}>
            {CONCLUSIONS.map((c) => <option key={c} value={c}>{c.replace('_', ' ')}</option>)}
          </select>
          <input aria-label="conclusion comment" placeholder="Why (optional)" value={comment} onInput={(ev) => setComment((ev.target as HTMLInputElement).value)} />
          <button onClick={() => patch({ conclusion, conclusion_comment: comment || null, ...(e.status === 'running' ? { end_date: now() } : {}) })}>Conclude</button>
        </span>
      )}
      <ErrorNote error={error} />
    </div>
  );
}

export function ExperimentPage({ projectId, experimentId }: { projectId: number; experimentId: string }) {
  const base = `/api/projects/${projectId}/experiments/${experimentId}/`;
  const experiment = useGet<Experiment>(base);
  const e = experiment.data;
  const results = useGet<Results>(e && e.status !== 'draft' ? `${base}results/?v=${encodeURIComponent(`${e.start_date}|${e.end_date}`)}` : null);
  const r = results.data;
  return (
    <Page title={e ? e.name : 'Experiment'} testId="experiment-page" actions={<Link class="button" href={`/project/${projectId}/experiments`}>All experiments</Link>}>
      <ErrorNote error={experiment.error ?? results.error} />
      <Loading when={(experiment.loading && !e) || (results.loading && !r)} />
      {e && (
        <>
          <p data-testid="experiment-status">
            Flag <Link href={`/project/${projectId}/flags`}><code>{e.feature_flag_key}</code></Link> · <strong>{e.status}</strong>
            {e.start_date ? ` since ${when(e.start_date)}` : ' (draft: start it to see results)'}
            {e.end_date ? ` until ${when(e.end_date)}` : ''}
            {e.conclusion ? ` · concluded: ${e.conclusion.replace('_', ' ')}` : ''}
            {e.description ? ` · ${e.description}` : ''}
          </p>
          <Lifecycle base={base} e={e} onChanged={experiment.reload} />
        </>
      )}
      {r && (
        <div data-testid="experiment-results">
          <p>
            Exposures: {Object.entries(r.exposures).map(([k, n]) => `${k} ${n}`).join(', ')} · {r.stats_method}
          </p>
          {r.srm?.flagged && <p class="error" data-testid="srm-warning">Sample ratio mismatch: the exposures do not follow the flag's split (p = {r.srm.p_value.toPrecision(3)}). Check how the flag is called before trusting the results.</p>}
          {r.exposures_timeline && r.exposures_timeline.days.length > 0 && <ExposuresChart timeline={r.exposures_timeline} />}
          {r.metrics.length + r.metrics_secondary.length === 0 && <p class="muted">No metrics.</p>}
          {r.metrics.map((m) => <MetricTable key={`p${m.index}`} m={m} method={r.stats_method} />)}
          {r.metrics_secondary.length > 0 && <h2>Secondary metrics</h2>}
          {r.metrics_secondary.map((m) => <MetricTable key={`s${m.index}`} m={m} method={r.stats_method} />)}
        </div>
      )}
    </Page>
  );
}
