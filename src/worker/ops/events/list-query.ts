/**
 * The query parameters of GET /events/ (ingestion-and-api.md §5.4), checked and turned into plain data. Every
 * malformed parameter is a 400 naming it in `attr`.
 *
 * Choices where PostHog's behaviour was incidental:
 * - no default time window: PostHog looked at the last 24 hours first and re-ran without a lower bound when that
 *   gave fewer than `limit` rows, which is the same result as no lower bound; nor an upper bound of now + 5 s, so
 *   events ingested with a (tolerated) future timestamp are listed too;
 * - `limit`: default 100 (3 500 for CSV), at most 1 000 (10 000 for CSV; larger values are clamped). The spec-era
 *   maximum was 100 000, which current PostHog lowered to 1 000: 100 000 rows built a 386 MB answer and held the
 *   worker (and every /flags/ request queued on it) for seconds. Clients page with the `next` link (CSV: the
 *   `Link` header). `limit` and `offset` must be non-negative integers (PostHog crashed with a 500 on anything
 *   else); `limit=0` means the default;
 * - `offset` (which the `next` link only uses to step over rows tied on one timestamp) is at most 10 000: every
 *   shard reads offset + limit rows for a page;
 * - the time bounds are exclusive and read in UTC (not the project's time zone).
 */
import type { CohortRecord } from '../../../domain/flags/index.js';
import { Errors } from '../../../protocol/errors.js';
import { parseEventDate } from './dates.js';
import { parsePropertyFilter, type FilterGroup } from './property-filter.js';
import { parseSelect, parseWhere, type Column, type Comparison } from './select.js';

export const DEFAULT_LIMIT = 100;
export const DEFAULT_CSV_LIMIT = 3500;
export const MAX_LIMIT = 1000;
export const MAX_CSV_LIMIT = 10_000;
export const MAX_OFFSET = 10_000;

export interface ListQuery {
  event: string | null;
  distinctId: string | null;
  personId: string | null;
  after: number | null;
  before: number | null;
  ascending: boolean;
  limit: number;
  offset: number;
  csv: boolean;
  filter: FilterGroup | null;
  select: Column[] | null;
  where: Comparison[];
}

/** `format`: json (default) or csv; DRF answers 404 for a format it has no renderer for. */
export function wantsCsv(query: Record<string, string>): boolean {
  const format = query.format;
  if (format === undefined || format === '' || format === 'json') return false;
  if (format === 'csv') return true;
  throw Errors.notFound();
}

function nonNegativeInt(raw: string | undefined, attr: string): number | null {
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(Number(raw))) {
    throw Errors.validation(attr, 'invalid_input', 'A valid integer is required.');
  }
  return Number(raw);
}

function bound(raw: string | undefined, attr: string, now: number): number | null {
  if (raw === undefined || raw === '') return null;
  const ms = parseEventDate(raw, now);
  if (ms === null) {
    throw Errors.validation(attr, 'invalid_input',
      `"${raw}" is not a valid date: use ISO 8601, YYYY-MM-DD or a relative date such as -24h, -7d, -1m.`);
  }
  return ms;
}

/** `orderBy`: a JSON list, `["-timestamp"]` (default, newest first) or `["timestamp"]`. */
function ascendingOf(raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = [raw];
  }
  if (typeof parsed === 'string') parsed = [parsed];
  if (Array.isArray(parsed) && parsed.length === 0) return false;
  if (Array.isArray(parsed) && parsed.length === 1 && (parsed[0] === 'timestamp' || parsed[0] === '-timestamp')) {
    return parsed[0] === 'timestamp';
  }
  throw Errors.validation('orderBy', 'invalid_input', 'orderBy must be ["-timestamp"] or ["timestamp"].');
}

function text(raw: string | undefined): string | null {
  return raw === undefined || raw === '' ? null : raw;
}

export function parseListQuery(query: Record<string, string>, now: number, cohorts: readonly CohortRecord[]): ListQuery {
  const csv = wantsCsv(query);
  // A limit too long to be an exact integer is still "more than the maximum".
  const maxLimit = csv ? MAX_CSV_LIMIT : MAX_LIMIT;
  const hugeLimit = /^0*[1-9]\d{15,}$/.test(query.limit?.trim() ?? '');
  const limitRaw = hugeLimit ? maxLimit : nonNegativeInt(query.limit, 'limit');
  const offset = /^0*[1-9]\d{15,}$/.test(query.offset?.trim() ?? '') ? MAX_OFFSET + 1 : nonNegativeInt(query.offset, 'offset') ?? 0;
  if (offset > MAX_OFFSET) {
    throw Errors.validation('offset', 'invalid_input', `offset must be at most ${MAX_OFFSET}; page with the next link (before/after).`);
  }
  const limit = limitRaw === null || limitRaw === 0 ? (csv ? DEFAULT_CSV_LIMIT : DEFAULT_LIMIT) : Math.min(limitRaw, maxLimit);
  const select = parseSelect(query.select);
  return {
    event: text(query.event),
    distinctId: text(query.distinct_id),
    personId: text(query.person_id),
    after: bound(query.after, 'after', now),
    before: bound(query.before, 'before', now),
    ascending: ascendingOf(query.orderBy),
    limit,
    offset,
    csv,
    filter: parsePropertyFilter(query.properties, cohorts),
    select,
    where: parseWhere(query.where, select),
  };
}
