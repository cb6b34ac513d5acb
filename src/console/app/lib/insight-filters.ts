/**
 * The funnel, retention and paths pages' state and PostHog's legacy filters for them, both ways: what a page sends
 * to its analysis endpoint and stores in a saved insight, and reads back (unknown values fall back to defaults).
 */
export interface FunnelState {
  steps: string[];
  dateFrom: string;
  dateTo: string;
  windowDays: number;
  order: 'ordered' | 'strict' | 'unordered';
}

export function funnelFilter(s: FunnelState): Record<string, unknown> {
  return {
    insight: 'FUNNELS', events: s.steps.map((id, order) => ({ id, type: 'events', order })), date_from: s.dateFrom, ...(s.dateTo ? { date_to: s.dateTo } : {}),
    funnel_window_interval: s.windowDays, funnel_window_interval_unit: 'day', funnel_order_type: s.order, funnel_viz_type: 'steps',
  };
}

/**
 * The second step of a new funnel: the project's most frequent event after `$pageview` (`definitions` come by
 * 30-day volume, most first), a custom event before PostHog's own `$` events; none (the user picks) without one.
 */
export function defaultSecondStep(definitions: readonly { name: string }[]): string {
  const others = definitions.map((d) => d.name).filter((n) => n !== '$pageview');
  return others.find((n) => !n.startsWith('$')) ?? others.find((n) => !['$identify', '$set', '$feature_flag_called', '$groupidentify'].includes(n)) ?? '';
}

export function funnelStateOf(f: Record<string, any>): FunnelState {
  const events = Array.isArray(f.events) ? [...f.events].sort((a, b) => (a.order ?? 0) - (b.order ?? 0)).map((e) => String(e.id)) : [];
  return {
    steps: events.length >= 2 ? events : ['$pageview', ''], dateFrom: typeof f.date_from === 'string' ? f.date_from : '-7d',
    dateTo: typeof f.date_to === 'string' ? f.date_to : '', windowDays: Number(f.funnel_window_interval) > 0 ? Number(f.funnel_window_interval) : 14,
    order: ['strict', 'unordered'].includes(f.funnel_order_type) ? f.funnel_order_type : 'ordered',
  };
}

export interface RetentionState {
  target: string;
  returning: string;
  period: 'Hour' | 'Day' | 'Week' | 'Month';
  intervals: number;
  dateTo: string;
  firstTime: boolean;
}

export function retentionFilter(s: RetentionState): Record<string, unknown> {
  return {
    insight: 'RETENTION', target_entity: { id: s.target, type: 'events' }, returning_entity: { id: s.returning, type: 'events' },
    period: s.period, total_intervals: s.intervals, ...(s.dateTo ? { date_to: s.dateTo } : {}),
    retention_type: s.firstTime ? 'retention_first_time' : 'retention_recurring',
  };
}

/** The event of a retention entity: an object, or its JSON text (as query parameters carry it). */
function entityId(entity: unknown): string {
  let e = entity;
  if (typeof e === 'string') {
    try {
      e = JSON.parse(e);
    } catch {
      return '$pageview';
    }
  }
  const id = e && typeof e === 'object' ? (e as { id?: unknown }).id : undefined;
  return id === undefined || id === null ? '$pageview' : String(id);
}

export function retentionStateOf(f: Record<string, any>): RetentionState {
  return {
    // Week unless told otherwise, as PostHog's retention starts.
    target: entityId(f.target_entity), returning: entityId(f.returning_entity), period: ['Hour', 'Day', 'Month'].includes(f.period) ? f.period : 'Week',
    intervals: Number(f.total_intervals) > 0 ? Number(f.total_intervals) : 8, dateTo: typeof f.date_to === 'string' ? f.date_to : '',
    firstTime: f.retention_type === 'retention_first_time',
  };
}

export interface PathsState {
  types: string[];
  start: string;
  end: string;
  steps: number;
  dateFrom: string;
  dateTo: string;
  /** The most frequent transitions kept (`edge_limit`); null: the API's default (50). */
  edges: number | null;
}

export function pathsFilter(s: PathsState): Record<string, unknown> {
  return {
    insight: 'PATHS', include_event_types: s.types, step_limit: s.steps, date_from: s.dateFrom, ...(s.dateTo ? { date_to: s.dateTo } : {}),
    ...(s.start ? { start_point: s.start } : {}), ...(s.end ? { end_point: s.end } : {}), ...(s.edges !== null ? { edge_limit: s.edges } : {}),
  };
}

export function pathsStateOf(f: Record<string, any>): PathsState {
  return {
    types: Array.isArray(f.include_event_types) && f.include_event_types.length ? f.include_event_types : ['$pageview'],
    start: typeof f.start_point === 'string' ? f.start_point : '', end: typeof f.end_point === 'string' ? f.end_point : '',
    steps: Number(f.step_limit) > 1 ? Number(f.step_limit) : 5, dateFrom: typeof f.date_from === 'string' ? f.date_from : '-7d',
    dateTo: typeof f.date_to === 'string' ? f.date_to : '', edges: Number(f.edge_limit) >= 1 ? Number(f.edge_limit) : null,
  };
}
