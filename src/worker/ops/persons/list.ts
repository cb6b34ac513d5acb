/**
 * GET /persons/ (ingestion-and-api.md §5.2, §4.3): filters `distinct_id`, `email`, `search`, `properties`,
 * `uuid` and `cohort`, newest person first, limit/offset pages (`count` included; PostHog only adds it on
 * request; unfiltered it is a keys-only count), or as CSV in pages of 10,000 rows (PostHog's export cap) from
 * `offset`, each naming the next in a `Link` header.
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

const CSV_MAX_ROWS = 10_000;

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
