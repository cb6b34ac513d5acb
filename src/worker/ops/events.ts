/**
 * The stored-events API (ingestion-and-api.md §5.4–5.7): list with filters and a timestamp cursor, retrieve by
 * uuid, and property values. Reads are map-reduce over every shard (src/worker/ops/events/scatter.ts) after
 * waiting until every acknowledged event is applied, so a client sees what it just sent.
 *
 * `select` / `where`: a small subset is implemented (plain columns and simple comparisons, see events/select.ts);
 * anything outside it is a 400, never silently ignored.
 */
import { toCsv } from '../../domain/csv.js';
import { isUuid } from '../../domain/ingest/index.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import { urlWith } from '../pagination.js';
import { csv, json, jsonText } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { parseListQuery, wantsCsv, type ListQuery } from './events/list-query.js';
import { usesCohorts } from './events/property-filter.js';
import { getEverywhere, scanEverywhere, valuesEverywhere } from './events/scatter.js';
import { columnValue, typeOf, type Column } from './events/select.js';
import { parseProperties, PersonResolver, serializeEvent, serializeEventJson, type EventRow } from './events/serialize.js';
import { projectIdOf, type OpHandler } from './types.js';

const DAY_MS = 86_400_000;
/** `/events/values/` looks at recent events only (PostHog: the last 7 days) and answers at most 10 values. */
const VALUES_WINDOW_MS = 7 * DAY_MS;
const VALUES_LIMIT = 10;
const VALUES_MAX_SCAN = 200_000;

/** Reads after writes: acknowledged events applied everywhere, and this thread's persons snapshot renewed. */
async function settled(rt: WorkerRuntime): Promise<void> {
  await rt.ingest.appliedEverywhere();
  rt.persons.env.resetReadTxn();
}

function answer(item: TaskItem, value: unknown, rows: object[], filename: string): Reply {
  return wantsCsv(item.meta.query) ? csv(toCsv(rows), filename) : json(200, value);
}

/**
 * The distinct ids a `distinct_id` / `person_id` filter allows: null = no restriction, [] = nothing matches.
 * A person id is its numeric id (merged-away ids are followed to the surviving person) or its uuid.
 */
function allowedDistinctIds(rt: WorkerRuntime, team: number, q: ListQuery): string[] | null {
  let ids: string[] | null = q.distinctId === null ? null : [q.distinctId];
  if (q.personId !== null) {
    const raw = q.personId.trim();
    let person;
    if (/^\d+$/.test(raw)) person = rt.persons.resolve(team, Number(raw));
    else if (isUuid(raw)) person = rt.persons.personByUuid(team, raw.toLowerCase());
    else throw Errors.validation('person_id', 'invalid_input', 'person_id must be a numeric person id or a person uuid.');
    const owned = person?.distinct_ids ?? [];
    ids = ids === null ? owned : ids.filter((d) => owned.includes(d));
  }
  return ids;
}

/**
 * How many bytes of stored properties and element chains one shard reads for one page: a page of large events
 * stops there (and `next` continues after its last row), so no `limit` makes an answer's size unbounded.
 */
const PAGE_BYTES = 16 * 1024 * 1024;

/**
 * `next`: the same request with the cursor moved past the last row of the page — `before=<its timestamp>` when
 * newest first, `after=…` when oldest first — and `offset` dropped; null when nothing follows. When the last row
 * shares its timestamp with the row after it (or the row after it is unknown, the page having stopped at its byte
 * budget), a strict bound at that timestamp could skip the rest of the tie, so the bound moves 1 ms past it and
 * `offset` counts the tied rows already returned.
 */
function nextUrl(item: TaskItem, q: ListQuery, rows: EventRow[], truncated: boolean): string | null {
  const end = Math.min(q.offset + q.limit, rows.length);
  if (end <= q.offset || (rows.length <= end && !truncated)) return null;
  const last = rows[end - 1]!;
  const param = q.ascending ? 'after' : 'before';
  const following = rows[end];
  if (following !== undefined && following.ts !== last.ts) return urlWith(item.meta, { [param]: last.timestamp, offset: null });
  let tied = 0;
  for (let i = 0; i < end; i++) if (rows[i]!.ts === last.ts) tied++;
  const bound = new Date(last.ts + (q.ascending ? -1 : 1)).toISOString();
  return urlWith(item.meta, { [param]: bound, offset: String(tied) });
}

export const listEvents: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const now = item.meta.now;
  const q = parseListQuery(item.meta.query, now, rt.meta.cohortsOf(team));
  await settled(rt);
  const { rows, truncated } = await scanEverywhere(rt, {
    team, after: q.after, before: q.before, event: q.event, distinctIds: allowedDistinctIds(rt, team, q),
    ascending: q.ascending, take: q.offset + q.limit + 1, maxBytes: PAGE_BYTES, filter: q.filter,
    cohorts: usesCohorts(q.filter) ? rt.meta.cohortsOf(team) : [], where: q.where, now,
  });
  if (truncated && rows.length <= q.offset) {
    throw Errors.validation('offset', 'invalid_input', 'offset reaches past what one page may read of these events; page with the next link (before/after).');
  }
  const page = rows.slice(q.offset, q.offset + q.limit);
  const persons = new PersonResolver(rt.persons, team);
  const next = nextUrl(item, q, rows, truncated);
  if (q.select !== null) return selectAnswer(item, q.select, page, next !== null, persons);
  if (q.csv) {
    // CSV has no body field for the next page: it travels as a Link header (RFC 8288), like paged CSV APIs do.
    const reply = csv(toCsv(page.map((r) => serializeEvent(r, persons))), 'events.csv');
    if (next !== null) reply.headers = { ...reply.headers, Link: `<${next}>; rel="next"` };
    return reply;
  }
  // JSON text built per event, the stored properties spliced in unparsed (serializeEventJson).
  return jsonText(200, `{"next":${JSON.stringify(next)},"results":[${page.map((r) => serializeEventJson(r, persons)).join(',')}]}`);
};

/** `select` answers PostHog's experimental shape: `{columns, types, results: [[...]], hasMore}`. */
function selectAnswer(item: TaskItem, columns: Column[], page: EventRow[], hasMore: boolean, persons: PersonResolver): Reply {
  const results = page.map((r) => {
    const source = {
      ...r,
      properties: () => parseProperties(r.properties_json),
      personUuid: () => persons.of(r.person_id)?.uuid ?? r.person_uuid,
    };
    return columns.map((c) => columnValue(c, source));
  });
  const rows = results.map((values) => Object.fromEntries(columns.map((c, i) => [c.label, values[i]])));
  return answer(item, { columns: columns.map((c) => c.label), types: columns.map(typeOf), results, hasMore }, rows, 'events.csv');
}

export const retrieveEvent: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const id = item.params.id ?? '';
  if (!isUuid(id)) throw Errors.validation(null, 'invalid', 'Invalid UUID');
  wantsCsv(item.meta.query);
  await settled(rt);
  const row = await getEverywhere(rt, team, id.toLowerCase());
  if (!row) throw Errors.notFound(`No events exist for event UUID ${id}`);
  const view = serializeEvent(row, new PersonResolver(rt.persons, team));
  return answer(item, view, [view], 'event.csv');
};

/** `event_name`: one name, or a JSON list of names. */
function eventNamesOf(raw: string | undefined): string[] | null {
  if (raw === undefined || raw === '') return null;
  if (raw.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed) && parsed.every((n) => typeof n === 'string')) return parsed.length > 0 ? parsed : null;
    } catch {
      /* a name that happens to start with "[" */
    }
  }
  return [raw];
}

/**
 * `GET /events/values/?key=…[&value=…][&event_name=…]`: `key=custom_event` lists the project's event names that
 * do not start with `$` (from the event definitions, all time, by name); any other key lists distinct values of
 * that event property seen in the last 7 days, most recent first, at most 10, optionally only values containing
 * `value` (case-insensitive) and only events named `event_name`. No key → `[]`.
 */
export const eventValues: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const query = item.meta.query;
  wantsCsv(query);
  const key = query.key;
  const needle = query.value ? query.value.toLowerCase() : null;
  let names: string[];
  if (key === undefined || key === '') names = [];
  else if (key === 'custom_event') {
    await settled(rt);
    rt.meta.env.resetReadTxn();
    names = [];
    for (const { value: def } of rt.meta.eventDefinitions.getRange({ start: [team, ''], end: [team + 1, ''] })) {
      if (!def.name.startsWith('$') && (needle === null || def.name.toLowerCase().includes(needle))) names.push(def.name);
    }
  } else {
    await settled(rt);
    names = await valuesEverywhere(rt, {
      team, key, needle, eventNames: eventNamesOf(query.event_name), after: item.meta.now - VALUES_WINDOW_MS,
      limit: VALUES_LIMIT, maxScan: VALUES_MAX_SCAN,
    });
  }
  const results = names.map((name) => ({ name }));
  return answer(item, results, results, 'values.csv');
};
