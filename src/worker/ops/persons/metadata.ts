/**
 * Person metadata endpoints (analytics.md §8.1–8.3): property keys with counts, the values of one property, and
 * the cohorts one person belongs to.
 */
import { Errors } from '../../../protocol/errors.js';
import { serializeCohort } from '../cohorts.js';
import { projectIdOf, type OpHandler } from '../types.js';
import { CohortMembership } from './cohort-membership.js';
import { answer, findPerson } from './person-view.js';
import { settledPersons } from './read-your-writes.js';
import { eachPerson } from '../../person-pages.js';

/** PostHog answers the 20 most frequent values. */
const MAX_VALUES = 20;

/** JSON with sorted keys, so equal objects count as one value. */
function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? String(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(', ')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}: ${sortedJson(o[k])}`).join(', ')}}`;
}

/** Every value is answered as a string (PostHog's convert_property_value). */
function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return String(v);
  return sortedJson(v);
}

function byCountThenName(a: { name: string; count: number }, b: { name: string; count: number }): number {
  return b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export const personPropertyKeys: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  await settledPersons(rt);
  const counts = new Map<string, number>();
  for await (const row of eachPerson(rt, team)) {
    for (const key of Object.keys(row.properties)) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const out = [...counts].map(([name, count]) => ({ name, count })).sort(byCountThenName);
  return answer(item, 200, out, 'properties.csv');
};

export const personPropertyValues: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const { key, value } = item.meta.query;
  if (key === undefined || key === '') return answer(item, 200, [], 'values.csv');
  const needle = value?.toLowerCase() ?? '';
  await settledPersons(rt);
  const counts = new Map<string, number>();
  for await (const row of eachPerson(rt, team)) {
    if (!Object.hasOwn(row.properties, key)) continue;
    const raw = row.properties[key];
    if (raw === null || raw === undefined || raw === '') continue;
    const text = valueText(raw);
    if (needle !== '' && !text.toLowerCase().includes(needle)) continue;
    counts.set(text, (counts.get(text) ?? 0) + 1);
  }
  const out = [...counts].map(([name, count]) => ({ name, count })).sort(byCountThenName).slice(0, MAX_VALUES);
  return answer(item, 200, out, 'values.csv');
};

export const cohortsOfPerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const ref = item.meta.query.person_id;
  if (ref === undefined || ref === '') throw Errors.required('person_id');
  await settledPersons(rt);
  const row = findPerson(rt.persons, team, ref);
  if (row === null) throw Errors.validation('person_id', 'invalid_input', 'Expected a person id or uuid.');
  if (row === undefined) throw Errors.notFound('Person not found.');
  const membership = new CohortMembership(rt, team);
  const cohorts = membership.cohortIdsOf(row)
    .map((id) => rt.meta.cohorts.get([team, id]))
    .filter((c) => c !== undefined && !c.deleted);
  const results: Record<string, unknown>[] = [];
  for (const c of cohorts) results.push(await serializeCohort(rt.meta, c!, membership));
  return answer(item, 200, { results }, 'cohorts.csv');
};
