/**
 * DRF LimitOffsetPagination as PostHog uses it (ingestion-and-api.md §4.3): default limit 100, invalid values fall
 * back to defaults, and `next`/`previous` are absolute URLs of the same request with `limit` and `offset` set
 * (other parameters kept as they were).
 *
 * One difference: PostHog set no maximum `limit`; here it is 1,000 (PostHog's own persons list capped at 1,000
 * too), larger values are clamped and the client follows `next`. An unbounded limit let one request build an
 * answer of any size on a worker that also serves /flags/.
 */
import type { RequestMeta } from '../protocol/worker-messages.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface Page {
  limit: number;
  offset: number;
}

export interface Paginated<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

function positiveInt(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : null;
}

export function pageOf(query: Record<string, string>, defaultLimit = DEFAULT_LIMIT): Page {
  const limit = positiveInt(query.limit);
  const offset = positiveInt(query.offset);
  return { limit: limit && limit > 0 ? Math.min(limit, MAX_LIMIT) : defaultLimit, offset: offset ?? 0 };
}

/** The request's absolute URL with some parameters replaced (value) or removed (null); order is kept. */
export function urlWith(meta: RequestMeta, changes: Record<string, string | null>): string {
  const pairs: [string, string][] = [];
  const seen = new Set<string>();
  for (const part of meta.rawQuery.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
    } catch {
      key = rawKey;
    }
    if (key in changes) {
      if (seen.has(key)) continue;
      seen.add(key);
      const value = changes[key];
      if (value !== null && value !== undefined) pairs.push([rawKey, encodeURIComponent(value)]);
      continue;
    }
    pairs.push([rawKey, eq < 0 ? '' : part.slice(eq + 1)]);
  }
  for (const [key, value] of Object.entries(changes)) {
    if (!seen.has(key) && value !== null) pairs.push([encodeURIComponent(key), encodeURIComponent(value)]);
  }
  const query = pairs.map(([k, v]) => `${k}=${v}`).join('&');
  return query ? `${meta.url}?${query}` : meta.url;
}

export function paginate<T>(all: readonly T[], meta: RequestMeta, page: Page = pageOf(meta.query)): Paginated<T> {
  return paginateCounted(all.slice(page.offset, page.offset + page.limit), all.length, meta, page);
}

/** For callers that fetched only one page themselves and know the total. */
export function paginateCounted<T>(results: T[], count: number, meta: RequestMeta, page: Page): Paginated<T> {
  const { limit, offset } = page;
  const next = offset + limit < count ? urlWith(meta, { limit: String(limit), offset: String(offset + limit) }) : null;
  let previous: string | null = null;
  if (offset > 0) {
    previous = offset - limit <= 0
      ? urlWith(meta, { limit: String(limit), offset: null })
      : urlWith(meta, { limit: String(limit), offset: String(offset - limit) });
  }
  return { count, next, previous, results };
}
