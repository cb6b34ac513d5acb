/**
 * `EventsQuery`: PostHog's table of events (its schema's `EventsQuery`), turned into a HogQL SELECT over events as
 * PostHog's runner does and answered by the HogQL engine (src/worker/query/hogql-kind.ts):
 *   - `select`: HogQL expressions (`-- label` comments allowed), `*` for the whole event (returned as an object),
 *     `person` for the event's current person (an object), `person_display_name`; with an aggregate among them,
 *     the others become the GROUP BY;
 *   - `where` (HogQL conditions; those with an aggregate become HAVING), `properties` and `fixedProperties`
 *     (property filters), `event`/`events`, `personId` (the person's distinct ids), `filterTestAccounts`;
 *   - `after` (default the last 24 hours, `all` for no bound) and `before` (default now + 5 s), ISO or relative;
 *   - `orderBy` (HogQL order expressions), by default `count()` or the first aggregate descending, else
 *     `timestamp DESC` when selected, else the first column;
 *   - `limit` (default 100, at most 50,000) and `offset`, with `hasMore`.
 * Events keep no ingestion time: `*` objects carry `created_at` as null.
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { DateParseError, parseDate } from '../../domain/analytics/date-range.js';
import { parseFilters } from '../../domain/analytics/property-filters.js';
import { andOf, call, callOf, constant, field, type Expr, type OrderItem, type Select } from '../../domain/hogql/ast.js';
import { parseExpression } from '../../domain/hogql/parser.js';
import { printQuery } from '../../domain/hogql/print.js';
import { typeName } from '../../domain/hogql/values.js';
import { parseElementsChain } from '../../domain/ingest/elements-chain.js';
import { queryContext } from '../analytics/query-context.js';
import type { WorkerRuntime } from '../runtime.js';
import { runQueryAst } from './hogql-kind.js';
import { expressionTexts, hasAggregate, pageOf, tableOrder, unaliased } from './table-query.js';
import { registerQueryKind, type QueryContext } from './runners.js';

const STAR_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'team_id', 'distinct_id', 'elements_chain'];
const DISPLAY_NAME_PROPERTIES = ['email', 'name', 'username'];

/** `after`/`before`: an ISO date-time or a relative date, as an instant's ISO text. */
function instant(text: unknown, attr: string, ctx: QueryContext, timeZone: string): string {
  if (typeof text !== 'string') return invalidInput(attr, `${attr} must be a date.`);
  try {
    return new Date(parseDate(text, ctx.now, timeZone).ms).toISOString();
  } catch (error) {
    if (error instanceof DateParseError) return invalidInput(attr, `Invalid date: ${text}`);
    throw error;
  }
}

type Item = { raw: string; kind: 'star' | 'person' | 'display' | 'expr'; at: number; width: number; aliased: boolean };

async function runEventsQuery(rt: WorkerRuntime, q: Record<string, unknown>, ctx: QueryContext): Promise<Record<string, unknown>> {
  if (q.source !== undefined && q.source !== null) invalidInput('source', 'EventsQuery with a source (the events behind an insight) is not supported yet.');
  if (q.actionId !== undefined && q.actionId !== null) invalidInput('actionId', 'Actions are not supported yet.');
  const project = queryContext(rt, ctx.team, ctx.now, []);
  const selectRaw = expressionTexts(q.select, 'select');
  const raws = selectRaw.length === 0 ? ['*'] : selectRaw;
  const items: Item[] = [];
  const columns: Expr[] = [];
  for (const raw of raws) {
    const base = raw.split('--')[0]!.trim();
    const at = columns.length;
    if (base === '*') {
      columns.push(...STAR_FIELDS.map((f) => field(f)));
      items.push({ raw, kind: 'star', at, width: STAR_FIELDS.length, aliased: false });
    } else if (base === 'person') {
      columns.push(field('distinct_id'));
      items.push({ raw, kind: 'person', at, width: 1, aliased: false });
    } else if (base === 'person_display_name') {
      columns.push(call('coalesce', ...DISPLAY_NAME_PROPERTIES.map((p) => field('person', 'properties', p)), field('distinct_id')), call('toString', field('person', 'id')), field('distinct_id'));
      items.push({ raw, kind: 'display', at, width: 3, aliased: false });
    } else {
      const e = parseExpression(raw);
      columns.push(e);
      items.push({ raw, kind: 'expr', at, width: 1, aliased: e.k === 'alias' });
    }
  }
  const plain = unaliased;
  const aggregated = columns.some((c) => hasAggregate(plain(c)));

  const conditions: Expr[] = expressionTexts(q.where, 'where').map((w) => parseExpression(w));
  for (const [attr, raw] of [['properties', q.properties], ['fixedProperties', q.fixedProperties]] as const) {
    const tree = parseFilters(raw ?? null, attr);
    if (tree) conditions.push({ k: 'filter', node: tree });
  }
  const names = [q.event, ...(Array.isArray(q.events) ? q.events : [])].filter((e): e is string => typeof e === 'string' && e !== '');
  if (names.length === 1) conditions.push(call('equals', field('event'), constant(names[0]!)));
  if (names.length > 1) conditions.push(call('in', field('event'), callOf('tuple', names.map(constant))));
  if (q.personId !== undefined && q.personId !== null) {
    rt.persons.env.resetReadTxn();
    const id = String(q.personId);
    const person = rt.persons.personByUuid(ctx.team, id) ?? (/^\d+$/.test(id) ? rt.persons.person(ctx.team, Number(id)) : undefined);
    // A personless actor (no person row; src/domain/ingest/personless.ts) is found by its uuid, as PostHog finds it.
    const actor = person === undefined && rt.persons.idOfUuid(ctx.team, id) !== undefined;
    conditions.push(person ? call('in', field('distinct_id'), callOf('tuple', person.distinct_ids.map(constant)))
      : actor ? call('equals', field('person_id'), constant(id)) : constant(false));
  }
  if (q.filterTestAccounts === true && project.testAccountFilters) conditions.push({ k: 'filter', node: project.testAccountFilters });
  const before = q.before === undefined || q.before === null ? new Date(ctx.now + 5000).toISOString() : instant(q.before, 'before', ctx, project.timeZone);
  conditions.push(call('less', field('timestamp'), constant(before)));
  const after = q.after ?? '-24h';
  if (after !== 'all') conditions.push(call('greater', field('timestamp'), constant(instant(after, 'after', ctx, project.timeZone))));

  // PostHog orders by the first column; for `*` that is the event's time-ordered uuid, which Quill's layout has not.
  const orderBy: OrderItem[] = expressionTexts(q.orderBy, 'orderBy').length === 0 && items[0]!.kind === 'star' && !aggregated && !raws.includes('timestamp')
    ? [{ expr: field('timestamp'), desc: false }]
    : tableOrder(expressionTexts(q.orderBy, 'orderBy'), raws, columns, 'timestamp');
  const { limit: page, offset } = pageOf(q);
  const select: Select = {
    k: 'select', ctes: [], distinct: false, columns, from: { table: 'events' }, joins: [],
    where: andOf(conditions.filter((c) => !hasAggregate(c))),
    groupBy: aggregated ? columns.filter((c) => !hasAggregate(plain(c))).map(plain) : [],
    having: andOf(conditions.filter(hasAggregate)),
    orderBy, limit: constant(page + 1), offset: offset > 0 ? constant(offset) : null,
  };
  const ran = await runQueryAst(rt, select, ctx, { filters: null, values: {} });
  const rows = ran.rows.slice(0, page);
  rt.persons.env.resetReadTxn();
  const results = rows.map((row) => items.map((item) => {
    const cells = row.slice(item.at, item.at + item.width);
    switch (item.kind) {
      case 'star': {
        const e = Object.fromEntries(STAR_FIELDS.map((f, i) => [f, cells[i]]));
        const chain = String(e.elements_chain ?? '');
        return {
          ...e, properties: typeof e.properties === 'string' ? JSON.parse(e.properties) : e.properties, created_at: null,
          ...(chain ? { elements: parseElementsChain(chain) } : {}),
        };
      }
      case 'person': {
        const distinctId = String(cells[0]);
        const person = rt.persons.personByDistinctId(ctx.team, distinctId);
        return person ? { uuid: person.uuid, created_at: person.created_at, properties: person.properties, distinct_id: distinctId } : { distinct_id: distinctId };
      }
      case 'display':
        return { display_name: cells[0], id: cells[1], distinct_id: cells[2] };
      default:
        return cells[0];
    }
  }));
  return {
    results,
    columns: items.map((item) => (item.aliased ? ran.columns[item.at]!.name : item.raw)),
    types: items.map((item) => (item.kind === 'expr' ? typeName(ran.columns[item.at]!.type, ran.timeZone) : item.kind === 'star' ? 'Tuple' : 'String')),
    hogql: printQuery(select),
    hasMore: ran.rows.length > page,
    limit: page,
    offset,
    timings: ran.timings,
    modifiers: {},
  };
}

registerQueryKind('EventsQuery', (rt, query, ctx) => runEventsQuery(rt, query, ctx));

