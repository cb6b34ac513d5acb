/**
 * What every insight page does with its filters: load a saved insight (its name and filters), compute the analysis
 * whenever the filters change (debounced; the newest answer wins), and save under a name.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api } from '../api';
import { runInsight } from './insight-kinds';
import { useGet } from './hooks';

export interface SavedInsight {
  id: number;
  name: string;
  filters: Record<string, any>;
  /** PostHog's query form; a SQL insight has only this (a DataVisualizationNode). */
  query?: unknown;
}

/** The filters in the address (`?filters=`), e.g. from a link or a test; null when absent or unreadable. */
export function filtersFromAddress(): Record<string, any> | null {
  const raw = new URLSearchParams(location.search).get('filters');
  try {
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

export function useSavedInsight(projectId: number, insightId: number | null) {
  return useGet<SavedInsight>(insightId === null ? null : `/api/projects/${projectId}/insights/${insightId}/`);
}

export function useInsightResult<T>(projectId: number, filters: Record<string, unknown>, ready: boolean) {
  const [result, setResult] = useState<T | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [running, setRunning] = useState(false);
  const key = JSON.stringify(filters);
  useEffect(() => {
    if (!ready) {
      setRunning(false);
      return;
    }
    let current = true;
    setRunning(true);
    setError(null);
    const timer = setTimeout(() => {
      runInsight<T>(projectId, filters).then(
        (r) => current && setResult(r),
        (err: Error) => current && setError(err),
      ).finally(() => current && setRunning(false));
    }, 150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [key, projectId, ready]);
  return { result, error, running };
}

/**
 * The state of an insight page: from the saved insight when there is one, else from the address (or `defaults`);
 * its filters (`filterOf`), and their analysis, computed once the saved insight (if any) has loaded and while
 * `holdOf` does not hold it back (a funnel step left to choose, a property name the page's check flagged).
 */
export function useInsightPage<S, R>(
  projectId: number, insightId: number | null, stateOf: (f: Record<string, any>) => S, filterOf: (s: S) => Record<string, unknown>, defaults: Record<string, unknown> = {},
  holdOf: (s: S) => boolean = () => false,
) {
  const saved = useSavedInsight(projectId, insightId);
  const [state, setState] = useState<S>(() => stateOf(filtersFromAddress() ?? defaults));
  useEffect(() => {
    if (saved.data) setState(stateOf(saved.data.filters));
  }, [saved.data]);
  const filters = filterOf(state);
  const held = holdOf(state);
  const run = useInsightResult<R>(projectId, filters, (insightId === null || saved.data !== null) && !held);
  const set = (patch: Partial<S>) => setState({ ...state, ...patch });
  return { saved, state, set, filters, run, held };
}

/** Saves new (onto `dashboards`, then opens the saved insight) or updates the saved one. */
export function useSaveInsight(projectId: number, insightId: number | null) {
  const [, navigate] = useLocation();
  return async (name: string, filters: Record<string, unknown>, dashboards?: number[]): Promise<string> => {
    if (insightId !== null) {
      await api.patch(`/api/projects/${projectId}/insights/${insightId}/`, { name, filters });
      return 'Saved.';
    }
    const created = await api.post<{ id: number }>(`/api/projects/${projectId}/insights/`, { name, filters, ...(dashboards?.length ? { dashboards } : {}) });
    navigate(`/project/${projectId}/insights/saved/${created.id}`);
    return 'Saved.';
  };
}
