/**
 * Events gathered by ClickHouse for a sequence analysis (funnels, paths, correlation): rows of (person uuid, ms,
 * step bits, …) turned into the collected-events columns the local engine's own fold reads
 * (src/worker/analytics/sequences.ts), so both executors share one definition of each analysis.
 *
 * The rows come back in parts of at most QUILL_CLICKHOUSE_GATHER_ROWS rows, each part a disjoint set of persons (by a hash of the
 * person's uuid), folded as it arrives: the fold is per person, so it does not matter which part a person is in,
 * and Quill holds one part's rows at a time whatever the number of events.
 */
import type { PrintedClickHouse } from '../../domain/hogql/clickhouse-printer.js';
import { selectEachOnClickHouse, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { AnsweredLocally } from './executor-choice.js';
import { forEachPerson, groupByPerson, type Events, type PersonEvents } from './sequences.js';

/**
 * Parts at most: each reads the events again, so past it (a person with more events than a part holds, or more
 * events than reading them this way makes sense for) the local engine answers.
 */
export const GATHERED_PARTS_MAX = 256;
/** A part is aimed at this share of the bound, so that uneven persons rarely push one over it. */
const PART_FILL = 0.7;

/**
 * Runs `printed` (its first column the person's uuid as text) and hands every person's events, regrouped and in
 * time order, to `each`: in one part when the rows fit the bound, else in as many parts as the rows' count asks
 * for (a part that still overflows is split in two). Returns the uuid of each person by the number the fold saw
 * (`uuids[pid - 1]`: persons are numbered by uuid within a part, the parts one after another), how many parts
 * the rows came in and how many bytes they took.
 */
export async function foldGatheredRows(
  rt: WorkerRuntime, printed: PrintedClickHouse, columns: RowColumns, each: (person: PersonEvents) => void,
): Promise<{ uuids: string[]; parts: number; bytesReceived: number }> {
  // Rows of one part at most (QUILL_CLICKHOUSE_GATHER_ROWS).
  const rowsMax = rt.config.clickhouseGatherRows;
  const uuids: string[] = [];
  let folded = 0;
  let bytesReceived = 0;
  const foldPart = async (parts: number, part: number): Promise<void> => {
    const { sql, params } = parts === 1 ? printed : partOf(printed, parts, part);
    // Each row becomes a few numbers as it arrives (about 25 bytes an event): the part's rows are never held as JSON.
    const gathered = new RowEventsBuilder(columns);
    try {
      bytesReceived += (await selectEachOnClickHouse(rt, sql, params, rowsMax, (row) => gathered.add(row))).bytes;
    } catch (error) {
      if (!(error instanceof AnsweredLocally) || parts * 2 > GATHERED_PARTS_MAX) throw error;
      if (parts > 1) {
        // Persons whose hash modulo `parts` is `part` are those whose hash modulo 2·parts is `part` or `part + parts`.
        await foldPart(parts * 2, part);
        return foldPart(parts * 2, part + parts);
      }
      const total = await countRows(rt, printed);
      const needed = Math.max(2, Math.ceil(total / (rowsMax * PART_FILL)));
      if (needed > GATHERED_PARTS_MAX) throw new AnsweredLocally(`${total.toLocaleString('en')} rows to bring back from ClickHouse, more than ${GATHERED_PARTS_MAX} parts of ${rowsMax.toLocaleString('en')}`);
      for (let k = 0; k < needed; k++) await foldPart(needed, k);
      return;
    }
    const events = gathered.done(uuids.length);
    for (const uuid of events.uuids) uuids.push(uuid);
    await forEachPerson(groupByPerson(events), () => true, each);
    folded++;
  };
  await foldPart(1, 0);
  return { uuids, parts: folded, bytesReceived };
}

/** The rows of `printed` whose person's hash modulo `parts` is `part`. */
function partOf(printed: PrintedClickHouse, parts: number, part: number): PrintedClickHouse {
  return {
    ...printed,
    sql: `SELECT * FROM (${printed.sql}) AS gathered WHERE cityHash64(gathered.c0) % {gather_parts:UInt32} = {gather_part:UInt32}`,
    params: { ...printed.params, gather_parts: String(parts), gather_part: String(part) },
  };
}

async function countRows(rt: WorkerRuntime, printed: PrintedClickHouse): Promise<number> {
  const { data } = await selectOnClickHouse(rt, `SELECT count() FROM (${printed.sql}) AS gathered`, printed.params);
  return Number(data[0]?.[0] ?? 0);
}

/** How a row of ClickHouse's answer carries an event's value and name (absent: the events carry none). */
export interface RowColumns {
  /** The value's text (breakdown value, path item), null for none. */
  value?: (row: readonly unknown[]) => string | null;
  name?: (row: readonly unknown[]) => string;
}

/** Collected events, and the uuid of each person by the number given to it (`uuids[pid - 1 - firstPid]`). */
export type RowEvents = Events & { uuids: string[] };

/**
 * Rows (person, ms, mask, ...) as collected events, as the local engine's collect leaves them, so that the same
 * regrouping per person (groupByPerson: time order, ties in the order the rows came) and the same sliced walk
 * (forEachPerson) fold them. Persons are numbered in the order of their uuids (the sums need no uuid; what reads
 * persons looks them up in `uuids`); rows of no person are dropped. Values and names are interned as the local
 * engine's tables are.
 */
export function eventsOfRows(rows: readonly unknown[][], columns: RowColumns = {}, firstPid = 0): RowEvents {
  const builder = new RowEventsBuilder(columns, rows.length);
  for (const row of rows) builder.add(row);
  return builder.done(firstPid);
}

/** eventsOfRows one row at a time, for rows that arrive as a stream; the columns grow as they fill. */
export class RowEventsBuilder {
  private readonly events: RowEvents;
  private readonly pids = new Map<string, number>();
  private readonly valueIds = new Map<string, number>();
  private readonly nameIds = new Map<string, number>();

  constructor(private readonly columns: RowColumns = {}, capacity = 65_536) {
    const n = Math.max(1, capacity);
    this.events = {
      n: 0, pid: new Uint32Array(n), ts: new Float64Array(n), mask: new Uint32Array(n), value: new Int32Array(n), values: [], name: new Int32Array(n).fill(-1), names: [], uuids: [],
    };
  }

  add(row: readonly unknown[]): void {
    const events = this.events;
    const person = String(row[0] ?? '');
    // Events of no person (none in Quill's export, but a row without one must not become a person).
    if (person === '' || person === NO_PERSON) return;
    let pid = this.pids.get(person);
    if (pid === undefined) this.pids.set(person, (pid = events.uuids.push(person)));
    if (events.n === events.pid.length) this.grow();
    const k = events.n++;
    events.pid[k] = pid;
    events.ts[k] = Number(row[1]);
    events.mask[k] = Number(row[2]) >>> 0;
    const value = this.columns.value?.(row) ?? null;
    events.value[k] = value === null ? -1 : interned(this.valueIds, events.values, value);
    if (this.columns.name) events.name[k] = interned(this.nameIds, events.names, this.columns.name(row));
  }

  /** The events, persons numbered by uuid from `firstPid + 1`. */
  done(firstPid = 0): RowEvents {
    numberByUuid(this.events, firstPid);
    return this.events;
  }

  private grow(): void {
    const e = this.events;
    const size = e.pid.length * 2;
    const copy = <A extends Uint32Array | Float64Array | Int32Array>(a: A, make: (n: number) => A): A => {
      const out = make(size);
      out.set(a);
      return out;
    };
    e.pid = copy(e.pid, (n) => new Uint32Array(n));
    e.ts = copy(e.ts, (n) => new Float64Array(n));
    e.mask = copy(e.mask, (n) => new Uint32Array(n));
    e.value = copy(e.value, (n) => new Int32Array(n));
    e.name = copy(e.name, (n) => new Int32Array(n).fill(-1));
  }
}

/**
 * Renumbers the persons in the order of their uuids, from `firstPid + 1`. ClickHouse sends the rows in no set order,
 * and the fold's sums over persons (conversion times, floating point) must add up in the same order for the same
 * events every time.
 */
function numberByUuid(events: RowEvents, firstPid: number): void {
  const byUuid = events.uuids.map((uuid, i) => ({ uuid, pid: i + 1 })).sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const renumbered = new Uint32Array(byUuid.length + 1);
  byUuid.forEach((p, i) => (renumbered[p.pid] = firstPid + i + 1));
  for (let k = 0; k < events.n; k++) events.pid[k] = renumbered[events.pid[k]!]!;
  events.uuids = byUuid.map((p) => p.uuid);
}

function interned(ids: Map<string, number>, list: string[], text: string): number {
  let id = ids.get(text);
  if (id === undefined) ids.set(text, (id = list.push(text) - 1));
  return id;
}

const NO_PERSON = '00000000-0000-0000-0000-000000000000';

