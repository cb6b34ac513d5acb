/**
 * The recordings list's query parameters (PostHog's `GET session_recordings/`, as its RecordingsQuery reads them
 * from the query string) and what they select. Pure: `now` is a parameter.
 *
 * - `date_from` (default `-3d`, PostHog's), `date_to`: bounds on the start of the recording (relative `-7d`, a
 *   date or an ISO date-time, as the events list reads them: src/worker/ops/events/dates.ts);
 * - `person_uuid`: the recordings of that person's distinct ids; `distinct_id` (Quill's): of one distinct id;
 *   `session_ids`: a JSON list;
 * - `having_predicates` (a JSON list of `{key, operator, value}`) or the older `session_recording_duration` (one
 *   such object): `key` one of `duration`, `active_seconds`, `inactive_seconds` and the counts, operator `gt`,
 *   `gte`, `lt`, `lte` or `exact`, value in seconds (or a count);
 * - `order`: `start_time` (default), `end_time`, `duration`, `active_seconds`, `inactive_seconds`, `click_count`,
 *   `keypress_count`, `mouse_activity_count`, `console_log_count`, `console_warn_count`, `console_error_count`;
 *   `order_direction` `DESC` (default) or `ASC`;
 * - `events`: a JSON list of `{id, properties?}` (PostHog's event entities): the session has an event of that
 *   name (`id` null: any) with those properties, for every entity; `properties`: a JSON list or group of property
 *   filters (event, person, cohort) that some event of the session passes. Both are answered from the events that
 *   carry the session's `$session_id` (src/worker/ops/recordings.ts).
 * - `limit` (default 50, at most 1000), `offset`.
 */
import { AnalyticsInputError } from '../analytics/errors.js';
import { durations, type SessionMetadata } from './metadata.js';

const DAY_MS = 86_400_000;
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1_000;

/** The values a predicate or an order can name, read from a session's metadata. */
const MEASURES: Record<string, (m: SessionMetadata) => number> = {
  start_time: (m) => m.startMs,
  end_time: (m) => m.endMs,
  duration: (m) => durations(m).duration,
  recording_duration: (m) => durations(m).duration,
  active_seconds: (m) => durations(m).active,
  inactive_seconds: (m) => durations(m).inactive,
  click_count: (m) => m.clicks,
  keypress_count: (m) => m.keypresses,
  mouse_activity_count: (m) => m.mouseActivity,
  console_log_count: (m) => m.consoleLog,
  console_warn_count: (m) => m.consoleWarn,
  console_error_count: (m) => m.consoleError,
};

const OPERATORS: Record<string, (a: number, b: number) => boolean> = {
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
  exact: (a, b) => a === b,
};

export interface Predicate {
  key: string;
  operator: string;
  value: number;
}

/** An event a selected session must have: its name (null: any) and property filters as sent (JSON). */
export interface SessionEventFilter {
  event: string | null;
  properties: unknown;
}

export interface RecordingsQuery {
  /** Every one must match some event of the session (empty: no such filter). */
  events: SessionEventFilter[];
  fromMs: number;
  toMs: number | null;
  personUuid: string | null;
  distinctId: string | null;
  sessionIds: ReadonlySet<string> | null;
  predicates: Predicate[];
  order: string;
  descending: boolean;
  limit: number;
  offset: number;
}

const refused = (attr: string, detail: string) => new AnalyticsInputError(attr, detail, 'invalid_input');

function jsonOf(attr: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw refused(attr, `${attr} must be JSON.`);
  }
}

function predicateOf(attr: string, v: unknown): Predicate {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw refused(attr, 'A predicate is an object {key, operator, value}.');
  const p = v as Record<string, unknown>;
  const key = typeof p.key === 'string' ? p.key : '';
  if (!(key in MEASURES) || key === 'start_time' || key === 'end_time') throw refused(attr, `Unsupported predicate key: ${String(p.key)}.`);
  const operator = typeof p.operator === 'string' ? p.operator : 'gt';
  if (!(operator in OPERATORS)) throw refused(attr, `Unsupported operator: ${operator}.`);
  const value = typeof p.value === 'string' ? Number(p.value) : p.value;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw refused(attr, 'A predicate value must be a number.');
  return { key, operator, value };
}

function intOf(attr: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw refused(attr, `${attr} must be a non-negative integer.`);
  return Math.min(max, Number(raw));
}

/** Reads a date parameter: epoch ms, or null when it is not a date (the caller's parser, with its own `now`). */
export type DateParser = (raw: string) => number | null;

function dateOf(attr: string, raw: string, parse: DateParser): number {
  const ms = parse(raw);
  if (ms === null) throw refused(attr, `Invalid date: ${raw}`);
  return ms;
}

export function parseRecordingsQuery(q: Readonly<Record<string, string | undefined>>, now: number, parseDate: DateParser): RecordingsQuery {
  const predicates: Predicate[] = [];
  if (q.having_predicates) {
    const list = jsonOf('having_predicates', q.having_predicates);
    if (!Array.isArray(list)) throw refused('having_predicates', 'having_predicates must be a JSON list.');
    for (const p of list) predicates.push(predicateOf('having_predicates', p));
  }
  if (q.session_recording_duration) predicates.push(predicateOf('session_recording_duration', jsonOf('session_recording_duration', q.session_recording_duration)));
  let sessionIds: Set<string> | null = null;
  if (q.session_ids) {
    const list = jsonOf('session_ids', q.session_ids);
    if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) throw refused('session_ids', 'session_ids must be a JSON list of strings.');
    sessionIds = new Set(list as string[]);
  }
  const events: SessionEventFilter[] = [];
  if (q.events) {
    const list = jsonOf('events', q.events);
    if (!Array.isArray(list)) throw refused('events', 'events must be a JSON list of {id, properties}.');
    for (const e of list) {
      const entity = e !== null && typeof e === 'object' && !Array.isArray(e) ? e as Record<string, unknown> : null;
      if (entity === null || (entity.id !== null && entity.id !== undefined && typeof entity.id !== 'string')) throw refused('events', 'An event filter is {id: an event name or null, properties}.');
      events.push({ event: (entity.id as string | null | undefined) ?? null, properties: entity.properties ?? null });
    }
  }
  // Property filters on their own: some event of the session passes them all.
  if (q.properties) events.push({ event: null, properties: jsonOf('properties', q.properties) });
  const order = q.order ?? 'start_time';
  if (!(order in MEASURES)) throw refused('order', `Unsupported order: ${order}.`);
  const direction = (q.order_direction ?? 'DESC').toUpperCase();
  if (direction !== 'ASC' && direction !== 'DESC') throw refused('order_direction', 'order_direction must be ASC or DESC.');
  return {
    events,
    // Explicit session ids are not bounded by the default window (PostHog looks them up wherever they are).
    fromMs: q.date_from ? dateOf('date_from', q.date_from, parseDate) : sessionIds ? -Infinity : now - 3 * DAY_MS,
    toMs: q.date_to ? dateOf('date_to', q.date_to, parseDate) : null,
    personUuid: q.person_uuid || null,
    distinctId: q.distinct_id || null,
    sessionIds,
    predicates,
    order,
    descending: direction === 'DESC',
    limit: Math.max(1, intOf('limit', q.limit, DEFAULT_LIMIT, MAX_LIMIT)),
    offset: intOf('offset', q.offset, 0, Number.MAX_SAFE_INTEGER),
  };
}

/**
 * Whether a session is selected. `distinctIds`: the distinct ids a person filter allows (null: no person filter).
 */
export function selects(q: RecordingsQuery, m: SessionMetadata, distinctIds: ReadonlySet<string> | null): boolean {
  if (m.startMs < q.fromMs) return false;
  if (q.toMs !== null && m.startMs > q.toMs) return false;
  if (q.sessionIds && !q.sessionIds.has(m.sessionId)) return false;
  if (q.distinctId !== null && m.distinctId !== q.distinctId) return false;
  if (distinctIds !== null && !distinctIds.has(m.distinctId)) return false;
  return q.predicates.every((p) => OPERATORS[p.operator]!(MEASURES[p.key]!(m), p.value));
}

/** The list's order: the chosen measure, then the session id, so pages are stable. */
export function comparator(q: RecordingsQuery): (a: SessionMetadata, b: SessionMetadata) => number {
  const measure = MEASURES[q.order]!;
  const sign = q.descending ? -1 : 1;
  return (a, b) => sign * (measure(a) - measure(b)) || (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0);
}
