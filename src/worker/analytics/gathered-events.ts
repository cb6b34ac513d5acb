/**
 * Events gathered by ClickHouse for a sequence analysis (funnels, paths, correlation): rows of (person uuid, ms,
 * step bits, …) turned into the collected-events columns the local engine's own fold reads
 * (src/worker/analytics/sequences.ts), so both executors share one definition of each analysis.
 */
import type { Events } from './sequences.js';

/** Events a sequence analysis brings back from ClickHouse at most (about 150 bytes each once parsed); past it the local engine answers. */
export const GATHERED_ROWS_MAX = 2_000_000;

/** How a row of ClickHouse's answer carries an event's value and name (absent: the events carry none). */
export interface RowColumns {
  /** The value's text (breakdown value, path item), null for none. */
  value?: (row: readonly unknown[]) => string | null;
  name?: (row: readonly unknown[]) => string;
}

/** Collected events, and the uuid of each person by the number given to it (`uuids[pid - 1]`). */
export type RowEvents = Events & { uuids: string[] };

/**
 * Rows (person, ms, mask, ...) as collected events, as the local engine's collect leaves them, so that the same
 * regrouping per person (groupByPerson: time order, ties in the order the rows came) and the same sliced walk
 * (forEachPerson) fold them. Persons are numbered in the order of their uuids (the sums need no uuid; what reads
 * persons looks them up in `uuids`); rows of no person are dropped. Values and names are interned as the local
 * engine's tables are.
 */
export function eventsOfRows(rows: readonly unknown[][], columns: RowColumns = {}): RowEvents {
  const n = rows.length;
  const events: RowEvents = {
    n: 0, pid: new Uint32Array(n), ts: new Float64Array(n), mask: new Uint32Array(n), value: new Int32Array(n), values: [], name: new Int32Array(n).fill(-1), names: [], uuids: [],
  };
  const pids = new Map<string, number>();
  const valueIds = new Map<string, number>();
  const nameIds = new Map<string, number>();
  for (const row of rows) {
    const person = String(row[0] ?? '');
    // Events of no person (none in Quill's export, but a row without one must not become a person).
    if (person === '' || person === NO_PERSON) continue;
    let pid = pids.get(person);
    if (pid === undefined) pids.set(person, (pid = events.uuids.push(person)));
    const k = events.n++;
    events.pid[k] = pid;
    events.ts[k] = Number(row[1]);
    events.mask[k] = Number(row[2]) >>> 0;
    const value = columns.value?.(row) ?? null;
    events.value[k] = value === null ? -1 : interned(valueIds, events.values, value);
    if (columns.name) events.name[k] = interned(nameIds, events.names, columns.name(row));
  }
  numberByUuid(events);
  return events;
}

/**
 * Renumbers the persons in the order of their uuids. ClickHouse sends the rows in no set order, and the fold's sums
 * over persons (conversion times, floating point) must add up in the same order for the same events every time.
 */
function numberByUuid(events: RowEvents): void {
  const byUuid = events.uuids.map((uuid, i) => ({ uuid, pid: i + 1 })).sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const renumbered = new Uint32Array(byUuid.length + 1);
  byUuid.forEach((p, i) => (renumbered[p.pid] = i + 1));
  for (let k = 0; k < events.n; k++) events.pid[k] = renumbered[events.pid[k]!]!;
  events.uuids = byUuid.map((p) => p.uuid);
}

function interned(ids: Map<string, number>, list: string[], text: string): number {
  let id = ids.get(text);
  if (id === undefined) ids.set(text, (id = list.push(text) - 1));
  return id;
}

const NO_PERSON = '00000000-0000-0000-0000-000000000000';

