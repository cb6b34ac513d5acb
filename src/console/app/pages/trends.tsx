/**
 * The trends insight: series (event and math), interval, dates, breakdown, display and compare controls; the
 * chart and its values; save under a name (a saved insight, shown on the dashboard). Loaded as its own chunk.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api, ApiError, type Paginated } from '../api';
import { completeFilters, PropertyFilters } from '../components/property-filters';
import { TrendView } from '../components/trend-view';
import { ErrorNote, Field, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { DEFAULT_TRENDS, MATHS, PROPERTY_MATHS, trendsFilter, trendsStateOf, type TrendResult, type TrendsState } from '../lib/trends-filters';

export function TrendsPage({ projectId, insightId }: { projectId: number; insightId: number | null }) {
  const saved = useGet<{ id: number; name: string; filters: Record<string, unknown> }>(insightId === null ? null : `/api/projects/${projectId}/insights/${insightId}/`);
  const definitions = useGet<Paginated<{ name: string }>>(`/api/projects/${projectId}/event_definitions/?limit=200`);
  const [state, setState] = useState<TrendsState>(() => {
    const fromUrl = new URLSearchParams(location.search).get('filters');
    try {
      return fromUrl ? trendsStateOf(JSON.parse(fromUrl)) : DEFAULT_TRENDS;
    } catch {
      return DEFAULT_TRENDS;
    }
  });
  const [name, setName] = useState('');
  const [result, setResult] = useState<TrendResult[] | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [running, setRunning] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [, navigate] = useLocation();

  useEffect(() => {
    if (!saved.data) return;
    setState(trendsStateOf(saved.data.filters));
    setName(saved.data.name);
  }, [saved.data]);

  const filter = useMemo(() => trendsFilter({ ...state, properties: completeFilters(state.properties) }), [state]);
  const filterKey = JSON.stringify(filter);
  useEffect(() => {
    if (insightId !== null && !saved.data) return;
    const ctl = new AbortController();
    setRunning(true);
    setError(null);
    const timer = setTimeout(() => {
      api.post<{ result: TrendResult[] }>(`/api/projects/${projectId}/insights/trend/`, filter).then(
        (answer) => {
          if (!ctl.signal.aborted) setResult(answer.result);
        },
        (err: Error) => !ctl.signal.aborted && setError(err),
      ).finally(() => !ctl.signal.aborted && setRunning(false));
    }, 150);
    return () => {
      ctl.abort();
      clearTimeout(timer);
    };
  }, [filterKey, projectId, saved.data]);

  const set = (patch: Partial<TrendsState>) => {
    setNote(null);
    setState({ ...state, ...patch });
  };
  const setSeries = (i: number, patch: Partial<TrendsState['series'][number]>) => set({ series: state.series.map((s, j) => (j === i ? { ...s, ...patch } : s)) });

  return (
    <Page title={insightId !== null ? name || 'Saved insight' : 'Trends'} testId="trends-page">
      <datalist id="event-names">{definitions.data?.results.map((d) => <option key={d.name} value={d.name} />)}</datalist>
      <div class="insight-controls card">
        {state.series.map((s, i) => (
          <div class="row series-row" key={i} data-testid="series">
            <span class="series-letter">{String.fromCharCode(65 + i)}</span>
            <input list="event-names" aria-label={`series ${i + 1} event`} value={s.id} onChange={(e) => setSeries(i, { id: e.currentTarget.value.trim() })} />
            <select aria-label={`series ${i + 1} math`} value={s.math} onChange={(e) => setSeries(i, { math: e.currentTarget.value })}>
              {MATHS.map(([m, label]) => <option key={m} value={m}>{label}</option>)}
            </select>
            {PROPERTY_MATHS.has(s.math) && (
              <input aria-label={`series ${i + 1} property`} placeholder="numeric property" value={s.math_property ?? ''} onChange={(e) => setSeries(i, { math_property: e.currentTarget.value.trim() })} />
            )}
            {state.series.length > 1 && <button class="ghost" aria-label="remove series" onClick={() => set({ series: state.series.filter((_, j) => j !== i) })}>×</button>}
          </div>
        ))}
        <button class="ghost" onClick={() => set({ series: [...state.series, { id: '$pageview', math: 'total' }] })}>+ series</button>
        <div class="row">
          <Field label="Interval">
            <select aria-label="interval" value={state.interval} onChange={(e) => set({ interval: e.currentTarget.value as TrendsState['interval'] })}>
              {['hour', 'day', 'week', 'month'].map((i) => <option key={i} value={i}>{i}</option>)}
            </select>
          </Field>
          <Field label="From">
            <select aria-label="date from" value={state.dateFrom} onChange={(e) => set({ dateFrom: e.currentTarget.value })}>
              {[['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'], ['mStart', 'This month'], ['-1y', 'Last year'], ['all', 'All time']]
                .concat([[state.dateFrom, state.dateFrom]]).filter((v, i, a) => a.findIndex((x) => x[0] === v[0]) === i)
                .map(([v, l]) => <option key={v} value={v}>{l}</option>)}
            </select>
          </Field>
          <Field label="Display">
            <select aria-label="display" value={state.display} onChange={(e) => set({ display: e.currentTarget.value as TrendsState['display'] })}>
              <option value="ActionsLineGraph">Line</option>
              <option value="ActionsBar">Bar</option>
              <option value="ActionsLineGraphCumulative">Cumulative line</option>
            </select>
          </Field>
          <Field label="Breakdown by">
            <span class="row tight">
              <select aria-label="breakdown type" value={state.breakdownType} onChange={(e) => set({ breakdownType: e.currentTarget.value as 'event' | 'person' })}>
                <option value="event">event property</option>
                <option value="person">person property</option>
              </select>
              <input aria-label="breakdown" placeholder="property (none)" value={state.breakdown} onChange={(e) => set({ breakdown: e.currentTarget.value.trim() })} />
            </span>
          </Field>
          <label class="check"><input type="checkbox" checked={state.compare} onChange={(e) => set({ compare: e.currentTarget.checked })} /> Compare to previous period</label>
        </div>
        <PropertyFilters value={state.properties} onChange={(properties) => set({ properties })} types={['event', 'person']} />
      </div>
      <ErrorNote error={error ?? saved.error} />
      {running && <p class="muted" data-testid="running">Calculating…</p>}
      {result && <TrendView result={result} display={state.display} projectId={projectId} />}
      <form class="row save-insight" onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          const body = { name, filters: trendsFilter(state) };
          if (insightId !== null) {
            await api.patch(`/api/projects/${projectId}/insights/${insightId}/`, body);
            setNote('Saved.');
          } else {
            const created = await api.post<{ id: number }>(`/api/projects/${projectId}/insights/`, body);
            navigate(`/project/${projectId}/insights/saved/${created.id}`);
          }
        } catch (err) {
          setError(err instanceof ApiError ? err : (err as Error));
        }
      }}>
        <input aria-label="insight name" placeholder="Insight name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" class="primary">{insightId !== null ? 'Save' : 'Save insight'}</button>
        {note && <span class="ok" role="status">{note}</span>}
      </form>
    </Page>
  );
}
