/**
 * The insight kinds the console knows, and how each is computed: which endpoint answers its legacy `filters`
 * (PostHog's `filters.insight` names the kind) and how. A saved insight opens on its kind's page; a dashboard tile
 * draws its kind's view.
 */
import { api } from '../api';

export interface InsightKind {
  kind: string;
  /** PostHog's `filters.insight` value. */
  insight: string;
  title: string;
  description: string;
  /** The analysis endpoint under /api/projects/:id/. */
  endpoint: string;
  available: boolean;
}

export const INSIGHT_KINDS: InsightKind[] = [
  { kind: 'trends', insight: 'TRENDS', title: 'Trends', description: 'Events or users over time, as lines or bars, with breakdowns.', endpoint: 'insights/trend/', available: true },
  { kind: 'funnels', insight: 'FUNNELS', title: 'Funnels', description: 'Step-by-step conversion, with conversion rates and times.', endpoint: 'insights/funnel/', available: true },
  { kind: 'retention', insight: 'RETENTION', title: 'Retention', description: 'How many come back, as a cohort grid.', endpoint: 'insights/retention/', available: true },
  { kind: 'lifecycle', insight: 'LIFECYCLE', title: 'Lifecycle', description: 'New, returning, resurrecting and dormant users, as stacked bars.', endpoint: 'insights/trend/?insight=LIFECYCLE', available: true },
  { kind: 'stickiness', insight: 'STICKINESS', title: 'Stickiness', description: 'On how many days of a period users come back.', endpoint: 'insights/trend/?insight=STICKINESS', available: true },
  { kind: 'paths', insight: 'PATHS', title: 'Paths', description: 'The routes users take, as a flow diagram.', endpoint: 'insights/path/', available: true },
];

export const kindOf = (insight: unknown): InsightKind | undefined => INSIGHT_KINDS.find((k) => k.insight === (insight ?? 'TRENDS'));

/** Legacy filters as query parameters (objects and arrays as JSON), for the analyses served by GET only. */
export function filterQuery(filters: Record<string, unknown>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) {
    if (v === undefined || v === null || v === '') continue;
    u.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return u.toString();
}

/** Runs an insight's analysis: its `result`. */
export async function runInsight<T = any>(projectId: number, filters: Record<string, unknown>): Promise<T> {
  const base = `/api/projects/${projectId}`;
  switch (filters.insight) {
    case 'FUNNELS':
      return (await api.post<{ result: T }>(`${base}/insights/funnel/`, filters)).result;
    case 'PATHS':
      return (await api.post<{ result: T }>(`${base}/insights/path/`, filters)).result;
    case 'RETENTION':
      return (await api.get<{ result: T }>(`${base}/insights/retention/?${filterQuery(filters)}`)).result;
    default:
      return (await api.post<{ result: T }>(`${base}/insights/trend/`, filters)).result;
  }
}
