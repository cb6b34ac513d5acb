/** Paths: the routes persons take between pageviews, screens or events, as a flow; a link lists who took it. */
import { PathsFlow, type PathEdge } from '../components/paths-flow';
import { DateFrom, SaveInsight } from '../components/save-insight';
import { ErrorNote, Field, Page } from '../components/ui';
import { filterQuery } from '../lib/insight-kinds';
import { pathsFilter, pathsStateOf, type PathsState } from '../lib/insight-filters';
import { useInsightPage } from '../lib/use-insight';

const TYPES: [string, string][] = [['$pageview', 'Pageviews'], ['$screen', 'Screens'], ['custom_event', 'Custom events']];

/** The persons who went along one edge: the insight's filters and the edge's keys. */
export const pathPersonsUrl = (projectId: number, filters: Record<string, unknown>) => (source: string, target: string) =>
  `/api/projects/${projectId}/persons/path/?${filterQuery({ ...filters, path_start_key: source, path_end_key: target })}`;

export function PathsPage({ projectId, insightId }: { projectId: number; insightId: number | null }) {
  const { saved, state, set, filters, run } = useInsightPage<PathsState, PathEdge[]>(projectId, insightId, pathsStateOf, pathsFilter);
  return (
    <Page title={saved.data?.name || 'Paths'} testId="paths-page">
      <div class="insight-controls card">
        <div class="row">
          {TYPES.map(([t, label]) => (
            <label class="check" key={t}><input type="checkbox" checked={state.types.includes(t)}
              onChange={(e) => set({ types: e.currentTarget.checked ? [...state.types, t] : state.types.filter((x) => x !== t) })} /> {label}</label>
          ))}
        </div>
        <div class="row">
          <Field label="Starting at"><input aria-label="start point" placeholder="any" value={state.start} onChange={(e) => set({ start: e.currentTarget.value.trim() })} /></Field>
          <Field label="Ending at"><input aria-label="end point" placeholder="any" value={state.end} onChange={(e) => set({ end: e.currentTarget.value.trim() })} /></Field>
          <Field label="Steps"><input type="number" min={2} max={20} aria-label="steps" value={state.steps} onChange={(e) => set({ steps: Number(e.currentTarget.value) || 5 })} /></Field>
          <Field label="Max edges"><input type="number" min={1} max={10000} aria-label="max edges" placeholder="50" value={state.edges ?? ''}
            onChange={(e) => set({ edges: Number(e.currentTarget.value) >= 1 ? Number(e.currentTarget.value) : null })} /></Field>
          <Field label="From"><DateFrom value={state.dateFrom} onChange={(dateFrom) => set({ dateFrom })} /></Field>
        </div>
      </div>
      <ErrorNote error={run.error ?? saved.error} />
      {run.running && <p class="muted">Calculating…</p>}
      {run.result && <StepsNote result={run.result} asked={state.steps} edges={state.edges ?? (state.start && state.end ? null : 50)} />}
      {run.result && <PathsFlow result={run.result} projectId={projectId} personsUrl={pathPersonsUrl(projectId, filters)} />}
      <SaveInsight projectId={projectId} insightId={insightId} initialName={saved.data?.name ?? ''} filters={filters} />
    </Page>
  );
}

/**
 * Why the diagram has fewer steps than asked: the answer keeps only the most frequent transitions (`edges`: 50
 * unless Max edges says otherwise; no limit, null, between a start and an end point) and drops those no first step
 * leads to, so long, rare paths lose their tail first.
 */
function StepsNote({ result, asked, edges }: { result: PathEdge[]; asked: number; edges: number | null }) {
  const reached = Math.max(0, ...result.map((e) => Number(e.target.slice(0, e.target.indexOf('_')))));
  if (result.length === 0 || reached >= asked) return null;
  return (
    <p class="muted small" data-testid="paths-steps-note">
      These paths reach step {reached} of the {asked} asked: {edges === null ? 'no session went further.'
        : `either no session went further, or its steps are not among the ${edges} most frequent transitions kept (raise Max edges).`}
    </p>
  );
}
