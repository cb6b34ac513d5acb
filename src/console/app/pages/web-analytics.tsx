/**
 * Web analytics: the overview numbers with their change from the previous period, visitors and views per day, tables
 * of pages, sources, devices and places (a click on a row filters the whole page by it), goals, outbound clicks and
 * web vitals banded by web.dev's thresholds, for a date range, optionally compared with the period before.
 * Every number comes from `/query/` (PostHog's web analytics kinds); the page keeps its filters in the address.
 * Loaded as its own chunk.
 */
import { useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { TimeSeriesChart } from '../components/time-series-chart';
import { AnnotatePoint } from '../components/annotate-point';
import { ShareButton } from '../components/share-panel';
import { ErrorNote, Page, Tabs } from '../components/ui';
import { SharedViewContext } from '../lib/shared-view';
import { markersFor, type AnnotationItem } from '../lib/annotations';
import { numberText } from '../lib/format';
import { useQueryParam } from '../lib/hooks';
import {
  changeTone, eventFilters, itemText, lastMeasuredDay, LIVE_VISITORS_SQL, rowFilter, SAMPLES, TABLE_GROUPS, valueOnDay, VITALS, vitalBand, vitalsSource, vitalText,
  type OverviewItem, type PageFilter, type TableTab, type Vital,
} from '../lib/web-analytics';

const RANGES: [string, string][] = [['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days']];

/** A query of the page: its answer, loading and error, recomputed when the query's text changes. */
function useQuery<T = any>(projectId: number, query: object | null): { data: T | null; error: Error | null; loading: boolean } {
  const text = query === null ? null : JSON.stringify(query);
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  // On a shared page the same queries go through the link (src/console/app/lib/shared-view.ts).
  const shared = useContext(SharedViewContext);
  useEffect(() => {
    if (text === null) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    const asked = shared ? shared.runQuery<T>(JSON.parse(text)) : api.post<T>(`/api/projects/${projectId}/query/`, { query: JSON.parse(text) });
    asked.then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: Error) => live && setState({ data: null, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [projectId, text]);
  return state;
}

function parseFilters(text: string): PageFilter[] {
  try {
    const v = JSON.parse(text || '[]');
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

export function WebAnalyticsPage({ projectId, title }: { projectId: number; title?: string }) {
  const [range, setRange] = useQueryParam('range');
  const [compareParam, setCompare] = useQueryParam('compare');
  const [filterText, setFilterText] = useQueryParam('filters');
  const dateFrom = range || '-7d';
  const compare = compareParam !== '0';
  const filters = useMemo(() => parseFilters(filterText), [filterText]);
  const setFilters = (next: PageFilter[]) => setFilterText(next.length === 0 ? '' : JSON.stringify(next));
  const addFilter = (f: PageFilter | null) => {
    if (f && !filters.some((g) => g.key === f.key && g.value === f.value)) setFilters([...filters, f]);
  };
  const base = { dateRange: { date_from: dateFrom, date_to: null }, properties: filters, compareFilter: { compare } };
  const shared = useContext(SharedViewContext);
  return (
    <Page title={title ?? 'Web analytics'} testId="web-analytics-page" actions={
      <div class="row">
        {!shared && <ShareButton path={`/api/projects/${projectId}/web_analytics/sharing/`} what="this project's web analytics" />}
        <select aria-label="date range" data-testid="web-range" value={dateFrom} onChange={(e) => setRange(e.currentTarget.value)}>
          {RANGES.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
        </select>
        <label class="check"><input type="checkbox" data-testid="web-compare" checked={compare} onChange={(e) => setCompare(e.currentTarget.checked ? '' : '0')} /> Compare with the previous period</label>
      </div>
    }>
      {filters.length > 0 && (
        <div class="row chips" data-testid="web-filters">
          {filters.map((f, i) => (
            <span class="chip" key={`${f.key}=${f.value}`}>
              {f.key} = {f.value}
              <button class="link" aria-label={`remove filter ${f.key}`} onClick={() => setFilters(filters.filter((_, j) => j !== i))}>×</button>
            </span>
          ))}
        </div>
      )}
      {!shared && <LiveVisitors projectId={projectId} />}
      <Overview projectId={projectId} query={{ kind: 'WebOverviewQuery', ...base }} />
      <VisitorsChart projectId={projectId} dateFrom={dateFrom} filters={filters} />
      <div class="tiles">
        {TABLE_GROUPS.map((g) => <TableGroup key={g.title} projectId={projectId} title={g.title} tabs={g.tabs} base={base} onFilter={addFilter} />)}
        <GoalsTable projectId={projectId} base={base} />
        <ClicksTable projectId={projectId} base={base} />
      </div>
      <WebVitals projectId={projectId} dateFrom={dateFrom} filters={filters} />
    </Page>
  );
}

/** How often the live count is asked again. */
const LIVE_REFRESH_MS = 30_000;

/**
 * Visitors of the last 30 minutes (persons with a pageview), asked again every 30 s: HogQL over the events, so not on
 * a shared page, whose link runs only the page's own queries.
 */
function LiveVisitors({ projectId }: { projectId: number }) {
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    const ask = () => api.post<{ results: number[][] }>(`/api/projects/${projectId}/query/`, { query: { kind: 'HogQLQuery', query: LIVE_VISITORS_SQL }, refresh: 'force_blocking' })
      .then((r) => live && setCount(Number(r.results[0]?.[0] ?? 0)), () => undefined);
    void ask();
    const timer = setInterval(ask, LIVE_REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [projectId]);
  return (
    <p class="live-visitors" data-testid="web-live" data-value={count ?? ''}>
      <span class="badge live">live</span> {count === null ? '…' : numberText(count)} {count === 1 ? 'visitor' : 'visitors'} in the last 30 minutes
    </p>
  );
}

function Overview({ projectId, query }: { projectId: number; query: object }) {
  const { data, error } = useQuery<{ results: OverviewItem[] }>(projectId, query);
  return (
    <section class="overview" data-testid="web-overview">
      <ErrorNote error={error} />
      {data?.results.map((item) => {
        const tone = changeTone(item);
        return (
          <div class="card stat" key={item.key} data-key={item.key} data-value={item.value ?? ''} data-previous={item.previous ?? ''}>
            <div class="stat-label">{item.key}</div>
            <div class="stat-value">{itemText(item.kind, item.value)}</div>
            {item.previous !== null && (
              <div class={`stat-change ${tone}`} title={`previous period: ${itemText(item.kind, item.previous)}`}>
                {item.changeFromPreviousPct === null ? 'no change to show' : `${item.changeFromPreviousPct > 0 ? '↑' : item.changeFromPreviousPct < 0 ? '↓' : ''} ${Math.abs(item.changeFromPreviousPct)}%`}
                <span class="muted"> vs {itemText(item.kind, item.previous)}</span>
              </div>
            )}
          </div>
        );
      })}
    </section>
  );
}

function VisitorsChart({ projectId, dateFrom, filters }: { projectId: number; dateFrom: string; filters: PageFilter[] }) {
  const query = {
    kind: 'TrendsQuery', dateRange: { date_from: dateFrom }, interval: dateFrom === '-24h' ? 'hour' : 'day', properties: eventFilters(filters),
    series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', custom_name: 'Visitors' }, { kind: 'EventsNode', event: '$pageview', math: 'total', custom_name: 'Views' }],
  };
  const { data, error } = useQuery<{ timezone?: string; results: { label: string; labels: string[]; days: string[]; data: number[]; action?: { custom_name?: string } }[] }>(projectId, query);
  const [annotations, setAnnotations] = useState<AnnotationItem[]>([]);
  const shared = useContext(SharedViewContext);
  // A click on a point offers to annotate its day (not on a shared page).
  const [clicked, setClicked] = useState<number | null>(null);
  const [annotationsAsked, setAnnotationsAsked] = useState(0);
  useEffect(() => {
    if (shared) return;
    api.get<{ results: AnnotationItem[] }>(`/api/projects/${projectId}/annotations/?limit=1000`).then((r) => setAnnotations(r.results), () => setAnnotations([]));
  }, [projectId, annotationsAsked]);
  const series = data?.results ?? [];
  const timeZone = data?.timezone ?? 'UTC';
  const markers = series.length === 0 ? [] : markersFor(annotations, series[0]!.days, timeZone);
  const clickedDay = clicked === null ? undefined : series[0]?.days[clicked];
  return (
    <article class="card" data-testid="web-visitors-chart">
      <h3>Visitors and views</h3>
      <ErrorNote error={error} />
      {series.length > 0 && (
        <TimeSeriesChart testId="web-visitors" labels={series[0]!.labels} display="line" height={220} markers={markers}
          onPointClick={shared ? undefined : (_s, i) => setClicked(i)}
          series={series.map((s) => ({ label: s.action?.custom_name ?? s.label, data: s.data }))} />
      )}
      {clickedDay && <AnnotatePoint projectId={projectId} day={clickedDay} timeZone={timeZone} onAdded={() => setAnnotationsAsked((n) => n + 1)} />}
    </article>
  );
}

/** A cell of a `[current, previous]` pair: the current value, the previous one as a hint. */
function pairCell(key: string, pair: unknown, format: (v: number) => string) {
  const [cur, prev] = Array.isArray(pair) ? (pair as (number | null)[]) : [pair as number | null, null];
  return <td key={key} data-column={key} data-value={cur ?? ''} title={prev === null || prev === undefined ? undefined : `previous period: ${format(prev)}`}>{cur === null || cur === undefined ? '–' : format(cur)}</td>;
}

const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
const COLUMN_LABELS: Record<string, [string, (v: number) => string]> = {
  'context.columns.visitors': ['Visitors', numberText],
  'context.columns.views': ['Views', numberText],
  'context.columns.bounce_rate': ['Bounce rate', percent],
  'context.columns.clicks': ['Clicks', numberText],
  'context.columns.converting_users': ['Converting users', numberText],
  'context.columns.total_conversions': ['Conversions', numberText],
  'context.columns.conversion_rate': ['Conversion rate', percent],
};

interface TableAnswer {
  columns: string[];
  results: unknown[][];
}

function Table({ answer, testId, onRow }: { answer: TableAnswer; testId: string; onRow?(value: unknown): void }) {
  const shown = answer.columns.map((c, i) => [c, i] as const).filter(([c]) => COLUMN_LABELS[c]);
  if (answer.results.length === 0) return <p class="muted">Nothing in this period.</p>;
  return (
    <table class="list" data-testid={testId}>
      <thead><tr><th>{testId === 'web-clicks' ? 'URL' : testId === 'web-goals' ? 'Goal' : 'Value'}</th>{shown.map(([c]) => <th key={c}>{COLUMN_LABELS[c]![0]}</th>)}</tr></thead>
      <tbody>
        {answer.results.map((row, r) => (
          <tr key={r} class={onRow ? 'clickable' : ''} onClick={onRow ? () => onRow(row[0]) : undefined} data-row={JSON.stringify(row[0])}>
            <td>{row[0] === null ? <span class="muted">(none)</span> : Array.isArray(row[0]) ? (row[0] as unknown[]).join(', ') : String(row[0])}</td>
            {shown.map(([c, i]) => pairCell(c, row[i], COLUMN_LABELS[c]![1]))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TableGroup(props: { projectId: number; title: string; tabs: TableTab[]; base: object; onFilter(f: ReturnType<typeof rowFilter>): void }) {
  const [label, setLabel] = useState(props.tabs[0]!.label);
  const tab = props.tabs.find((t) => t.label === label) ?? props.tabs[0]!;
  const { data, error, loading } = useQuery<TableAnswer>(props.projectId, { kind: 'WebStatsTableQuery', breakdownBy: tab.breakdown, limit: 10, ...tab.extra, ...props.base });
  return (
    <article class="card tile" data-testid={`web-table-${props.title.toLowerCase().split(' ')[0]}`} data-breakdown={tab.breakdown} data-loading={loading ? '1' : '0'}>
      <h3>{props.title}</h3>
      <Tabs tabs={props.tabs.map((t) => t.label)} value={tab.label} onChange={setLabel} />
      <ErrorNote error={error} />
      {data && <Table answer={data} testId={`web-table-${tab.breakdown}`} onRow={tab.filter ? (v) => props.onFilter(rowFilter(tab, v)) : undefined} />}
    </article>
  );
}

function GoalsTable({ projectId, base }: { projectId: number; base: object }) {
  const { data, error } = useQuery<TableAnswer>(projectId, { kind: 'WebGoalsQuery', ...base });
  return (
    <article class="card tile"><h3>Goals</h3>
      <ErrorNote error={error} />
      {data && (data.results.length === 0 ? <p class="muted">Goals are the project's actions: create one to see its conversions here.</p> : <Table answer={data} testId="web-goals" />)}
    </article>
  );
}

function ClicksTable({ projectId, base }: { projectId: number; base: object }) {
  const { data, error } = useQuery<TableAnswer>(projectId, { kind: 'WebExternalClicksTableQuery', stripQueryParams: true, limit: 10, ...base });
  return (
    <article class="card tile"><h3>Outbound clicks</h3>
      <ErrorNote error={error} />
      {data && <Table answer={data} testId="web-clicks" />}
    </article>
  );
}

function WebVitals({ projectId, dateFrom, filters }: { projectId: number; dateFrom: string; filters: PageFilter[] }) {
  const [percentile, setPercentile] = useState<'p75' | 'p90' | 'p99'>('p75');
  const dateRange = { date_from: dateFrom };
  const { data, error } = useQuery<{ results: { data: (number | null)[]; labels?: string[]; days: string[]; action: { custom_name: Vital } }[] }>(projectId, {
    kind: 'WebVitalsQuery', properties: [], dateRange, source: vitalsSource(percentile, dateRange, filters),
  });
  const all = data?.results ?? [];
  const results = all.filter((r) => (r.action.custom_name as string) !== SAMPLES);
  // The cards show the latest day that has samples (the chart shows every day).
  const day = lastMeasuredDay(all.find((r) => (r.action.custom_name as string) === SAMPLES)?.data ?? []);
  return (
    <article class="card" data-testid="web-vitals">
      <div class="row"><h3>Web vitals</h3>
        <select aria-label="percentile" value={percentile} onChange={(e) => setPercentile(e.currentTarget.value as typeof percentile)}>
          {(['p75', 'p90', 'p99'] as const).map((p) => <option key={p} value={p}>{p.toUpperCase()}</option>)}
        </select>
      </div>
      <ErrorNote error={error} />
      <div class="overview">
        {VITALS.map((m) => {
          const r = results.find((x) => x.action.custom_name === m);
          const v = r ? valueOnDay(r.data, day) : null;
          const band = v === null ? 'none' : vitalBand(m, v);
          return (
            <div class={`card stat vital ${band}`} key={m} data-metric={m} data-value={v ?? ''} data-band={band}>
              <div class="stat-label">{m}</div>
              <div class="stat-value">{vitalText(m, v)}</div>
              <div class="muted">{band === 'none' ? 'no measurements' : `${band.replace('_', ' ').replace('improvements', 'improvement')}${results[0]?.days[day] ? ` · ${results[0].days[day]}` : ''}`}</div>
            </div>
          );
        })}
      </div>
      {day >= 0 && (
        <TimeSeriesChart testId="web-vitals-chart" labels={results[0]!.labels ?? results[0]!.days} display="line" height={200}
          series={results.map((r) => ({ label: r.action.custom_name, data: r.data }))} />
      )}
    </article>
  );
}
