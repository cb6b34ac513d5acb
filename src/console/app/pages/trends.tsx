/**
 * Trends, lifecycle and stickiness (one endpoint, `/insights/trend/`, three `insight` values): series (event and
 * math), interval, dates, breakdown, display and compare (trends only; a lifecycle takes one event and is drawn as
 * stacked bars); the chart and its values; save under a name. Loaded as its own chunk.
 */
import { useCallback, useState } from 'preact/hooks';
import type { Paginated } from '../api';
import { completeFilters, filterRefs, PropertyFilters } from '../components/property-filters';
import { PropertyInput, PropertyScope } from '../components/property-input';
import { DateFrom, SaveInsight } from '../components/save-insight';
import { InsightAlerts } from '../components/insight-alerts';
import { TrendView } from '../components/trend-view';
import { ErrorNote, Field, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { kindOf } from '../lib/insight-kinds';
import { mathOptions, PROPERTY_MATHS, seriesProblems, trendsFilter, trendsStateOf, type TrendResult, type TrendsInsight, type TrendsState } from '../lib/trends-filters';
import { mustHold, usePropertyDefinitions, type PropertyRef } from '../lib/property-definitions';
import { useInsightPage } from '../lib/use-insight';

/** Every property name the analysis would read: breakdown, math properties, filters. */
function propertyRefs(s: TrendsState): PropertyRef[] {
  const refs = filterRefs(completeFilters(s.properties));
  if (s.insight === 'TRENDS' && s.breakdown) refs.push({ key: s.breakdown, kind: s.breakdownType });
  for (const x of s.series) if (PROPERTY_MATHS.has(x.math) && x.math_property) refs.push({ key: x.math_property, kind: 'event' });
  return refs;
}

export function TrendsPage({ projectId, insightId, insight = 'TRENDS' }: { projectId: number; insightId: number | null; insight?: TrendsInsight }) {
  // A property name no event (or person) carries gives an empty answer silently: the analysis waits until it is
  // fixed or confirmed ("Use anyway").
  const defs = { event: usePropertyDefinitions(projectId, 'event'), person: usePropertyDefinitions(projectId, 'person') };
  const [confirmed, setConfirmed] = useState<ReadonlySet<string>>(new Set());
  const confirm = useCallback((id: string) => setConfirmed((c) => new Set([...c, id])), []);
  const { saved, state, set, run, held } = useInsightPage<TrendsState, TrendResult[]>(projectId, insightId, trendsStateOf,
    (s) => trendsFilter({ ...s, properties: completeFilters(s.properties) }), { insight, ...(insight === 'LIFECYCLE' ? { display: 'ActionsStackedBar' } : {}) },
    (s) => seriesProblems(s).size > 0 || mustHold(propertyRefs(s), defs, confirmed));
  const problems = seriesProblems(state);
  const definitions = useGet<Paginated<{ name: string }>>(`/api/projects/${projectId}/event_definitions/?limit=200`);
  const kind = state.insight;
  const stale = run.running || run.error !== null || held;
  const setSeries = (i: number, patch: Partial<TrendsState['series'][number]>) => set({ series: state.series.map((s, j) => (j === i ? { ...s, ...patch } : s)) });

  return (
    <Page title={saved.data?.name || kindOf(kind)!.title} testId="trends-page">
      <PropertyScope projectId={projectId} confirmed={confirmed} onConfirm={confirm}>
      <datalist id="event-names">{definitions.data?.results.map((d) => <option key={d.name} value={d.name} />)}</datalist>
      <div class="insight-controls card">
        {state.series.map((s, i) => (
          <div class="row series-row" key={i} data-testid="series">
            <span class="series-letter">{String.fromCharCode(65 + i)}</span>
            <input list="event-names" aria-label={`series ${i + 1} event`} value={s.id} onChange={(e) => setSeries(i, { id: e.currentTarget.value.trim() })} />
            {kind !== 'LIFECYCLE' && (
              <select aria-label={`series ${i + 1} math`} value={s.math} onChange={(e) => setSeries(i, { math: e.currentTarget.value })}>
                {mathOptions(kind).map(([m, label]) => <option key={m} value={m}>{label}</option>)}
              </select>
            )}
            {PROPERTY_MATHS.has(s.math) && (
              <PropertyInput kind="event" numeric label={`series ${i + 1} property`} placeholder="numeric property" value={s.math_property ?? ''} onChange={(math_property) => setSeries(i, { math_property })} />
            )}
            {state.series.length > 1 && <button class="ghost" aria-label="remove series" onClick={() => set({ series: state.series.filter((_, j) => j !== i) })}>×</button>}
            {problems.has(i) && <span class="error" data-testid="series-error">{problems.get(i)}</span>}
          </div>
        ))}
        {kind !== 'LIFECYCLE' && <button class="ghost" onClick={() => set({ series: [...state.series, { id: '$pageview', math: 'total' }] })}>+ series</button>}
        <div class="row">
          <Field label="Interval">
            <select aria-label="interval" value={state.interval} onChange={(e) => set({ interval: e.currentTarget.value as TrendsState['interval'] })}>
              {['hour', 'day', 'week', 'month'].map((i) => <option key={i} value={i}>{i}</option>)}
            </select>
          </Field>
          <Field label="From"><DateFrom value={state.dateFrom} onChange={(dateFrom) => set({ dateFrom })} /></Field>
          {kind !== 'LIFECYCLE' && (
            <Field label="Display">
              <select aria-label="display" value={state.display} onChange={(e) => set({ display: e.currentTarget.value as TrendsState['display'] })}>
                <option value="ActionsLineGraph">Line</option>
                <option value="ActionsBar">Bar</option>
                {kind === 'TRENDS' && <option value="ActionsLineGraphCumulative">Cumulative line</option>}
              </select>
            </Field>
          )}
          {kind === 'TRENDS' && (
            <>
              <Field label="Breakdown by" hint={state.breakdownType === 'person' ? 'A person property is read as it was at each event (as PostHog does), so one person can appear under several values.' : undefined}>
                <span class="row tight">
                  <select aria-label="breakdown type" value={state.breakdownType} onChange={(e) => set({ breakdownType: e.currentTarget.value as 'event' | 'person' })}>
                    <option value="event">event property</option>
                    <option value="person">person property</option>
                  </select>
                  <PropertyInput kind={state.breakdownType} label="breakdown" placeholder="property (none)" value={state.breakdown} onChange={(breakdown) => set({ breakdown })} />
                </span>
              </Field>
              <label class="check"><input type="checkbox" checked={state.compare} onChange={(e) => set({ compare: e.currentTarget.checked })} /> Compare to previous period</label>
            </>
          )}
        </div>
        <PropertyFilters value={state.properties} onChange={(properties) => set({ properties })} types={['event', 'person']} />
      </div>
      </PropertyScope>
      {held && problems.size === 0 && defs.event.status !== 'loading' && defs.person.status !== 'loading' && (
        <p class="warning" data-testid="insight-held">Not calculated: a property name above is not one this project has seen. Pick the suggestion, or “Use anyway”.</p>
      )}
      <ErrorNote error={run.error ?? saved.error} />
      {run.running && <p class="muted" data-testid="running">Calculating…</p>}
      {/* A chart of other filters than the form's (being recalculated, refused, or held) is dimmed, not shown as current. */}
      {run.result && (
        <div class={stale ? 'insight-result stale' : 'insight-result'} data-testid="insight-result" data-stale={String(stale)}>
          <TrendView result={run.result} display={state.display} projectId={projectId} />
        </div>
      )}
      <SaveInsight projectId={projectId} insightId={insightId} initialName={saved.data?.name ?? ''} filters={trendsFilter(state)} />
      {insightId !== null && insight === 'TRENDS' && <InsightAlerts projectId={projectId} insightId={insightId} />}
    </Page>
  );
}
