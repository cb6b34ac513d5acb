/** Retention: who did the start event, and which share came back (the return event) in each later period. */
import type { Paginated } from '../api';
import { RetentionGrid, type RetentionRow } from '../components/retention-grid';
import { SaveInsight } from '../components/save-insight';
import { ErrorNote, Field, Page } from '../components/ui';
import { useGet } from '../lib/hooks';
import { retentionFilter, retentionStateOf, type RetentionState } from '../lib/insight-filters';
import { useInsightPage } from '../lib/use-insight';

export function RetentionPage({ projectId, insightId }: { projectId: number; insightId: number | null }) {
  const { saved, state, set, filters, run } = useInsightPage<RetentionState, RetentionRow[]>(projectId, insightId, retentionStateOf, retentionFilter);
  const definitions = useGet<Paginated<{ name: string }>>(`/api/projects/${projectId}/event_definitions/?limit=200`);
  return (
    <Page title={saved.data?.name || 'Retention'} testId="retention-page">
      <datalist id="event-names">{definitions.data?.results.map((d) => <option key={d.name} value={d.name} />)}</datalist>
      <div class="insight-controls card">
        <div class="row">
          <Field label="Start event"><input list="event-names" aria-label="start event" value={state.target} onChange={(e) => set({ target: e.currentTarget.value.trim() })} /></Field>
          <Field label="Return event"><input list="event-names" aria-label="return event" value={state.returning} onChange={(e) => set({ returning: e.currentTarget.value.trim() })} /></Field>
          <Field label="Period">
            <select aria-label="period" value={state.period} onChange={(e) => set({ period: e.currentTarget.value as RetentionState['period'] })}>
              {['Hour', 'Day', 'Week', 'Month'].map((p) => <option key={p} value={p}>{p}</option>)}
            </select>
          </Field>
          <Field label="Periods"><input type="number" min={2} max={60} aria-label="periods" value={state.intervals} onChange={(e) => set({ intervals: Number(e.currentTarget.value) || 8 })} /></Field>
          <Field label="Up to (date)"><input type="date" aria-label="date to" value={state.dateTo} onChange={(e) => set({ dateTo: e.currentTarget.value })} /></Field>
          <label class="check"><input type="checkbox" checked={state.firstTime} onChange={(e) => set({ firstTime: e.currentTarget.checked })} /> First time only</label>
        </div>
      </div>
      <ErrorNote error={run.error ?? saved.error} />
      {run.running && <p class="muted">Calculating…</p>}
      {run.result && <RetentionGrid result={run.result} projectId={projectId} />}
      <SaveInsight projectId={projectId} insightId={insightId} initialName={saved.data?.name ?? ''} filters={filters} />
    </Page>
  );
}
