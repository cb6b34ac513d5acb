/**
 * GET /api/projects/:id/persons/:id/properties_timeline/ (analytics.md §8.4): where the person's crucial properties
 * changed over its events in the range. Crucial keys are the person-property filter keys and a person breakdown.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { intervalOf, seriesOf } from '../../domain/analytics/legacy-filters.js';
import { leavesOf, parseFilters } from '../../domain/analytics/property-filters.js';
import { propertiesTimeline } from '../../domain/analytics/properties-timeline.js';
import { localIso } from '../../domain/analytics/time-zone.js';
import { personEvents } from '../analytics/person-events.js';
import { queryContext } from '../analytics/query-context.js';
import { json } from '../reply.js';
import { answering, paramsOf } from './insights.js';
import { personFromParam } from './persons/person-view.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';

export const propertiesTimelineOp: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  if (p.has('aggregation_group_type_index')) invalidInput('aggregation_group_type_index', 'Group timelines are not supported yet.');
  const series = seriesOf(p);
  const filters = parseFilters(p.json('properties') ?? null);
  const crucial = new Set<string>();
  for (const leaf of leavesOf(filters)) if (leaf.type === 'person') crucial.add(leaf.key);
  for (const s of series) for (const leaf of leavesOf(s.properties)) if (leaf.type === 'person') crucial.add(leaf.key);
  const breakdown = p.string('breakdown');
  if (breakdown !== null && p.string('breakdown_type') === 'person') crucial.add(breakdown);
  await rt.ingest.appliedEverywhere();
  rt.persons.env.resetReadTxn();
  const person = personFromParam(rt.persons, team, item.params.id);
  const now = item.meta.now;
  const ctx = queryContext(rt, team, now, []);
  const range = resolveDateRange({ dateFrom: p.string('date_from'), dateTo: p.string('date_to'), explicitDate: p.bool('explicit_date') }, intervalOf(p), ctx.timeZone, now, null);
  const names = series.length === 0 || series.some((s) => s.event === null) ? null : series.map((s) => s.event!);
  const events = await personEvents(rt, ctx.scan, person.id, names, range.from, range.to);
  const keys = [...crucial];
  return json(200, {
    points: propertiesTimeline(events, keys),
    crucial_property_keys: keys,
    effective_date_from: localIso(range.from, ctx.timeZone),
    effective_date_to: localIso(range.to, ctx.timeZone),
  });
});
