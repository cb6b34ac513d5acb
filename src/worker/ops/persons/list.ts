/**
 * GET /persons/ (ingestion-and-api.md §5.2, §4.3): filters `distinct_id`, `email`, `search`, `properties`,
 * `uuid` and `cohort`, newest person first, limit/offset pages (`count` included; PostHog only adds it on
 * request; unfiltered it is a keys-only count), or as CSV in pages of 10,000 rows (PostHog's export cap) from
 * `offset`, each naming the next in a `Link` header.
 *
 * Quill's `orderBy` (the events list's form: `["-created_at"]`, `["created_at"]`, `["person"]`, `["-person"]`, or
 * the bare text) orders by `created_at` or by the display name (src/domain/person-display.ts, case aside), as
 * PostHog's persons table orders its columns; ties newest person first. No index holds either order, so such a
 * page reads every matching person and keeps the first `offset + limit` (offset at most 10,000).
 */
import { Errors } from '../../../protocol/errors.js';
import type { PersonRow } from '../../../stores/persons/person-store.js';
import { pageOf, paginateCounted, urlWith } from '../../pagination.js';
import type { WorkerRuntime } from '../../runtime.js';
import { projectIdOf, type OpHandler } from '../types.js';
import { CohortMembership, personContext } from './cohort-membership.js';
import { answer, viewOf, wantsCsv } from './person-view.js';
import { personPropertyMatcher } from './property-filter.js';
import { settledPersons } from './read-your-writes.js';
import { eachPerson } from '../../person-pages.js';
import { personDisplayName } from '../../../domain/person-display.js';
import { SmallestK } from '../../../domain/smallest-k.js';
import { firstSortedDistinctId } from './person-view.js';

const CSV_MAX_ROWS = 10_000;
/** How deep an ordered list pages (each page reads every person and keeps `offset + limit` of them). */
const MAX_ORDERED_OFFSET = 10_000;

type Order = { by: 'created_at' | 'person'; descending: boolean };

/** `orderBy`: null for the default (newest person first, read in key order). */
function orderOf(raw: string | undefined): Order | null {
  if (raw === undefined || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  const list = typeof parsed === 'string' ? [parsed] : parsed;
  if (Array.isArray(list) && list.length === 0) return null;
  const text = Array.isArray(list) && list.length === 1 && typeof list[0] === 'string' ? list[0] : '';
  const by = text.replace(/^-/, '');
  if (by !== 'created_at' && by !== 'person') {
    throw Errors.validation('orderBy', 'invalid_input', 'orderBy must be one of ["-created_at"], ["created_at"], ["person"], ["-person"].');
  }
  return { by, descending: text.startsWith('-') };
}

interface Ranked {
  key: string;
  row: PersonRow;
}

/** Rows by the order's key, then newest person first. */
function rankedBy(order: Order): { key(row: PersonRow): string; compare(a: Ranked, b: Ranked): number } {
  const sign = order.descending ? -1 : 1;
  return {
    key: order.by === 'created_at'
      ? (row) => row.created_at
      : (row) => {
        const first = firstSortedDistinctId(row.distinct_ids);
        return (personDisplayName(row.properties, first === undefined ? [] : [first]) ?? '').toLowerCase();
      },
    compare: (a, b) => (a.key < b.key ? -sign : a.key > b.key ? sign : b.row.id - a.row.id),
  };
}

type RowTest = (row: PersonRow) => boolean;

/** The filters of the query, each a cheap test on a stored row; parsing errors are 400s before any scan. */
function filtersOf(rt: WorkerRuntime, team: number, query: Record<string, string>): RowTest[] {
  const tests: RowTest[] = [];
  if (query.email !== undefined) {
    const email = query.email;
    tests.push((row) => row.properties.email === email);
  }
  if (query.search !== undefined && query.search !== '') {
    const needle = query.search.toLowerCase();
    tests.push((row) =>
      JSON.stringify(row.properties).toLowerCase().includes(needle) ||
      row.distinct_ids.some((d) => d.toLowerCase().includes(needle)));
  }
  if (query.uuid !== undefined && query.uuid !== '') {
    const uuids = new Set(query.uuid.split(',').map((u) => u.trim().toLowerCase()));
    tests.push((row) => uuids.has(row.uuid));
  }
  const matcher = personPropertyMatcher(query.properties);
  if (matcher !== null) {
    const now = new Date();
    tests.push((row) => matcher(personContext(row, rt.persons.staticCohortIdsOf(team, row.id), now)));
  }
  if (query.cohort !== undefined && query.cohort !== '') {
    if (!/^\d+$/.test(query.cohort)) throw Errors.validation('cohort', 'invalid_input', 'A valid integer is required.');
    const cohortId = Number(query.cohort);
    const membership = new CohortMembership(rt, team);
    tests.push((row) => membership.contains(cohortId, row));
  }
  return tests;
}

/** Candidate rows: one lookup for `distinct_id`, otherwise every person of the project, newest first. */
async function* candidatesOf(rt: WorkerRuntime, team: number, distinctId: string | undefined): AsyncGenerator<PersonRow> {
  if (distinctId === undefined) {
    yield* eachPerson(rt, team);
    return;
  }
  const row = rt.persons.personByDistinctId(team, distinctId);
  if (row) yield row;
}

export const listPersons: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const query = item.meta.query;
  const csv = wantsCsv(item);
  const tests = filtersOf(rt, team, query);
  await settledPersons(rt);

  const page = pageOf(query);
  const order = orderOf(query.orderBy);
  if (order) {
    if (page.offset > MAX_ORDERED_OFFSET) throw Errors.validation('offset', 'invalid_input', `offset must be at most ${MAX_ORDERED_OFFSET} when the list is ordered.`);
    const to = page.offset + (csv ? CSV_MAX_ROWS : page.limit);
    const { key, compare } = rankedBy(order);
    const kept = new SmallestK<Ranked>(to, compare);
    let matched = 0;
    for await (const row of candidatesOf(rt, team, query.distinct_id)) {
      if (!tests.every((test) => test(row))) continue;
      matched++;
      kept.add({ key: key(row), row });
    }
    const rows = kept.result().slice(page.offset, to).map((r) => viewOf(r.row));
    if (csv) {
      const reply = answer(item, 200, rows);
      if (matched > to) reply.headers = { ...reply.headers, Link: `<${urlWith(item.meta, { offset: String(to) })}>; rel="next"` };
      return reply;
    }
    const { count, next, previous, results } = paginateCounted(rows, matched, item.meta, page);
    return answer(item, 200, { next, previous, count, results });
  }
  // Unfiltered pages read only the rows they show; the count comes from a keys-only scan (measured: a page of one
  // person out of 50,000 took 200 ms when every row was decoded to count them). Filtered pages count every match
  // but keep only the page's rows, so memory does not grow with the project.
  // CSV pages are CSV_MAX_ROWS long from `offset`, the next one named by a Link header.
  const unfiltered = !csv && tests.length === 0 && query.distinct_id === undefined;
  const from = page.offset;
  const to = from + (csv ? CSV_MAX_ROWS : page.limit);
  const rows: PersonRow[] = [];
  let matched = 0;
  for await (const row of candidatesOf(rt, team, query.distinct_id)) {
    if (!tests.every((test) => test(row))) continue;
    if (matched >= from && matched < to) rows.push(row);
    matched++;
    if (csv ? matched > to : unfiltered && matched >= to) break;
  }
  if (csv) {
    const reply = answer(item, 200, rows.map(viewOf));
    if (matched > to) reply.headers = { ...reply.headers, Link: `<${urlWith(item.meta, { offset: String(to) })}>; rel="next"` };
    return reply;
  }
  const total = unfiltered ? rt.persons.countOf(team) : matched;
  const { count, next, previous, results } = paginateCounted(rows, total, item.meta, page);
  return answer(item, 200, { next, previous, count, results: results.map(viewOf) });
};
