/**
 * The recordings list's `events` and `properties` filters (src/domain/recordings/list-query.ts): which of the
 * candidate sessions have, for every filter, an event carrying the session's `$session_id` with that name and
 * those properties. The events are read through the events list's own scan (every worker's shards, the same
 * property filter semantics), restricted to the candidates' distinct ids and time span, so the cost follows the
 * sessions being listed, not the project's traffic.
 */
import type { SessionEventFilter } from '../../domain/recordings/list-query.js';
import type { SessionMetadata } from '../../domain/recordings/metadata.js';
import { Errors } from '../../protocol/errors.js';
import type { WorkerRuntime } from '../runtime.js';
import { parsePropertyFilter, usesCohorts } from './events/property-filter.js';
import { scanEverywhere } from './events/scatter.js';

/** Events are stamped by the client's clock: a minute either side of the recording. */
const SKEW_MS = 60_000;
/** Rows and bytes one filter may read; past them the answer would be partial, so the request is refused. */
const MAX_ROWS = 500_000;
const MAX_BYTES = 128 * 1024 * 1024;

const HAS_SESSION = { key: '$session_id', operator: 'is_set', value: 'is_set', type: 'event' };

/** The filter's properties and "has a session id" as one property group (a list is AND, a group as it is). */
function groupOf(properties: unknown): unknown {
  const values: unknown[] = [HAS_SESSION];
  if (Array.isArray(properties)) values.push(...properties);
  else if (properties !== null && properties !== undefined) values.push(properties);
  return { type: 'AND', values };
}

function sessionIdOf(propertiesJson: string): string | null {
  const id = (JSON.parse(propertiesJson) as { $session_id?: unknown }).$session_id;
  return typeof id === 'string' ? id : null;
}

/** The candidates that pass every filter (candidates as given when there are none). */
export async function withSessionEvents(rt: WorkerRuntime, team: number, filters: readonly SessionEventFilter[], candidates: SessionMetadata[], now: number): Promise<SessionMetadata[]> {
  if (filters.length === 0 || candidates.length === 0) return filters.length === 0 ? candidates : [];
  const ids = new Set(candidates.map((m) => m.sessionId));
  const distinctIds = [...new Set(candidates.map((m) => m.distinctId))];
  let after = Infinity;
  let before = -Infinity;
  for (const m of candidates) {
    after = Math.min(after, m.startMs - SKEW_MS);
    before = Math.max(before, m.endMs + SKEW_MS);
  }
  const cohorts = rt.meta.cohortsOf(team);
  let passing = ids;
  for (const f of filters) {
    const filter = parsePropertyFilter(JSON.stringify(groupOf(f.properties)), cohorts);
    const { rows, truncated } = await scanEverywhere(rt, {
      team, after, before, event: f.event, distinctIds, ascending: true, take: MAX_ROWS, maxBytes: MAX_BYTES, filter,
      cohorts: usesCohorts(filter) ? cohorts : [], where: [], now,
    });
    if (truncated) throw Errors.validation('events', 'invalid_input', 'Too many events to filter these recordings by; narrow the date range or add a person or duration filter.');
    const found = new Set<string>();
    for (const r of rows) {
      const id = sessionIdOf(r.properties_json);
      if (id !== null && passing.has(id)) found.add(id);
    }
    passing = found;
    if (passing.size === 0) break;
  }
  return candidates.filter((m) => passing.has(m.sessionId));
}
