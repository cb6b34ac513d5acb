/** Funnels: ordered steps (events), conversion window, order type and dates; steps as bars with rates and times. */
import { useEffect, useRef } from 'preact/hooks';
import type { Paginated } from '../api';
import { FunnelView, type FunnelStep } from '../components/funnel-view';
import { DateFrom, SaveInsight } from '../components/save-insight';
import { ErrorNote, Field, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { defaultSecondStep, funnelFilter, funnelStateOf, type FunnelState } from '../lib/insight-filters';
import { filtersFromAddress, useInsightPage } from '../lib/use-insight';

export function FunnelPage({ projectId, insightId }: { projectId: number; insightId: number | null }) {
  const { saved, state, set, filters, run } = useInsightPage<FunnelState, FunnelStep[]>(projectId, insightId, funnelStateOf, funnelFilter, {},
    (s) => s.steps.some((id) => id === ''));
  // Event definitions come by 30-day volume, most first.
  const definitions = useGet<Paginated<{ name: string }>>(`/api/projects/${projectId}/event_definitions/?limit=200`);
  // A new funnel starts at $pageview, then the project's most frequent other event (or lets the user choose).
  const fresh = useRef(insightId === null && filtersFromAddress() === null);
  useEffect(() => {
    if (!fresh.current || !definitions.data) return;
    fresh.current = false;
    const second = defaultSecondStep(definitions.data.results);
    if (second && state.steps[1] === '') set({ steps: state.steps.map((id, i) => (i === 1 ? second : id)) });
  }, [definitions.data]);
  const unchosen = state.steps.some((id) => id === '');
  return (
    <Page title={saved.data?.name || 'Funnel'} testId="funnel-page">
      <datalist id="event-names">{definitions.data?.results.map((d) => <option key={d.name} value={d.name} />)}</datalist>
      <div class="insight-controls card">
        {state.steps.map((id, i) => (
          <div class="row series-row" key={i}>
            <span class="series-letter">{i + 1}</span>
            <input list="event-names" aria-label={`step ${i + 1} event`} placeholder="choose an event" value={id} onChange={(e) => set({ steps: state.steps.map((x, j) => (j === i ? e.currentTarget.value.trim() : x)) })} />
            {state.steps.length > 2 && <button class="ghost" aria-label="remove step" onClick={() => set({ steps: state.steps.filter((_, j) => j !== i) })}>×</button>}
          </div>
        ))}
        <button class="ghost" onClick={() => set({ steps: [...state.steps, ''] })}>+ step</button>
        <div class="row">
          <Field label="From"><DateFrom value={state.dateFrom} onChange={(dateFrom) => set({ dateFrom })} /></Field>
          <Field label="Conversion window (days)"><input type="number" min={1} max={365} aria-label="window days" value={state.windowDays} onChange={(e) => set({ windowDays: Number(e.currentTarget.value) || 14 })} /></Field>
          <Field label="Step order">
            <select aria-label="step order" value={state.order} onChange={(e) => set({ order: e.currentTarget.value as FunnelState['order'] })}>
              <option value="ordered">Sequential</option>
              <option value="strict">Strict order</option>
              <option value="unordered">Any order</option>
            </select>
          </Field>
        </div>
      </div>
      {unchosen && <p class="muted" data-testid="funnel-choose">Choose an event for every step to see the funnel.</p>}
      <ErrorNote error={run.error ?? saved.error} />
      {run.running && <p class="muted">Calculating…</p>}
      {run.result && <FunnelView result={run.result} projectId={projectId} />}
      <SaveInsight projectId={projectId} insightId={insightId} initialName={saved.data?.name ?? ''} filters={filters} />
    </Page>
  );
}
